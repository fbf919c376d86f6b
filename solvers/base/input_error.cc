#include "solvers/base/input_error.h"

#include <sstream>

namespace ncpkit {
namespace {

std::string Located(const std::string& source, int line, const std::string& field,
                    const std::string& message) {
  std::string text;
  if (!source.empty()) text += source + (line > 0 ? ":" + std::to_string(line) : "") + ": ";
  if (!field.empty()) text += field + ": ";
  return text + message;
}

}  // namespace

InputError::InputError(const std::string& message) : std::invalid_argument(message) {}

InputError::InputError(const std::string& source, int line, const std::string& field,
                       const std::string& message)
    : std::invalid_argument(Located(source, line, field, message)),
      source_(source),
      line_(line),
      field_(field) {}

namespace internal {

std::string NumberText(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace internal
}  // namespace ncpkit
