// Block Gauss-Seidel over contacts for the frictional contact problem (NSGS; Jean & Moreau's
// nonsmooth contact dynamics, the reference solver of FCLib's comparisons).
#ifndef NCPKIT_SOLVERS_FRICTION_NONSMOOTH_GAUSS_SEIDEL_H_
#define NCPKIT_SOLVERS_FRICTION_NONSMOOTH_GAUSS_SEIDEL_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/internal/anderson.h"

namespace ncpkit {

// One sweep visits every contact and solves its own 3 x 3 problem exactly, with the reactions of
// the others fixed (single_contact.h: take-off, sticking, or sliding from the roots of a
// quartic), then relaxes r_a <- r_a + omega (r_a* - r_a). u = W r + q is kept up to date by the
// columns of W a contact's change touches, so a sweep costs O(nnz(W)) and the FCLib error
// (friction_problem.h), checked after every sweep, O(n_c); u is recomputed from scratch
// before convergence is declared. The best point seen is returned.
//
// Converges on problems with a symmetric positive definite W and small friction; on stacks and
// redundant contacts (singular W) it may stall, which the summary reports with the error
// reached.
class NonsmoothGaussSeidel {
 public:
  enum class Ordering {
    Natural,    // contacts 0, 1, ..., n_c - 1 every sweep (but see Options::shuffle_on_stall)
    Symmetric,  // forward, then backward on the next sweep
    Shuffled,   // a new random order every sweep (Options::seed)
  };

  struct Options {
    // Sweeps before MaxIterations. Default 10000; >= 1.
    int max_sweeps = 10000;
    // Stop when the FCLib error <= tolerance. Default 1e-8 (the accuracy FCLib's families ask);
    // > 0.
    double tolerance = 1e-8;
    // Relaxation omega of each contact's update. Default 1; in (0, 2). Above 1 the relaxed
    // reaction is projected back onto the cone.
    double relaxation = 1.0;
    Ordering ordering = Ordering::Natural;
    // Plain sweeps in natural order (no Anderson acceleration), once kCycleSweeps sweeps in a
    // row have not lowered the best FCLib error by a thousandth: a new random order every sweep
    // (Options::seed) for the rest of the solve; the summary's message gives the sweep. A fixed
    // order can cycle where the contacts' sliding directions chase each other round it: a cube
    // turned 45 degrees and spinning on a cube, its eight contacts an octagon, stays at FCLib
    // error 1.37e-2 through 10^4 natural sweeps and is solved in 62 with the turn
    // (tests/solvers/fclib_problems_test.cc); FCLib's BoxesStack1 and RockPile_tob1, which
    // natural sweeps leave at 2.6e-6 and 1.3e-4, end at 1.8e-6 and 6.2e-5 (docs/fclib.md).
    // Anderson's sweeps are left as they are: their best error rests for tens of sweeps between
    // restarts of the history, and turning there cost BoxesStack1 its convergence. Default true.
    bool shuffle_on_stall = true;
    // Seed of the shuffled ordering. Default 0.
    unsigned seed = 0;
    // Start from *r if it has the problem's size (projected onto the cones). Default false:
    // from r = 0.
    bool warm_start = false;
    // Stop with MaxIterations once this much wall time has passed. Default 0: no limit; >= 0.
    double time_limit_seconds = 0.0;
    // Every this many sweeps, stop with MaxIterations when the best FCLib error's rate over the
    // last this many sweeps would not reach the tolerance within the sweeps left (a caller with
    // a faster method for slow problems, such as the auto sequence, stops early). Default 0:
    // never; >= 0.
    int rate_window = 0;
    // Anderson acceleration of the sweeps (type II) over this many of the last sweeps: the next
    // sweep starts from the combination of their results whose changes combine to the least,
    // projected onto the cones, instead of from the last result; the history is dropped
    // whenever a sweep changes r more than the one before (a contact changed state, or the
    // combination overshot). On piles, where the sweeps' rate is near 1, it reaches FCLib error
    // 1e-6 in a fraction of the sweeps (docs/fclib.md, docs/benchmarks.md). Default 0: plain
    // sweeps; in [0, 50].
    int anderson_memory = 0;
    bool IsValid(std::string* why) const;
  };

  using Summary = FrictionSolverSummary;
  // Options::shuffle_on_stall's window.
  static constexpr int kCycleSweeps = 50;

  NonsmoothGaussSeidel() = default;
  explicit NonsmoothGaussSeidel(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the problem; *r receives the best point found (contact by contact, [normal,
  // tangent, tangent]).
  // The summary stays valid until the next Solve.
  const Summary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);

 private:
  void PrepareBlocks(const FrictionContactProblem& problem);
  void Sweep(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  // Anderson acceleration after a sweep from `before` to *r: records the sweep in the history
  // and moves *r (and u_) to the next start point.
  void Accelerate(const FrictionContactProblem& problem, const Eigen::VectorXd& before,
                  Eigen::VectorXd* r);

  Options options_;
  // Per contact: the diagonal block, its inverse and whether it has one; the last sliding
  // angle (NaN when the contact did not slide).
  std::vector<Eigen::Matrix3d> blocks_, inverses_;
  std::vector<char> invertible_;
  std::vector<Eigen::Vector2d> directions_;
  std::vector<int> order_;
  Eigen::VectorXd u_, best_;
  // Anderson acceleration: the point before the sweep and the history (up to 50 sweeps, so
  // its small matrices are sized at run time).
  Eigen::VectorXd before_;
  internal::AndersonHistory<Eigen::Dynamic> anderson_;
  Summary summary_;  // kept, so that its message is rewritten in place
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_NONSMOOTH_GAUSS_SEIDEL_H_
