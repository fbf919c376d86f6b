// The "auto" sequence for frictional contact problems, reporting which attempt solved it.
#ifndef NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_
#define NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_

#include <Eigen/Dense>
#include <chrono>
#include <string>

#include "solvers/base/status.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"
#include "solvers/friction/velocity_gauss_seidel.h"

namespace ncpkit {

// Each attempt starts from the best point so far (the smallest FCLib error) and the first to
// reach the tolerance ends the sequence. Which attempts run is decided by what the earlier ones
// measured: a sweep method's rate stops it where it would not reach the tolerance within its
// budget, and the next kind of method takes over. A problem in the global form (M, H; the
// explicit stepper's) is first swept in that form:
//   0. nsgs-velocity, up to 2000 sweeps, stopped early in the same way (rate_window 50): its
//      manifold and resting-island blocks solve walls and stacks that the local-form solvers
//      below do not; then the problem is reduced to the local form (W, q) for the rest, from
//      the sweeps' point where they stopped further than 10 tolerances from the solution, else
//      again from the start point (near the tolerance they stall at the rounding of the
//      velocities they keep; their point is returned if nothing does better).
//   1. nsgs-anderson (natural order, Anderson acceleration of memory 5), up to 1000 sweeps
//      (cheap sweeps; most problems with well-posed contacts end here), stopped early when its
//      rate over the last 50 sweeps would not reach the tolerance within them
//      (NonsmoothGaussSeidel::Options::rate_window, anderson_memory);
//   2. fc-newton-fb, up to 50 iterations from the best point; for a problem posed in the
//      global form, up to 200 from the start point unless the best point is within 10 times
//      the tolerance (a polish: NSGS stalled near it, at its rounding). From the points NSGS
//      leaves far from the solution on the explicit stepper's pile islands (contacts in the
//      middle of trading impulses) the Newton method needs more iterations than from the
//      start and fails more often, while on FCLib's BoxesStack and RockPile it does better
//      from them (both measured, docs/benchmarks.md); where it fails after an early stop,
//      nsgs-anderson again for the rest of its 1000 sweeps;
//   3. fc-proximal, up to 100 proximal steps (redundant contacts, a singular W);
//   4. nsgs-shuffled, up to 10000 sweeps (a random order breaks the natural one's cycles),
//      stopped early when its rate over the last 1000 would not reach the tolerance within them;
//   5. fc-proximal-fb, up to 1000 proximal steps;
//   6. nsgs-shuffled, up to 100000 sweeps.
// Where every attempt fails from a warm start (Options::warm_start and a nonzero *r), the
// sequence runs once more from r = 0 (the attempts after "again from r = 0" in the path): a
// time-stepper's warm start can lead every attempt to the same point short of the tolerance
// where r = 0 does not (boxes pushed into a row, mixed shapes dropped into a bin; measured in
// docs/reliability.md).
// *r receives the solution, or the best point of all attempts.
class FrictionAuto {
 public:
  struct Options {
    double tolerance = 1e-8;          // FCLib error; > 0
    double time_limit_seconds = 0.0;  // for the whole sequence; 0: none; >= 0
    bool warm_start = false;          // start from *r when it has the problem's size
    bool IsValid(std::string* why) const;
  };
  struct Summary : FrictionSolverSummary {
    std::string path;       // every attempt in order, e.g. "nsgs: max_iterations (...); ..."
    std::string solved_by;  // the attempt that converged, empty if none did
    int attempts = 0;
    std::string FullReport() const override;
  };

  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }
  // The summary stays valid until the next Solve. It is kept with the attempts' solvers and
  // vectors, so that a solve no larger than the last, solved by the same attempt, allocates
  // nothing.
  const Summary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  // The same for the global form: attempt 0, then the sequence on problem.Reduce()'s local form
  // (the FCLib error of both forms is the local form's).
  const Summary& Solve(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);
  // Threads for attempt 0's sweeps (VelocityGaussSeidel::SetParallelRunner).
  void SetParallelRunner(const ParallelRunner* runner) { velocity_.SetParallelRunner(runner); }

 private:
  // Resets the summary, checks the options and sets *r and start_ to the start point (the warm
  // start if usable, else zero); false for invalid options (the summary says why).
  bool Begin(int size, Eigen::VectorXd* r);
  // Attempts 1-6 from start_ (and best_ with its error best_error), on the clock since `start`.
  void RunSequence(const FrictionContactProblem& problem, double best_error,
                   std::chrono::steady_clock::time_point start, Eigen::VectorXd* r);
  // The sequence from start_.
  void RunFromStart(const FrictionContactProblem& problem,
                    std::chrono::steady_clock::time_point start, Eigen::VectorXd* r);
  // Where the problem is not solved and `error` (of `point`) is below the summary's: *r = point,
  // and the summary says so.
  void KeepIfBetter(const FrictionContactProblem& problem, const Eigen::VectorXd& point,
                    double error, std::chrono::steady_clock::time_point start, Eigen::VectorXd* r);
  // Where the sequence failed from a warm start: the sequence again from r = 0, keeping the
  // better of the two points.
  void RetryCold(const FrictionContactProblem& problem, std::chrono::steady_clock::time_point start,
                 Eigen::VectorXd* r);
  // Adds an attempt's figures and its line of the path to the summary.
  void RecordAttempt(const char* name, const FrictionSolverSummary& step);
  // The summary's status, message and description of the point *r (u_ its velocities).
  void Finish(const FrictionContactProblem& problem, bool solved,
              std::chrono::steady_clock::time_point start, const Eigen::VectorXd* r);

  Options options_;
  Summary summary_;
  Eigen::VectorXd best_, x_, u_, start_, velocity_best_, kept_;
  bool newton_from_start_ = false;  // attempt 2's start and budget (above)
  FrictionContactProblem reduced_;  // a global problem's local form
  // The global problem being solved (during Solve(GlobalFrictionContactProblem)): the Newton and
  // proximal attempts take their directions through it (FrictionNewton::Solve(global, local, r)).
  const GlobalFrictionContactProblem* global_ = nullptr;
  NonsmoothGaussSeidel nsgs_;
  VelocityGaussSeidel velocity_;
  FrictionNewton newton_;
  FrictionProximalPoint proximal_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_
