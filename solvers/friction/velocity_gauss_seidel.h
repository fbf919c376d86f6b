// Block Gauss-Seidel over contacts for the frictional contact problem in its global form
// (global_friction_problem.h), keeping the velocities v = M^-1 (H r + f) instead of the contact
// velocities u = W r + q: the way multibody codes (Moreau and Jean's NSCD; the engines'
// sequential impulses) sweep their contacts, without ever forming W.
//
// Per contact a, with B_a = M^-1 H_a (computed once per solve, a few nonzeros per column):
//   u_a = H_a^T v + w_a;  solve the 3 x 3 problem of W_aa = H_a^T B_a exactly for the reaction
//   r_a* with the others fixed (single_contact.h); relax r_a <- r_a + omega (r_a* - r_a);
//   v += B_a (change of r_a).
// A sweep costs O(nnz(H)); W's off-diagonal blocks, O(contacts per body^2) each, never appear.
// The iterates are those of NSGS (nonsmooth_gauss_seidel.h) on the local form, up to rounding.
// After sweeps 1, 2, 3, 5, 8, 12, ... (half as many again each time, at most 20 apart; 20 apart
// or the last once the rate of the last two checks cannot reach the tolerance within
// max_sweeps), and after the last, u = H^T v + w is formed and the FCLib error of the local form
// checked (the measure every friction solver reports; a check costs a third of a sweep); v is
// recomputed from r before convergence is declared. The best point checked is returned.
#ifndef NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_
#define NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"

namespace ncpkit {

class VelocityGaussSeidel {
 public:
  struct Options {
    // Sweeps before MaxIterations. Default 10000; >= 1.
    int max_sweeps = 10000;
    // Stop when the FCLib error <= tolerance. Default 1e-8; > 0.
    double tolerance = 1e-8;
    // Relaxation omega of each contact's update. Default 1; in (0, 2). Above 1 the relaxed
    // reaction is projected back onto the cone.
    double relaxation = 1.0;
    // Start from *r if it has the problem's size (projected onto the cones). Default false:
    // from r = 0.
    bool warm_start = false;
    // Stop with MaxIterations once this much wall time has passed. Default 0: no limit; >= 0.
    double time_limit_seconds = 0.0;
    bool IsValid(std::string* why) const;
  };

  using Summary = FrictionSolverSummary;

  VelocityGaussSeidel() = default;
  explicit VelocityGaussSeidel(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the problem; *r receives the best point found. Allocates nothing once its
  // workspace has grown to the problem's size.
  // The summary stays valid until the next Solve.
  const Summary& Solve(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);

 private:
  void Prepare(const GlobalFrictionContactProblem& problem);
  void SetDiagonalBlock(int contact, const Eigen::Matrix3d& W);
  void MakeReady(const GlobalFrictionContactProblem& problem, int contact);
  void ContactVelocities(const GlobalFrictionContactProblem& problem);
  template <bool kCompact>
  void Sweep(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);
  template <bool kCompact>
  Eigen::Vector3d LocalVelocity(const GlobalFrictionContactProblem& problem, int a,
                                const double* v) const;
  template <bool kCompact>
  void ScatterChange(const GlobalFrictionContactProblem& problem, int a,
                     const Eigen::Vector3d& change, double* v) const;
  Eigen::Vector3d LocalSolve(int a, const Eigen::Vector3d& q_local, double mu,
                             const Eigen::Vector3d& old);

  Options options_;
  // The compact layout (6-row blocks, at most two a contact): per contact H_0, H_1, B_0, B_1
  // (6 x 3 each, column-major) and the offsets of their blocks in v (-1: none).
  static constexpr int kRecord = 72;
  bool compact_ = false;
  std::vector<double> records_;
  std::vector<int> slots_;
  std::vector<char> ready_;         // B_0, B_1 and W_aa formed
  std::vector<double> scalar_top_;  // per block: s where M_k^-1 = diag(s I, K), else 0
  // Otherwise, per piece of H: B_p = M_k^-1 H_p (b x 3, column-major, at the piece's offset).
  std::vector<double> products_;
  std::vector<int> product_offset_;
  // Per contact: W_aa, its inverse, whether it has one, the last sliding direction.
  std::vector<Eigen::Matrix3d> blocks_, inverses_;
  std::vector<char> invertible_;
  std::vector<Eigen::Vector2d> directions_;
  Eigen::VectorXd v_, u_, best_;
  Summary summary_;  // kept, so that its message is rewritten in place
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_
