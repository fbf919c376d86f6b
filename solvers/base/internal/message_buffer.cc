#include "solvers/base/internal/message_buffer.h"

#include <cmath>
#include <cstdint>

namespace ncpkit::internal {
namespace {

// 10^k for k = 0..22, each exact in a double.
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kLargestExactPower = 22;

// |value| 10^k by one correctly rounded operation, or false when 10^|k| is not exact.
bool ScaleByPowerOfTen(double value, int k, double* scaled) {
  if (k > kLargestExactPower || k < -kLargestExactPower) return false;
  *scaled = k >= 0 ? value * kPowersOfTen[k] : value / kPowersOfTen[-k];
  return true;
}

// |value| rounded to six significant digits: *digits in [100000, 999999] and *exponent with
// |value| ~ digits 10^(exponent - 5); false where one rounding of |value| 10^k cannot decide
// the digits (within 1e-9 of a half, far beyond its error of 1.2e-10) or 10^k is not exact.
bool SixDigits(double value, int64_t* digits, int* exponent) {
  const double magnitude = std::fabs(value);
  int x = static_cast<int>(std::floor(std::log10(magnitude)));
  double scaled = 0.0;
  // log10 may land one off next to a power of ten: at most one correction either way.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!ScaleByPowerOfTen(magnitude, 5 - x, &scaled)) return false;
    if (std::fabs(scaled - 99999.5) <= 1e-9 || std::fabs(scaled - 999999.5) <= 1e-9) return false;
    if (scaled < 99999.5) {
      --x;
    } else if (scaled >= 999999.5) {
      ++x;
    } else {
      break;
    }
  }
  if (!(scaled >= 99999.5 && scaled < 999999.5)) return false;
  const double whole = std::floor(scaled);
  const double fraction = scaled - whole;  // exact: both below 2^20, the same binade or less
  if (std::fabs(fraction - 0.5) <= 1e-9) return false;
  *digits = static_cast<int64_t>(whole) + (fraction > 0.5 ? 1 : 0);
  *exponent = x;
  if (*digits < 100000) return false;  // 99999.5 <= scaled < 100000 rounds to 10^5: x is right
  if (*digits == 1000000) {
    *digits = 100000;
    ++*exponent;
  }
  return true;
}

// The six digits as %g writes them at `out` (room for 13 characters), trailing zeros of the
// fraction dropped; returns the end.
char* WriteSixDigits(bool negative, int64_t digits, int exponent, char* out) {
  char d[6];
  for (int i = 5; i >= 0; --i, digits /= 10) d[i] = static_cast<char>('0' + digits % 10);
  int last = 5;  // the last significant digit written
  while (last > 0 && d[last] == '0') --last;
  if (negative) *out++ = '-';
  if (exponent >= -4 && exponent < 6) {
    if (exponent < 0) {
      *out++ = '0';
      *out++ = '.';
      for (int i = -1; i > exponent; --i) *out++ = '0';
      for (int i = 0; i <= last; ++i) *out++ = d[i];
      return out;
    }
    for (int i = 0; i <= exponent; ++i) *out++ = d[i];
    if (last > exponent) {
      *out++ = '.';
      for (int i = exponent + 1; i <= last; ++i) *out++ = d[i];
    }
    return out;
  }
  *out++ = d[0];
  if (last > 0) {
    *out++ = '.';
    for (int i = 1; i <= last; ++i) *out++ = d[i];
  }
  *out++ = 'e';
  *out++ = exponent < 0 ? '-' : '+';
  const int e = exponent < 0 ? -exponent : exponent;
  if (e >= 100) *out++ = static_cast<char>('0' + e / 100);
  *out++ = static_cast<char>('0' + (e / 10) % 10);
  *out++ = static_cast<char>('0' + e % 10);
  return out;
}

}  // namespace

std::to_chars_result FormatGeneral6(char* first, char* last, double value) {
  int64_t digits = 0;
  int exponent = 0;
  constexpr std::ptrdiff_t kLongest = 13;  // "-1.23456e-100"
  if (last - first >= kLongest && std::isfinite(value) && value != 0.0 &&
      SixDigits(value, &digits, &exponent)) {
    return {WriteSixDigits(std::signbit(value), digits, exponent, first), std::errc()};
  }
  return std::to_chars(first, last, value, std::chars_format::general, 6);
}

}  // namespace ncpkit::internal
