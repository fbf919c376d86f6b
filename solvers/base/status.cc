#include "solvers/base/status.h"

#include <cstdio>

#include "solvers/base/internal/enum_names.h"

namespace ncpkit {

std::string ToString(Status status) {
  static constexpr internal::EnumName<Status> kNames[] = {
      {Status::NotRun, "not_run"},
      {Status::Converged, "converged"},
      {Status::MaxIterations, "max_iterations"},
      {Status::Failed, "failed"},
      {Status::NumericalFailure, "numerical_failure"},
      {Status::InvalidInput, "invalid_input"}};
  return internal::NameIn(kNames, status);
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
