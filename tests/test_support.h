// Helpers shared by the tests: where the shared data lives, temporary files.
#ifndef NCPKIT_TESTS_TEST_SUPPORT_H_
#define NCPKIT_TESTS_TEST_SUPPORT_H_

#include <cstdio>
#include <fstream>
#include <string>

namespace ncpkit::testing {

inline std::string SharedData(const std::string& relative) {
  return std::string(NCPKIT_SHARED_DIR) + "/data/" + relative;
}

// A file with the given contents in the temporary directory, removed on destruction.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& name, const std::string& contents)
      : path_(std::string(P_tmpdir) + "/ncpkit_test_" + name) {
    std::ofstream(path_) << contents;
  }
  ~TemporaryFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_TEST_SUPPORT_H_
