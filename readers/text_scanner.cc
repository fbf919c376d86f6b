#include "readers/text_scanner.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ncpkit::internal {
namespace {

bool IsNumber(const std::string& token) {
  if (token.empty()) return false;
  char* end = nullptr;
  std::strtod(token.c_str(), &end);
  return *end == '\0';
}

// Throws unless `text` is text: no NUL and no control byte other than white space.
void CheckText(const std::string& name, const std::string& text) {
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') ++line;
    if (c < 0x20 && !std::isspace(c)) {
      char byte[8];
      std::snprintf(byte, sizeof(byte), "0x%02x", c);
      throw InputError(name, line, "",
                       std::string("binary data (byte ") + byte + "), expected a text file");
    }
  }
}

}  // namespace

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ReadTextFile(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError(path, 0, "", std::string("cannot open file (") + std::strerror(errno) + ")");
  }
  if (S_ISDIR(info.st_mode)) throw InputError(path, 0, "", "is a directory, expected a file");
  if (!S_ISREG(info.st_mode)) throw InputError(path, 0, "", "is not a regular file");
  if (info.st_size > kMaxProblemFileBytes) {
    throw InputError(path, 0, "",
                     "" + std::to_string(info.st_size) + " bytes is above the limit of " +
                         std::to_string(kMaxProblemFileBytes) + " bytes for a problem file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  std::string text(static_cast<size_t>(info.st_size), '\0');
  in.read(text.data(), info.st_size);
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) throw InputError(path, 0, "", "read error");
  CheckText(path, text);
  return text;
}

std::string Printable(const std::string& text, size_t max_length) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_length; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > max_length) out += "...";
  return out;
}

TextScanner::TextScanner(const std::string& path) : name_(path), text_(ReadTextFile(path)) {}

TextScanner::TextScanner(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  CheckText(name_, text_);
}

void TextScanner::SkipSpace() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
}

bool TextScanner::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

std::string TextScanner::NextToken() {
  SkipSpace();
  const size_t begin = pos_;
  while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  return text_.substr(begin, pos_ - begin);
}

bool TextScanner::NextLine(std::string* line) {
  if (pos_ >= text_.size()) return false;
  const size_t end = text_.find('\n', pos_);
  if (end == std::string::npos) {
    *line = text_.substr(pos_);
    pos_ = text_.size();
  } else {
    *line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

void TextScanner::Fail(const std::string& message) const {
  throw InputError(name_, line_, "", message);
}

int64_t TextScanner::ReadInt(const std::string& what, int64_t min, int64_t max) {
  const std::string token = NextToken();
  if (token.empty()) Fail("expected " + what + " (an integer), found end of file");
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(token.c_str(), &end, 10);
  if (*end != '\0' || errno != 0)
    Fail("expected " + what + " (an integer), found '" + Printable(token) + "'");
  if (value < min || value > max) {
    std::ostringstream os;
    os << "expected " << what << " in [" << min << ", " << max << "], found " << value;
    Fail(os.str());
  }
  return value;
}

double TextScanner::ReadDouble(const std::string& what) {
  const std::string token = NextToken();
  if (token.empty()) Fail("expected " + what + " (a number), found end of file");
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (*end != '\0') Fail("expected " + what + " (a number), found '" + Printable(token) + "'");
  return value;
}

bool TextScanner::NextNumberOrRestore() {
  const size_t begin = pos_;
  const int line = line_;
  if (IsNumber(NextToken())) return true;
  pos_ = begin;
  line_ = line;
  return false;
}

void TextScanner::ExpectEndOrRemark(const std::string& last) {
  if (AtEnd()) return;
  const size_t begin = pos_;
  const int line = line_;
  const std::string token = NextToken();
  if (IsNumber(token)) {
    line_ = line;
    Fail("unexpected number '" + Printable(token) + "' after " + last +
         ": the file holds more values than the problem it declares");
  }
  pos_ = begin;  // a remark: ignored, as Siconos' readers do
}

void TextScanner::RequireTokens(int64_t count, const std::string& what) const {
  // Every token takes at least two bytes (a character and a separator), except the last.
  const int64_t remaining = static_cast<int64_t>(text_.size() - pos_);
  if (count < 0 || count > (remaining + 1) / 2) {
    std::ostringstream os;
    os << what << " needs " << count << " values but only " << remaining
       << " bytes remain in the file";
    Fail(os.str());
  }
}

}  // namespace ncpkit::internal
