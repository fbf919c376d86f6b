// Helpers shared by the tests: where the shared data lives, temporary files.
#ifndef NCPKIT_TESTS_TEST_SUPPORT_H_
#define NCPKIT_TESTS_TEST_SUPPORT_H_

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace ncpkit::testing {

inline std::string SharedData(const std::string& relative) {
  return std::string(NCPKIT_SHARED_DIR) + "/data/" + relative;
}

// A path in the temporary directory that no other test process uses: ctest runs the test files
// as separate processes at once, and two of them writing one fixed path read each other's files.
inline std::string TemporaryPath(const std::string& name) {
  return std::string(P_tmpdir) + "/ncpkit_test_" + std::to_string(getpid()) + "_" + name;
}

// A file with the given contents in the temporary directory, removed on destruction.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& name, const std::string& contents) : path_(TemporaryPath(name)) {
    std::ofstream(path_) << contents;
  }
  ~TemporaryFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The ncpkit program run as a user would: its exit status and stdout + stderr together (or
// stdout alone, with `stderr_too` false).
struct Run {
  int status = -1;
  std::string output;
};

inline Run RunNcpkit(const std::string& args, bool stderr_too = true) {
  const std::string command =
      std::string(NCPKIT_BINARY) + " " + args + (stderr_too ? " 2>&1" : " 2>/dev/null");
  Run run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    run.output.append(buffer.data(), n);
  }
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return run;
}

// A file of this repository's tests/data/.
inline std::string TestData(const std::string& relative) {
  return std::string(NCPKIT_SOURCE_DIR) + "/tests/data/" + relative;
}

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_TEST_SUPPORT_H_
