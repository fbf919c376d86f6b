// The one exception ncpkit throws for bad input: a problem file, a scene file, a field of
// either, an options struct, or arguments that break an API's contract (wrong sizes, NaN).
#ifndef NCPKIT_SOLVERS_BASE_INPUT_ERROR_H_
#define NCPKIT_SOLVERS_BASE_INPUT_ERROR_H_

#include <stdexcept>
#include <string>

namespace ncpkit {

// what() reads "<source>:<line>: <field>: <message>", each part present when known: a file
// (or another named source), a 1-based line of it, a field path ("bodies[2].mass",
// "options.h"), and what is wrong with the measured value. It is an std::invalid_argument, so
// code that catches those catches it too.
class InputError : public std::invalid_argument {
 public:
  // A message that already says where (or has no place to name).
  explicit InputError(const std::string& message);
  // `line` <= 0 and empty `source` / `field` are left out of what().
  InputError(const std::string& source, int line, const std::string& field,
             const std::string& message);

  const std::string& source() const { return source_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string source_;
  int line_ = 0;
  std::string field_;
};

// The check every options struct gets where an object is built from it (a stepper, or a
// solver through the registry): throws InputError("<what> options: <why>") if
// options.IsValid() fails. A solver run directly on invalid options reports InvalidInput
// instead (status.h, AcceptOptions), since its Solve() returns a summary.
template <class Options>
void RequireValidOptions(const Options& options, const std::string& what) {
  std::string why;
  if (!options.IsValid(&why)) throw InputError("", 0, what + " options", why);
}

namespace internal {

// A number as messages quote it (an ostream's default format: up to 6 significant digits).
std::string NumberText(double x);

// The checks of an options struct's IsValid(): the message of the first one that fails,
// "<name> = <value> <rule>"; nothing is formatted while every check passes (a solver checks
// its options on every Solve).
class OptionChecks {
 public:
  OptionChecks& Require(bool ok, const char* name, double value, const char* rule) {
    if (!ok && message_.empty())
      message_ = std::string(name) + " = " + NumberText(value) + " " + rule;
    return *this;
  }
  // A rule on a field that is not a number: `message` says which and why.
  OptionChecks& Require(bool ok, const std::string& message) {
    if (!ok && message_.empty()) message_ = message;
    return *this;
  }
  bool Done(std::string* why) const {
    if (why) *why = message_;
    return message_.empty();
  }

 private:
  std::string message_;
};

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_BASE_INPUT_ERROR_H_
