// A solver's message built in a fixed buffer by std::to_chars: the numbers read as printf's %g
// writes them, at a quarter of its cost. A step of a time-stepper solves one small problem per
// island and each solve writes its message, so formatting must cost less than the solve.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_MESSAGE_BUFFER_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_MESSAGE_BUFFER_H_

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <string>

namespace ncpkit::internal {

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
    Put(std::to_chars(text_ + size_, text_ + kCapacity, value, std::chars_format::general, 6));
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
