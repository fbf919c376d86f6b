// Every input kept in tests/fuzz/regressions/<target>/ (crashers found by fuzzing, and the
// hostile inputs of the issue that made readers crash) runs through its fuzz target: the
// target must return (reject or process the input) without a crash or a finding.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fuzz/fuzz_targets.h"

namespace ncpkit {
namespace {

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("kept fuzz inputs run through their targets") {
  const std::filesystem::path root =
      std::filesystem::path(NCPKIT_SOURCE_DIR) / "tests/fuzz/regressions";
  int inputs = 0;
  for (const fuzz::NamedTarget& target : fuzz::Targets()) {
    const std::filesystem::path folder = root / target.name;
    if (!std::filesystem::is_directory(folder)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (!entry.is_regular_file()) continue;
      CAPTURE(entry.path().string());
      const std::string data = ReadAll(entry.path());
      target.run(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      ++inputs;
    }
  }
  MESSAGE("fuzz regression inputs run: " << inputs);
  CHECK(inputs > 0);
}

}  // namespace
}  // namespace ncpkit
