#include "solvers/text_scanner.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ncpkit::internal {

TextScanner::TextScanner(const std::string& path) : name_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path + ": cannot open file");
  std::ostringstream contents;
  contents << in.rdbuf();
  text_ = contents.str();
}

TextScanner::TextScanner(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {}

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
  std::ostringstream os;
  os << name_ << ":" << line_ << ": " << message;
  throw ParseError(os.str());
}

int64_t TextScanner::ReadInt(const std::string& what, int64_t min, int64_t max) {
  const std::string token = NextToken();
  if (token.empty()) Fail("expected " + what + " (an integer), found end of file");
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(token.c_str(), &end, 10);
  if (*end != '\0' || errno != 0) Fail("expected " + what + " (an integer), found '" + token + "'");
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
  if (*end != '\0') Fail("expected " + what + " (a number), found '" + token + "'");
  return value;
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
