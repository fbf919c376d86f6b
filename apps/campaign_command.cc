// ncpkit campaign ...: the campaign driver is Python's ncpkit.campaign (docs/campaigns.md); this
// command starts it on the interpreter the Python package was built for, with the package on
// PYTHONPATH and this program as the one its runs call (NCPKIT_PROGRAM, unless already set).
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/version_info.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

#ifdef NCPKIT_CAMPAIGN_PYTHON
std::string ThisProgram() {
  char path[PATH_MAX];
  if (realpath("/proc/self/exe", path) == nullptr) {
    throw InputError(std::string("cannot find this program's path: ") + std::strerror(errno));
  }
  return path;
}

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }
#endif

}  // namespace

int RunVersionCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (args.size() > 1 || (args.size() == 1 && args[0] != "--json")) {
    throw UsageError("version takes no arguments but --json\n" + UsageText());
  }
  if (args.empty()) {
    out << "ncpkit " << kVersion << " (commit " << kCommit << ")\n";
  } else {
    out << "{\"version\": \"" << kVersion << "\", \"commit\": \"" << kCommit << "\"}\n";
  }
  return 0;
}

int RunCampaignCommand(const std::vector<std::string>& args, std::ostream& out) {
#ifdef NCPKIT_CAMPAIGN_PYTHON
  const std::string program = ThisProgram();
  // A program in the build tree takes the build tree's package; an installed one the installed,
  // found from the program's folder (NCPKIT_CAMPAIGN_INSTALL_DIR is relative to it unless
  // absolute).
  const std::string build_dir = NCPKIT_CAMPAIGN_BUILD_DIR;
  const std::string installed = NCPKIT_CAMPAIGN_INSTALL_DIR;
  std::string package_dir = build_dir + "/python";
  if (program.rfind(build_dir + "/", 0) != 0) {
    package_dir = installed.rfind('/', 0) == 0
                      ? installed
                      : program.substr(0, program.rfind('/')) + "/" + installed;
  }
  if (const char* given = std::getenv("NCPKIT_PYTHONPATH")) package_dir = given;
  if (!Exists(package_dir + "/ncpkit/campaign.py")) {
    throw InputError("campaign: the Python package ncpkit is not in " + package_dir +
                     " (build or install it; NCPKIT_PYTHONPATH names another folder)");
  }
  std::string python_path = package_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
    python_path += std::string(":") + old;
  }
  setenv("PYTHONPATH", python_path.c_str(), 1);
  setenv("NCPKIT_PROGRAM", program.c_str(), 0);
  const std::string python = NCPKIT_CAMPAIGN_PYTHON;
  std::vector<std::string> words = {python, "-m", "ncpkit.campaign"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  out.flush();
  execv(python.c_str(), argv.data());
  throw InputError("campaign: cannot start " + python + ": " + std::strerror(errno));
#else
  (void)args;
  (void)out;
  throw InputError(
      "campaign needs the Python package, which this build left out (NCPKIT_PYTHON=ON with "
      "python3-dev and pybind11-dev: tools/install-deps.sh)");
#endif
}

}  // namespace ncpkit
