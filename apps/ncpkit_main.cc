// The ncpkit command-line program.
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "readers/text_scanner.h"

namespace {

int RunCommand(std::vector<std::string> args) {
  if (args.empty()) return ncpkit::RunDemoCommand({}, std::cout);
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "solve") return ncpkit::RunSolveCommand(args, std::cout);
  if (command == "simulate") return ncpkit::RunSimulateCommand(args, std::cout);
  if (command == "compare") return ncpkit::RunCompareCommand(args, std::cout);
  if (command == "lcp-demo") return ncpkit::RunLcpDemoCommand(args, std::cout);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << ncpkit::UsageText();
    return 0;
  }
  throw ncpkit::UsageError("unknown command '" + ncpkit::internal::Printable(command) + "'\n" +
                           ncpkit::UsageText());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = RunCommand(std::vector<std::string>(argv + 1, argv + argc));
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "ncpkit: cannot write the standard output (write error)\n";
      return 2;
    }
    return status;
  } catch (const ncpkit::UsageError& e) {
    std::cerr << "ncpkit: " << e.what() << "\n";
  } catch (const ncpkit::InputError& e) {
    std::cerr << "ncpkit: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "ncpkit: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "ncpkit: out of memory (is the problem size in the file right?)\n";
  } catch (const std::exception& e) {
    std::cerr << "ncpkit: error: " << e.what() << "\n";
  }
  return 2;
}
