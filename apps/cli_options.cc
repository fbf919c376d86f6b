#include "apps/cli_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "readers/text_scanner.h"

namespace ncpkit {

CommandLine CommandLine::Parse(const std::vector<std::string>& args,
                               const std::set<std::string>& value_options,
                               const std::set<std::string>& flag_options) {
  CommandLine line;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      std::string name = arg.substr(2), value;
      const size_t equals = name.find('=');
      const bool inline_value = equals != std::string::npos;
      if (inline_value) {
        value = name.substr(equals + 1);
        name = name.substr(0, equals);
      }
      if (value_options.count(name)) {
        if (!inline_value) {
          if (i + 1 >= args.size()) throw UsageError("option --" + name + " needs a value");
          value = args[++i];
        }
        line.values[name] = value;
      } else if (flag_options.count(name) && !inline_value) {
        line.flags.insert(name);
      } else {
        throw UsageError("unknown option '" + internal::Printable(arg) + "'");
      }
    } else {
      line.positional.push_back(arg);
    }
  }
  return line;
}

std::string CommandLine::Value(const std::string& name, const std::string& fallback) const {
  const auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

double CommandLine::PositiveDouble(const std::string& name, double fallback) const {
  const auto it = values.find(name);
  if (it == values.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno != 0 || !std::isfinite(value) || !(value > 0)) {
    throw UsageError("--" + name + " needs a positive number, got '" + it->second + "'");
  }
  return value;
}

int64_t CommandLine::PositiveInt64(const std::string& name, int64_t fallback) const {
  const auto it = values.find(name);
  if (it == values.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0 || value <= 0) {
    throw UsageError("--" + name + " needs a positive integer, got '" + it->second + "'");
  }
  return value;
}

int CommandLine::PositiveInt(const std::string& name, int fallback) const {
  const int64_t value = PositiveInt64(name, fallback);
  if (value > std::numeric_limits<int>::max()) {
    throw UsageError("--" + name + " needs a positive integer up to " +
                     std::to_string(std::numeric_limits<int>::max()) + ", got '" + Value(name, "") +
                     "'");
  }
  return static_cast<int>(value);
}

// Write errors (a full disk, /dev/full) are errors of the run, not silent truncation.
void CloseOrThrow(std::ofstream* file, const std::string& path) {
  file->flush();
  if (!*file) throw std::runtime_error("cannot write " + path + " (write error)");
  file->close();
  if (!*file) throw std::runtime_error("cannot write " + path + " (write error on close)");
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return items;
}

}  // namespace ncpkit
