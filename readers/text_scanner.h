// Whitespace-token scanner for the text problem formats, with positions for error messages.
#ifndef NCPKIT_READERS_TEXT_SCANNER_H_
#define NCPKIT_READERS_TEXT_SCANNER_H_

#include <cstdint>
#include <string>

#include "solvers/base/input_error.h"

namespace ncpkit {

namespace internal {

// Largest problem file the readers accept (bytes); a larger one is refused before it is read.
constexpr int64_t kMaxProblemFileBytes = int64_t{1} << 31;
// Largest matrix dimension (and block count) a problem file may declare.
constexpr int64_t kMaxDim = 50'000'000;

// The file name of `path` without its folders (a problem's name).
std::string BaseName(const std::string& path);

// Reads a whole text file for a reader: throws InputError if it cannot be opened, is not a
// regular file (a directory, a device), is larger than kMaxProblemFileBytes, or holds binary
// data (a NUL or another control byte than white space).
std::string ReadTextFile(const std::string& path);

// `text` as it may appear in a message: at most `max_length` bytes, bytes outside printable
// ASCII written as \xNN.
std::string Printable(const std::string& text, size_t max_length = 40);

class TextScanner {
 public:
  // Reads the whole file with ReadTextFile().
  explicit TextScanner(const std::string& path);
  // Scans text already in memory; `name` is used in messages. Throws InputError on binary data.
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

  // Consumes the next token if it is a number and returns true; otherwise leaves it.
  bool NextNumberOrRestore();
  // After the last value of a problem: the rest of the input must be empty or a remark whose
  // first token is not a number (Siconos files carry such remarks). Otherwise fails naming
  // `last` (what was read last) and the token found.
  void ExpectEndOrRemark(const std::string& last);

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

#endif  // NCPKIT_READERS_TEXT_SCANNER_H_
