// Minimal command-line parsing for the ncpkit program.
#ifndef NCPKIT_APPS_CLI_OPTIONS_H_
#define NCPKIT_APPS_CLI_OPTIONS_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace ncpkit {

// A usage error: the program prints the message and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parsed arguments: positional ones, "--name value" options and "--flag" switches.
struct CommandLine {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;

  // Parses args; `value_options` take a value, `flag_options` do not; anything else starting
  // with "--" is a UsageError.
  static CommandLine Parse(const std::vector<std::string>& args,
                           const std::set<std::string>& value_options,
                           const std::set<std::string>& flag_options);

  bool Has(const std::string& name) const { return values.count(name) || flags.count(name); }
  std::string Value(const std::string& name, const std::string& fallback) const;
  double PositiveDouble(const std::string& name, double fallback) const;
  int PositiveInt(const std::string& name, int fallback) const;
  int64_t PositiveInt64(const std::string& name, int64_t fallback) const;
};

// Flushes and closes a written file; a write error (a full disk, /dev/full) throws
// std::runtime_error naming the path, instead of leaving a silently truncated file.
void CloseOrThrow(std::ofstream* file, const std::string& path);
// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace ncpkit

#endif  // NCPKIT_APPS_CLI_OPTIONS_H_
