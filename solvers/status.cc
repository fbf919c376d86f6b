#include "solvers/status.h"

#include <cstdio>

namespace ncpkit {

std::string ToString(Status status) {
  switch (status) {
    case Status::NotRun:
      return "not_run";
    case Status::Converged:
      return "converged";
    case Status::MaxIterations:
      return "max_iterations";
    case Status::Failed:
      return "failed";
    case Status::NumericalFailure:
      return "numerical_failure";
    case Status::InvalidInput:
      return "invalid_input";
  }
  return "unknown";
}

std::string SolverSummary::BriefReport() const {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), "%s: %s, %d iterations, natural residual %.3e, %.1f us",
                solver.c_str(), ToString(status).c_str(), iterations, natural_residual,
                wall_time_seconds * 1e6);
  std::string report = buffer;
  if (!message.empty()) report += " (" + message + ")";
  return report;
}

std::string CommonFullReport(const SolverSummary& summary) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "solver            %s\n"
                "status            %s\n"
                "message           %s\n"
                "iterations        %d\n"
                "natural residual  %.6e (tolerance %.1e)\n"
                "factorizations    %d\n"
                "wall time         %.3f ms\n",
                summary.solver.c_str(), ToString(summary.status).c_str(), summary.message.c_str(),
                summary.iterations, summary.natural_residual, summary.tolerance,
                summary.factorizations, summary.wall_time_seconds * 1e3);
  return buffer;
}

std::string SolverSummary::FullReport() const { return CommonFullReport(*this); }

}  // namespace ncpkit
