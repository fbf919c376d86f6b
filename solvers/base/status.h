// Outcome types shared by every solver in ncpkit.
#ifndef NCPKIT_SOLVERS_BASE_STATUS_H_
#define NCPKIT_SOLVERS_BASE_STATUS_H_

#include <limits>
#include <string>
#include <utility>

namespace ncpkit {

// One status enum for every solver. Solver-specific facts (Lemke's ray termination, pivot
// counts, PGS sweeps) are fields of the solver's Summary, not new values here.
enum class Status {
  NotRun,            // The solver has not been called.
  Converged,         // Natural residual <= tolerance.
  MaxIterations,     // Iteration / pivot cap reached before convergence.
  Failed,            // The method stopped without a solution (e.g. Lemke ray termination,
                     // a stalled line search); the message says why.
  NumericalFailure,  // Singular factorization, non-finite iterate.
  InvalidInput,      // Invalid options, or a problem this solver cannot accept.
};

std::string ToString(Status status);

// What a solver carries from one Solve to the next that changes its next results (FB Newton's
// kept factorization, FischerBurmeisterNewton::Options::reuse_factorization), as an opaque
// copy: a time-stepper's snapshot keeps it, so that steps replayed from the snapshot repeat
// bit for bit.
struct SolverMemory {
  virtual ~SolverMemory() = default;
};

// Fields every solver reports, so that solvers can be compared on the same problem.
// Each solver's Summary derives from it with its own fields and FullReport().
struct SolverSummary {
  SolverSummary() = default;
  SolverSummary(const SolverSummary&) = default;
  SolverSummary(SolverSummary&&) = default;
  SolverSummary& operator=(const SolverSummary&) = default;
  SolverSummary& operator=(SolverSummary&&) = default;
  virtual ~SolverSummary() = default;

  std::string solver;  // Name of the solver that produced this summary.
  Status status = Status::NotRun;
  std::string message;  // Why the solver stopped, with the measured numbers.
  int iterations = 0;   // Pivots (Lemke), sweeps (PGS), Newton iterations.
  double natural_residual = std::numeric_limits<double>::infinity();  // natural_residual().
  double tolerance = 0.0;                                             // Requested tolerance.
  double wall_time_seconds = 0.0;
  int factorizations = 0;  // Matrix factorizations performed (0 for PGS).

  bool IsSolved() const { return status == Status::Converged; }
  // One line: solver, status, iterations, residual, time.
  std::string BriefReport() const;
  // "name: value" lines of every field, the solver's own ones included.
  virtual std::string FullReport() const;
};

// The options check every solver starts with: if options.IsValid() fails, sets the summary's
// status to InvalidInput with "invalid options: <why>" and returns false.
template <class Options>
bool AcceptOptions(const Options& options, SolverSummary* summary) {
  std::string why;
  if (options.IsValid(&why)) return true;
  summary->status = Status::InvalidInput;
  summary->message = "invalid options: " + why;
  return false;
}

// Sets *summary to a fresh Summary's fields but keeps the storage of its solver name and
// message: a solver that keeps its summary from one solve to the next then writes the new
// message without allocating (a time-stepper's steady state allocates nothing).
template <class Summary>
void ResetSummaryKeepingStorage(Summary* summary) {
  std::string solver = std::move(summary->solver);
  std::string message = std::move(summary->message);
  *summary = Summary();
  solver.clear();
  message.clear();
  summary->solver = std::move(solver);
  summary->message = std::move(message);
}

// Formats the common fields as "name: value" lines, for FullReport() implementations.
std::string CommonFullReport(const SolverSummary& summary);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_BASE_STATUS_H_
