// Tables and JSON lines for solver summaries.
#ifndef NCPKIT_APPS_REPORT_H_
#define NCPKIT_APPS_REPORT_H_

#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/base/status.h"

namespace ncpkit {

struct SolveRecord {
  std::string problem;
  int n = 0;
  SolverSummary summary;
  // Frictional contact problems: the Siconos-normalized error beside the FCLib one (the
  // summary's natural_residual); NaN for the other kinds.
  double siconos_error = std::numeric_limits<double>::quiet_NaN();
};

// One JSON object on one line with problem, n, solver, status, iterations,
// natural_residual, time_us, factorizations and message (and siconos_error for frictional
// contact problems).
std::string ToJson(const SolveRecord& record);
// A JSON string (quoted, escaped; invalid UTF-8 replaced) and a JSON number (null when not
// finite: JSON has no inf or NaN), shared by every --json output.
std::string JsonString(const std::string& text);
std::string JsonNumber(double value);
// What a --json run prints on standard output when it stops on an error (the message also goes
// to standard error): {"error": message, "exit_status": status}.
std::string JsonError(const std::string& message, int exit_status);
// A fixed-width comparison table, one row per record.
void PrintTable(const std::vector<SolveRecord>& records, std::ostream& out);

}  // namespace ncpkit

#endif  // NCPKIT_APPS_REPORT_H_
