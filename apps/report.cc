#include "apps/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ncpkit {
std::string JsonString(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

std::string JsonError(const std::string& message, int exit_status) {
  return "{\"error\": " + JsonString(message) +
         ", \"exit_status\": " + std::to_string(exit_status) + "}";
}

std::string ToJson(const SolveRecord& record) {
  const SolverSummary& s = record.summary;
  std::ostringstream os;
  os << "{\"problem\": " << JsonString(record.problem) << ", \"n\": " << record.n
     << ", \"solver\": " << JsonString(s.solver)
     << ", \"status\": " << JsonString(ToString(s.status)) << ", \"iterations\": " << s.iterations
     << ", \"natural_residual\": " << JsonNumber(s.natural_residual)
     << ", \"time_us\": " << JsonNumber(s.wall_time_seconds * 1e6)
     << ", \"factorizations\": " << s.factorizations;
  if (!std::isnan(record.siconos_error)) {
    os << ", \"siconos_error\": " << JsonNumber(record.siconos_error);
  }
  os << ", \"message\": " << JsonString(s.message) << "}";
  return os.str();
}

void PrintTable(const std::vector<SolveRecord>& records, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof(line), "%-34s %6s  %-15s %-18s %8s %12s %12s  %s\n", "problem", "n",
                "solver", "status", "iters", "residual", "time_us", "note");
  out << line;
  for (const SolveRecord& r : records) {
    const SolverSummary& s = r.summary;
    std::snprintf(line, sizeof(line), "%-34s %6d  %-15s %-18s %8d %12.3e %12.1f  %s\n",
                  r.problem.c_str(), r.n, s.solver.c_str(), ToString(s.status).c_str(),
                  s.iterations, s.natural_residual, s.wall_time_seconds * 1e6,
                  s.IsSolved() ? "" : s.message.c_str());
    out << line;
  }
}

}  // namespace ncpkit
