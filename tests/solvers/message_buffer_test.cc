// The solvers' message numbers: FormatGeneral6 writes what std::to_chars writes with
// chars_format::general and six digits (printf's %g), character for character, on its fast path
// and where it hands over.
#include "solvers/base/internal/message_buffer.h"

#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ncpkit::internal {
namespace {

std::string Reference(double value) {
  char text[64];
  const std::to_chars_result result =
      std::to_chars(text, text + sizeof text, value, std::chars_format::general, 6);
  return std::string(text, result.ptr);
}

std::string Fast(double value) {
  char text[64];
  const std::to_chars_result result = FormatGeneral6(text, text + sizeof text, value);
  REQUIRE(result.ec == std::errc());
  return std::string(text, result.ptr);
}

// Where the digits are decided: next to powers of ten, next to the halves between six-digit
// numbers (the rounding ties and their neighbouring doubles), and the ends of the fixed notation.
std::vector<double> EdgeValues() {
  std::vector<double> values = {1.0,        0.1,         1e-4,     1e-5,    999999.0,  999999.5,
                                9.999995,   9.9999949,   0.5,      2.5,     1234565.0, 1234575.0,
                                123456.5,   1e5,         1e6,      1e-17,   1e27,      1e-18,
                                1e28,       3e-300,      1.5e+300, 0.0,     -0.0,      1e-6,
                                0.00012345, 0.000123455, 99999.95, 99999.5, 100000.49, 9.5e-5};
  for (int e = -20; e <= 28; ++e) {
    const double p = std::pow(10.0, e);
    for (const double m : {1.0, 9.999995, 9.999994999, 9.9999950001, 1.000005, 1.234565}) {
      const double v = m * p;
      values.push_back(v);
      values.push_back(std::nextafter(v, 0.0));
      values.push_back(std::nextafter(v, 2.0 * v));
    }
  }
  return values;
}

TEST_CASE("FormatGeneral6 writes what std::to_chars writes as %g with six digits") {
  SUBCASE("specials") {
    for (const double v :
         {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN(), 0.0, -0.0,
          std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()}) {
      CHECK(Fast(v) == Reference(v));
    }
  }
  SUBCASE("next to powers of ten and to rounding ties") {
    for (const double v : EdgeValues()) {
      INFO("value " << v);
      CHECK(Fast(v) == Reference(v));
      CHECK(Fast(-v) == Reference(-v));
    }
  }
  SUBCASE("random magnitudes from 1e-25 to 1e30, random digits") {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> exponent(-25.0, 30.0);
    std::uniform_int_distribution<int> six(100000, 999999);
    int mismatches = 0;
    for (int i = 0; i < 200000; ++i) {
      // Half the values exactly at a six-digit half or its neighbours, half anywhere.
      double v = std::pow(10.0, exponent(rng));
      if (i % 2 == 1) {
        const int e = static_cast<int>(std::floor(std::log10(v)));
        v = (six(rng) + 0.5) * std::pow(10.0, e - 5);
        if (i % 4 == 1) v = std::nextafter(v, (i % 8 == 1) ? 0.0 : 2.0 * v);
      }
      if (Fast(v) != Reference(v)) {
        ++mismatches;
        if (mismatches < 5) FAIL_CHECK("value " << v << ": " << Fast(v) << " vs " << Reference(v));
      }
    }
    CHECK(mismatches == 0);
  }
  SUBCASE("a buffer too small for the number") {
    char text[4];
    CHECK(FormatGeneral6(text, text + sizeof text, 1.23456e-7).ec == std::errc::value_too_large);
  }
}

TEST_CASE("MessageBuffer writes text, numbers and integers in order") {
  MessageBuffer message;
  message.Text("FCLib error ").Number(3.25e-9).Text(" <= tolerance ").Number(1e-6);
  message.Text(" after ").Integer(12).Text(" sweeps");
  std::string out = "kept";
  message.AssignTo(&out);
  CHECK(out == "FCLib error 3.25e-09 <= tolerance 1e-06 after 12 sweeps");
}

}  // namespace
}  // namespace ncpkit::internal
