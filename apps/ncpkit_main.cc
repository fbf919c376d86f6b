// The ncpkit command-line program.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/report.h"
#include "readers/text_scanner.h"

namespace {

int RunCommand(std::vector<std::string> args) {
  if (args.empty()) return ncpkit::RunDemoCommand({}, std::cout);
  const std::string command = args[0];
  args.erase(args.begin());
  // `ncpkit simulate --help` is what people type to see a command's options: the usage text,
  // which gives every command's. (A campaign's options are the Python program's, which answers
  // --help itself.)
  const bool help_asked = std::any_of(
      args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (help_asked && command != "campaign") {
    std::cout << ncpkit::UsageText();
    return 0;
  }
  if (command == "solve") return ncpkit::RunSolveCommand(args, std::cout);
  if (command == "simulate") return ncpkit::RunSimulateCommand(args, std::cout);
  if (command == "view") return ncpkit::RunViewCommand(args, std::cout);
  if (command == "compare") return ncpkit::RunCompareCommand(args, std::cout);
  if (command == "mjcf") return ncpkit::RunMjcfCommand(args, std::cout);
  if (command == "fclib") return ncpkit::RunFclibCommand(args, std::cout);
  if (command == "lcp-demo") return ncpkit::RunLcpDemoCommand(args, std::cout);
  if (command == "solvers") return ncpkit::RunSolversCommand(args, std::cout);
  if (command == "campaign") return ncpkit::RunCampaignCommand(args, std::cout);
  if (command == "version" || command == "--version") {
    return ncpkit::RunVersionCommand(args, std::cout);
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << ncpkit::UsageText();
    return 0;
  }
  throw ncpkit::UsageError("unknown command '" + ncpkit::internal::Printable(command) + "'\n" +
                           ncpkit::UsageText());
}

// The message on standard error; with --json, also as a JSON object on standard output, so
// that a --json run prints valid JSON whatever happens. Returns the exit status, 2.
int Fail(const std::string& message, bool json) {
  std::cerr << "ncpkit: " << message << "\n";
  if (json) std::cout << ncpkit::JsonError(message, 2) << "\n" << std::flush;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  try {
    const int status = RunCommand(args);
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "ncpkit: cannot write the standard output (write error)\n";
      return 2;
    }
    return status;
  } catch (const ncpkit::UsageError& e) {
    return Fail(e.what(), json);
  } catch (const ncpkit::InputError& e) {
    return Fail(e.what(), json);
  } catch (const std::invalid_argument& e) {
    return Fail(e.what(), json);
  } catch (const std::bad_alloc&) {
    // A wrong size in a file, or a problem too large for the solver named (Lemke and the
    // dense variants keep n x n matrices: a 1000-contact pyramid problem needs gigabytes).
    return Fail(
        "out of memory (a size in the input wrong, or a problem too large for the "
        "solver named: Lemke and the dense solvers keep n x n matrices)",
        json);
  } catch (const std::exception& e) {
    return Fail(std::string("error: ") + e.what(), json);
  }
}
