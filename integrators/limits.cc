#include "integrators/limits.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "solvers/base/input_error.h"

namespace ncpkit {

int64_t CountSteps(double duration, double h, int64_t max_steps) {
  std::ostringstream os;
  if (!(duration > 0.0 && std::isfinite(duration)) || !(h > 0.0 && std::isfinite(h))) {
    os << "duration " << duration << " s and step h " << h << " s must be positive and finite";
    throw InputError(os.str());
  }
  // In double: the quotient may exceed every integer type.
  const double steps = std::ceil(duration / h - 1e-9);
  if (!(steps <= static_cast<double>(max_steps))) {
    os.precision(17);
    os << "duration " << duration << " s at h = " << h << " s takes " << steps
       << " steps, above the cap of " << max_steps
       << " (raise it explicitly with --max-steps N, or shorten the run)";
    throw InputError(os.str());
  }
  return std::max<int64_t>(1, static_cast<int64_t>(steps));
}

}  // namespace ncpkit
