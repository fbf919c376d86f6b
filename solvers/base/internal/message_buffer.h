// A solver's message built in a fixed buffer: the numbers read as printf's %g writes them. A
// step of a time-stepper solves one small problem per island and each solve writes its message,
// so formatting must cost less than the solve: std::to_chars takes a quarter of printf's time,
// and FormatGeneral6 a third of std::to_chars' instructions where one product decides the six
// digits (about 320 against 940 a number on the explicit sliding cube, callgrind).
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_MESSAGE_BUFFER_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_MESSAGE_BUFFER_H_

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <string>

namespace ncpkit::internal {

// std::to_chars(first, last, value, std::chars_format::general, 6), character for character:
// the six digits from |value| 10^k by one exact power of ten where that product decides them,
// else std::to_chars itself (0, inf, nan, |value| outside about [1e-17, 1e27], and values
// within 1e-9 of a rounding tie).
std::to_chars_result FormatGeneral6(char* first, char* last, double value);

class MessageBuffer {
 public:
  // Text beyond the buffer is cut off.
  MessageBuffer& Text(const char* text) {
    const size_t length = std::min(std::strlen(text), kCapacity - size_);
    std::memcpy(text_ + size_, text, length);
    size_ += length;
    return *this;
  }
  // As %g: six significant digits, "inf", "nan".
  MessageBuffer& Number(double value) {
    Put(FormatGeneral6(text_ + size_, text_ + kCapacity, value));
    return *this;
  }
  MessageBuffer& Integer(long long value) {
    Put(std::to_chars(text_ + size_, text_ + kCapacity, value));
    return *this;
  }
  // Into `out`, keeping its storage when it is large enough.
  void AssignTo(std::string* out) const { out->assign(text_, size_); }
  void AppendTo(std::string* out) const { out->append(text_, size_); }

 private:
  static constexpr size_t kCapacity = 192;
  void Put(std::to_chars_result result) {
    if (result.ec == std::errc()) size_ = static_cast<size_t>(result.ptr - text_);
  }
  char text_[kCapacity];
  size_t size_ = 0;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_MESSAGE_BUFFER_H_
