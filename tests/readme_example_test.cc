// The README's library example is examples/consumer/main.cc, which the tests build and run
// (tests/CMakeLists.txt: path_example, exit 0 when every solver converges) and CI builds
// against the installed package. This test keeps the README's copy identical to it.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace ncpkit {
namespace {

std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t a = text.find(begin);
  const size_t b = text.find(end, a);
  if (a == std::string::npos || b == std::string::npos) return "";
  return text.substr(a + begin.size(), b - a - begin.size());
}

TEST_CASE("the README shows exactly this example") {
  std::ifstream readme(NCPKIT_SOURCE_DIR "/README.md");
  std::ifstream example(NCPKIT_SOURCE_DIR "/examples/consumer/main.cc");
  std::stringstream r, s;
  r << readme.rdbuf();
  s << example.rdbuf();
  const std::string code = Between(s.str(), "// BEGIN README EXAMPLE\n", "// END README EXAMPLE");
  REQUIRE(!code.empty());
  CHECK(r.str().find("```cpp\n" + code + "```") != std::string::npos);
  // Under 40 lines.
  CHECK(std::count(code.begin(), code.end(), '\n') < 40);
}

}  // namespace
}  // namespace ncpkit
