// The "auto" sequence for frictional contact problems, reporting which attempt solved it.
#ifndef NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_
#define NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/base/status.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"

namespace ncpkit {

// Each attempt starts from the best point so far (the smallest FCLib error) and the first to
// reach the tolerance ends the sequence:
//   1. nsgs, natural order, up to 1000 sweeps (cheap sweeps; most problems with well-posed
//      contacts end here), stopped early when its rate over the last 50 sweeps would not reach
//      the tolerance within them (NonsmoothGaussSeidel::Options::rate_window);
//   2. fc-newton-fb, up to 50 iterations (stacks, where NSGS crawls), and where it fails after
//      an early stop, nsgs again for the rest of its 1000 sweeps;
//   3. fc-proximal, up to 100 proximal steps (redundant contacts, a singular W);
//   4. nsgs-shuffled, up to 10000 sweeps (a random order breaks the natural one's cycles);
//   5. fc-proximal-fb, up to 1000 proximal steps;
//   6. nsgs-shuffled, up to 100000 sweeps.
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

 private:
  Options options_;
  Summary summary_;
  Eigen::VectorXd best_, x_, u_;
  NonsmoothGaussSeidel nsgs_;
  FrictionNewton newton_;
  FrictionProximalPoint proximal_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_FRICTION_AUTO_H_
