// Whitespace-token scanner for the text problem formats, with positions for error messages.
#ifndef NCPKIT_SOLVERS_TEXT_SCANNER_H_
#define NCPKIT_SOLVERS_TEXT_SCANNER_H_

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ncpkit {

// Thrown by the file readers: the message names the file, the line and what was expected.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace internal {

class TextScanner {
 public:
  // Reads the whole file; throws ParseError if it cannot be opened.
  explicit TextScanner(const std::string& path);
  // Scans text already in memory; `name` is used in messages.
  TextScanner(std::string name, std::string text);

  // Next whitespace-separated token, or empty at end of input.
  std::string NextToken();
  bool AtEnd();
  // Next line (without the newline); false at end of input.
  bool NextLine(std::string* line);

  // Reads an integer in [min, max]; `what` describes it in the error message.
  int64_t ReadInt(const std::string& what, int64_t min, int64_t max);
  // Reads a double (inf / nan spelled as strtod accepts them).
  double ReadDouble(const std::string& what);
  // Throws unless at least `count` more tokens could still be in the input (guards against
  // huge allocations requested by a corrupt size field).
  void RequireTokens(int64_t count, const std::string& what) const;

  [[noreturn]] void Fail(const std::string& message) const;
  int line() const { return line_; }

 private:
  void SkipSpace();
  std::string name_;
  std::string text_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_TEXT_SCANNER_H_
