// Tables and JSON lines for solver summaries.
#ifndef NCPKIT_APPS_REPORT_H_
#define NCPKIT_APPS_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "solvers/status.h"

namespace ncpkit {

struct SolveRecord {
  std::string problem;
  int n = 0;
  SolverSummary summary;
};

// One JSON object on one line with problem, n, solver, status, iterations,
// natural_residual, time_us, factorizations and message.
std::string ToJson(const SolveRecord& record);
// A fixed-width comparison table, one row per record.
void PrintTable(const std::vector<SolveRecord>& records, std::ostream& out);

}  // namespace ncpkit

#endif  // NCPKIT_APPS_REPORT_H_
