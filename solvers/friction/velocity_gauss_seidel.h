// Block Gauss-Seidel over contacts for the frictional contact problem in its global form
// (global_friction_problem.h), keeping the velocities v = M^-1 (H r + f) instead of the contact
// velocities u = W r + q: the way multibody codes (Moreau and Jean's NSCD; the engines'
// sequential impulses) sweep their contacts, without forming W.
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
// recomputed from r before convergence is declared. The best point checked is returned. The
// start is checked first, from the problem's own rows: one that solves the problem (a resting
// island's warm start) is returned before B or anything else of the sweeps is prepared.
//
// Manifolds (Options::manifolds): a run of 3 to 8 consecutive contacts on the same two blocks
// of rigid bodies (a box face's corners) is solved as one block where it sticks. Contact by
// contact, the corners of a face trade friction impulses that cancel out (W's null space on the
// face: self-equilibrated friction) and a sweep drifts through them slowly. Where the contacts'
// last local solves stuck, the manifold's velocities u_M are set to zero at once by the change
// of least norm, delta = H_0^T y with (H_0 W_MM H_0^T) y = -H_0 u_M (H_0: the manifold's rows of
// the first block, 6 x 3m; W_MM = H_0^T K H_0 for two rigid bodies, so this is exact); if the
// reactions r + delta lie in the cones they are taken, else the same without the current
// self-equilibrated part of r, else the contacts are solved one by one as before. Blocks are
// tried in the first 30 sweeps of a solve, on manifolds not already within 10 tolerances of
// sticking. The 6 x 6 factorizations are made when a manifold is first tried in a solve, and a
// manifold whose W_MM is not of that form, or whose velocities no impulse can zero (a tilted
// face's gaps), is left to the contact-by-contact solves for the rest of the solve.
//
// Resting islands (Options::stick_islands): sweeps pass a column's normal impulses from box to
// box one sweep at a time, and crawl on turned boxes. Where every contact sticks, the answer is
// one linear solve: the least-norm impulses that zero every contact velocity, r = -W^+ q (any
// impulses that zero them give the same velocities). Tried once a solve, on at most
// kMaxStickContacts contacts, at the first point where every contact presses and nearly every
// one sticks (the warm start, else a check). W is singular wherever a face has four corners;
// its pseudo-inverse comes through the bodies (W = A M^-1 A^T, two Cholesky factorizations of
// A^T A, 6 rows a body) where every body is held in all six directions, else from W formed from
// the records by a complete orthogonal decomposition. Kept only if the problem is then solved
// to the tolerance; else the sweeps go on bit for bit as without it.
#ifndef NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_
#define NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "solvers/base/parallel_runner.h"
#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/friction/internal/anderson.h"
#include "solvers/friction/internal/sweep_parts.h"

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
    // Solve sticking manifolds as one block (top of this file). Default true.
    bool manifolds = true;
    // Once a solve, on problems of at most kMaxStickContacts contacts, at the first point that
    // is not a solution and looks like an island at rest (the warm start, else a check between
    // sweeps; MayStickIsland): the least-norm impulses that make every contact stick
    // (r = -W^+ q; top of this file), taken if they solve the problem. Default true.
    bool stick_islands = true;
    // Once kCycleSweeps sweeps in a row have not lowered the best FCLib error by a thousandth
    // (judged at the checks): backward and forward sweeps in turn for the rest of the solve;
    // the summary's message gives the sweep. A fixed order can cycle where the contacts'
    // sliding directions chase each other round it (NonsmoothGaussSeidel::Options::
    // shuffle_on_stall, whose shuffled order would cost this solver's sweeps their sequential
    // reads). The turn comes after the manifolds' first sweeps, so the turned sweeps solve
    // contact by contact. Default true.
    bool reverse_on_stall = true;
    // At the first check at least this many sweeps after the last such check, stop with
    // MaxIterations when the best FCLib error's rate between them would not reach the tolerance
    // within the sweeps left (the summary gives the sweeps it would need). Default 0: never.
    // >= 0.
    int rate_window = 0;
    // Anderson acceleration of the sweeps (type II, as NonsmoothGaussSeidel::Options::
    // anderson_memory) over this many of the last sweeps: each sweep starts from the
    // combination of the last ones' results whose changes of r combine to the least, projected
    // onto the cones, with v combined alike (v is affine in r). The history is dropped where a
    // sweep changes r more than the one before, and for good once the sweeps turn
    // (reverse_on_stall). Each sweep then goes to the threads alone. Where it was used, v is
    // recomputed from r before convergence is declared. Default 0: plain sweeps; in [0,
    // kMaxAndersonMemory].
    int anderson_memory = 0;
    bool IsValid(std::string* why) const;
  };
  static constexpr int kMaxAndersonMemory = 10;

  using Summary = FrictionSolverSummary;
  // Options::reverse_on_stall's window.
  static constexpr int kCycleSweeps = 50;

  VelocityGaussSeidel() = default;
  explicit VelocityGaussSeidel(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the problem; *r receives the best point found. Allocates nothing once its
  // workspace has grown to the problem's size.
  // The summary stays valid until the next Solve.
  const Summary& Solve(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);

  // Threads for the sweeps of problems of kParallelContacts contacts or more (null: none; it
  // must outlive the solves). Each forward sweep's contacts are split among them so that the
  // sweeps give the one-thread result bit for bit (internal/sweep_parts.h); the solve is
  // otherwise the same. Where the threads had to wait for each other over
  // SweepParts::kStalledWait (more runnable threads than cores), the next kStalledSolves solves
  // sweep on the caller's thread alone.
  void SetParallelRunner(const ParallelRunner* runner) { runner_ = runner; }
  static constexpr int kParallelContacts = 256;

 private:
  // The sweep after `sweep` (error `error`; the previous check at last_check with last_error)
  // at which the error is checked next (top of this file).
  static int NextCheck(const Options& options, int sweep, double error, int last_check,
                       double last_error);

  void Prepare(const GlobalFrictionContactProblem& problem);
  void SetDiagonalBlock(int contact, const Eigen::Matrix3d& W);
  void MakeReady(const GlobalFrictionContactProblem& problem, int contact);
  void ContactVelocities(const GlobalFrictionContactProblem& problem);
  // Options::stick_islands: true if it solved the problem (then *r, v_, u_ and *errors are
  // its), else v_ and u_ are as they were, bit for bit.
  bool StickIsland(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r,
                   FrictionErrors* errors);
  // StickIsland's impulses into stick_r_: through the bodies where they are held in every
  // direction (false otherwise), else densely from W.
  bool StickImpulsesByBodies(const GlobalFrictionContactProblem& problem);
  void StickImpulsesDense(const GlobalFrictionContactProblem& problem);
  // StickIsland where Options::stick_islands asks for it, *stick_tried is false (then true) and
  // the point *r (the start, else after a sweep) looks like an island at rest.
  bool MayStickIsland(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r,
                      FrictionErrors* errors, bool* stick_tried, bool at_start);
  static constexpr int kMaxStickContacts = 48;
  // One sweep, contacts 0 to n_c - 1, or n_c - 1 to 0 when backward.
  template <bool kCompact>
  void Sweep(const GlobalFrictionContactProblem& problem, int sweep, bool backward,
             Eigen::VectorXd* r);
  // Contact a's update in a sweep (its manifold's, where it starts one that is solved as a
  // block), counting in *not_sticking the contacts left apart or sliding; returns the contact
  // after those updated.
  template <bool kCompact>
  int SolveContact(const GlobalFrictionContactProblem& problem, int a, int sweep, bool backward,
                   Eigen::VectorXd* r, int* not_sticking);
  // Whether sweeps go to runner_: compact layout, no time limit, and forward sweeps only (not
  // `turned` to backward and forward ones by Options::reverse_on_stall).
  bool ParallelSweepsApply(const GlobalFrictionContactProblem& problem, bool turned) const;
  // Forward sweeps first .. last on runner_'s threads.
  void ParallelSweeps(const GlobalFrictionContactProblem& problem, int first, int last,
                      Eigen::VectorXd* r);
  void SweepPart(const GlobalFrictionContactProblem& problem, int first, int last, int part,
                 Eigen::VectorXd* r);
  int SweepsFrom(const GlobalFrictionContactProblem& problem, int sweep, int next_check, int turned,
                 Eigen::VectorXd* r);
  template <bool kCompact>
  Eigen::Vector3d LocalVelocity(const GlobalFrictionContactProblem& problem, int a,
                                const double* v) const;
  template <bool kCompact>
  void ScatterChange(const GlobalFrictionContactProblem& problem, int a,
                     const Eigen::Vector3d& change, double* v) const;
  Eigen::Vector3d LocalSolve(int a, const Eigen::Vector3d& q_local, double mu,
                             const Eigen::Vector3d& old);

  // A manifold's contacts [first, end) and, at `matrices` in manifold_matrices_, its sticking
  // map P = -H_0^T (H_0 W_MM H_0^T)^-1 H_0 (change = P u) and the projector
  // Q = H_0^T (H_0 H_0^T)^-1 H_0 onto W_MM's range, each 3m x 3m, column-major.
  struct Manifold {
    enum State { kUnfactorized, kFactorized, kChecked, kUnusable };
    int first = 0, end = 0;
    size_t matrices = 0;
    State state = kUnfactorized;
  };
  static constexpr int kMaxManifold = 8;
  using ManifoldVector = Eigen::Matrix<double, 3 * kMaxManifold, 1>;
  using ManifoldRows = Eigen::Matrix<double, 6, 3 * kMaxManifold>;
  void FindManifolds(int nc);
  void ManifoldRowsOf(const Manifold& manifold, ManifoldRows* H0) const;
  void FactorizeManifold(const GlobalFrictionContactProblem& problem, const ManifoldVector& u,
                         Manifold* manifold);
  bool ManifoldMayStick(const GlobalFrictionContactProblem& problem, int sweep,
                        const Manifold& manifold, const Eigen::VectorXd& r, ManifoldVector* u,
                        bool* pressed) const;
  bool StickManifold(const GlobalFrictionContactProblem& problem, int sweep, Manifold* manifold,
                     Eigen::VectorXd* r);
  bool SolvesManifold(const Manifold& manifold, const ManifoldVector& u,
                      const ManifoldVector& change) const;
  bool InsideCones(const GlobalFrictionContactProblem& problem, const Manifold& manifold,
                   const Eigen::VectorXd& r, const ManifoldVector& change) const;

  // The sweeps after `sweep` up to the next check, or one sweep started from Anderson's
  // combination where Options::anderson_memory asks for it and the sweeps have not turned
  // (*accelerated set once a combination is used). Returns the last sweep taken.
  int SweepsAfter(const GlobalFrictionContactProblem& problem, int sweep, int next_check,
                  int turned, bool* accelerated, Eigen::VectorXd* r);
  // The errors at a check from u = H^T v + w, v as the sweeps (and Anderson's combinations)
  // left it, exact to their rounding; after combinations, v again from r where the error is
  // within the tolerance.
  FrictionErrors ErrorsAtCheck(const GlobalFrictionContactProblem& problem,
                               const Eigen::VectorXd& r, bool accelerated);
  // Options::anderson_memory after a sweep from anderson_before_ to *r (and v_): records the
  // sweep and, where the history allows, moves *r and v_ to Anderson's combination, projected
  // onto the cones. Returns whether it did.
  bool Accelerate(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);
  Eigen::VectorXd anderson_before_;
  internal::AndersonHistory<kMaxAndersonMemory> anderson_;

  Options options_;
  std::vector<Manifold> manifolds_;
  std::vector<int> manifold_of_;  // per contact: the manifold it starts, else -1
  std::vector<double> manifold_matrices_;
  // The compact layout (6-row blocks, at most two a contact): per contact a record of H_0, H_1
  // and B_0, B_1 (6 x 3 each, column-major) and the offsets of its blocks in v (-1: none). On
  // problems of kScaledContacts or more whose every block has M^-1 = diag(s I, t I) (spheres,
  // cubes) the records are scaled: H_0, H_1 and the scales (s_0, t_0, s_1, t_1), 320 bytes
  // instead of 576, with B applied as H times the scaled change. Drops of 10,000 and 100,000
  // spheres in a box, whose big islands are scaled, then take 0.90 and 0.89 of the time; on
  // small problems the scaling lengthens the chain a sweep waits on (the sliding cube: 1.03 of
  // the time).
  static constexpr int kFullRecord = 72;
  static constexpr int kScaledRecord = 40;
  static constexpr int kScaledContacts = 2048;  // 1.2 MB of full records
  bool scaled_ = false;
  int RecordSize() const { return scaled_ ? kScaledRecord : kFullRecord; }
  double* Record(int a) { return records_.data() + static_cast<size_t>(RecordSize()) * a; }
  const double* Record(int a) const {
    return records_.data() + static_cast<size_t>(RecordSize()) * a;
  }
  void FindScalarBlocks(const GlobalFrictionContactProblem& problem);
  Eigen::Matrix<double, 6, 3> ProductOf(int a, int k) const;
  void AddProduct(int a, int k, const Eigen::Vector3d& change, double* out) const;
  static constexpr int kPrefetchAhead = 16;
  static constexpr int kPrefetchDofs = 1 << 17;  // v of 1 MB
  bool prefetch_ = false;
  void PrefetchVelocities(int a) const;
  bool compact_ = false;
  std::vector<double> records_;
  Eigen::MatrixXd stick_W_;  // StickIsland's W, its decomposition and vectors (kept storage)
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> stick_decomposition_;
  Eigen::VectorXd stick_r_, stick_v_, stick_u_;
  Eigen::MatrixXd stick_G_;  // StickImpulsesByBodies' A^T A, its factorization and vector
  Eigen::LLT<Eigen::MatrixXd> stick_cholesky_;
  Eigen::VectorXd stick_y_;
  int not_sticking_ = 0;  // contacts the last sweep left apart or sliding
  std::vector<int> slots_;
  std::vector<char> ready_;            // W_aa formed, and B_0, B_1 where kept
  std::vector<double> scalar_top_;     // per block: s where M_k^-1 = diag(s I, K), else 0
  std::vector<double> scalar_bottom_;  // per block: t where also K = t I, else 0
  // Otherwise, per piece of H: B_p = M_k^-1 H_p (b x 3, column-major, at the piece's offset).
  std::vector<double> products_;
  std::vector<int> product_offset_;
  // Per contact: W_aa, its inverse, whether it has one, the last sliding direction.
  std::vector<Eigen::Matrix3d> blocks_, inverses_;
  std::vector<char> invertible_;
  std::vector<Eigen::Vector2d> directions_;
  Eigen::VectorXd v_, u_, best_;
  Summary summary_;  // kept, so that its message is rewritten in place
  const ParallelRunner* runner_ = nullptr;
  internal::SweepParts sweep_parts_;
  bool parts_built_ = false;  // sweep_parts_ is this solve's
  std::vector<int> part_bodies_, unit_end_, part_not_sticking_;
  // Where a thread waited for one that was not running (SweepParts::stalled: a busy machine,
  // which can make the waits cost a scheduler's time slice each), the next kStalledSolves solves
  // that sweep keep their sweeps on the caller's thread.
  static constexpr int kStalledSolves = 64;
  int stalled_solves_ = 0;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_VELOCITY_GAUSS_SEIDEL_H_
