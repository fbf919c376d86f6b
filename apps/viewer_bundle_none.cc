// The viewer's bundled script when the build had no npm: none (ViewerAvailable() is false).
#include <cstddef>

namespace ncpkit {
extern const unsigned char kViewerBundle[] = {0};
extern const std::size_t kViewerBundle_size = 0;
}  // namespace ncpkit
