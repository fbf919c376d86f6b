// The 3D frictional contact problem with the Coulomb cone, in the local form FCLib exchanges
// (../shared/data/fclib/FORMAT.md §1), its cone projection and its error measure (§5).
#ifndef NCPKIT_SOLVERS_FRICTION_FRICTION_PROBLEM_H_
#define NCPKIT_SOLVERS_FRICTION_FRICTION_PROBLEM_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

// FC(W, q, mu): find the reactions r and velocities u = W r + q such that, for every contact
// alpha (three components each, ordered [normal, tangent 1, tangent 2]),
//   K*_{mu_a} ∋ u_a + mu_a ||u_aT|| e_N  ⊥  r_a ∈ K_{mu_a},   K_mu = { r : ||r_T|| <= mu r_N },
// De Saxcé's form of Signorini's condition with Coulomb's law (take-off, sticking, sliding with
// maximal dissipation). W (the Delassus operator, 3 x 3 blocks per pair of contacts) may be
// non-symmetric or singular, as it is in many FCLib files.
//
// The constructor validates and throws InputError naming the entry: W square with 3 n_c rows,
// q of 3 n_c entries, mu of n_c, every value finite, mu >= 0.
class FrictionContactProblem {
 public:
  FrictionContactProblem(const Eigen::SparseMatrix<double>& W, Eigen::VectorXd q,
                         Eigen::VectorXd mu);
  FrictionContactProblem() = default;  // no contacts
  // Makes this FC(W, q, mu), validated as the constructor does, reusing the storage: a W with
  // no more nonzeros than the last one allocates nothing (a time-stepper poses one per step).
  void Assign(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& q,
              const Eigen::VectorXd& mu);

  int num_contacts() const { return static_cast<int>(mu_.size()); }
  int size() const { return static_cast<int>(q_.size()); }  // 3 n_c
  const RowSparseMatrix& W() const { return rows_; }        // row-major
  const Eigen::SparseMatrix<double>& W_columns() const { return columns_; }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& mu() const { return mu_; }
  // The 3 x 3 diagonal block of contact `contact`.
  Eigen::Matrix3d DiagonalBlock(int contact) const;

  // u = W r + q (no allocation when *u has the size).
  void Velocity(const Eigen::VectorXd& r, Eigen::VectorXd* u) const;

  // A name for reports (the file name); not validated.
  std::string name;

 private:
  void Validate(const Eigen::SparseMatrix<double>& W);
  // rows_ = columns_ in row-major storage, into rows_'s storage.
  void CopyColumnsToRows();

  RowSparseMatrix rows_;
  Eigen::SparseMatrix<double> columns_;
  Eigen::VectorXd q_, mu_;
  std::vector<int> next_;  // CopyColumnsToRows' cursor per row
};

// sqrt(a^2 + b^2): the tangential norm of the hot loops, std::hypot's value without its cost
// (hypot only where the squares would overflow or underflow).
inline double TangentNorm(double a, double b) {
  const double s = a * a + b * b;
  if (s > 1e-300 && s < 1e300) return std::sqrt(s);
  if (a == 0.0 && b == 0.0) return 0.0;
  return std::hypot(a, b);
}

// The closed-form projection of x onto the cone K_mu = { ||x_T|| <= mu x_N } (FORMAT.md §5):
// x inside; 0 if x is in the polar cone (mu ||x_T|| <= -x_N); else the nearest point of the
// boundary. mu = 0 projects onto the half-line x_T = 0, x_N >= 0.
inline Eigen::Vector3d ProjectOntoCone(double mu, const Eigen::Vector3d& x);

// The natural map of one contact with the modified velocity (FORMAT.md §5):
//   F_a = r_a - P_K(r_a - (u_a + mu_a ||u_aT|| e_N)).
// It is zero exactly when (r_a, u_a) satisfies the contact's complementarity.
inline Eigen::Vector3d ContactNaturalMap(double mu, const Eigen::Vector3d& r,
                                         const Eigen::Vector3d& u);

// The error measures of a point r (FORMAT.md §5). `fclib` is the one every friction solver in
// ncpkit reports and stops on (its summary's natural_residual): ||F_nat(r)|| / (1 + ||q||),
// the benchmark convention of FCLib's comparisons. `siconos` is what Siconos 4.4's
// fc3d_compute_error reports, ||F_nat(r)|| / max(||q||, ||r||, ||u||), for comparison. All norms
// are Euclidean. Non-finite r gives +inf for both.
struct FrictionErrors {
  double natural_map_norm = 0.0;  // ||F_nat(r)||
  double fclib = 0.0;
  double siconos = 0.0;
  // The errors of something that is not a point of the problem (wrong size, not finite).
  static FrictionErrors Infinite();
};
FrictionErrors ComputeFrictionErrors(const FrictionContactProblem& problem,
                                     const Eigen::VectorXd& r);
// The same with u = W r + q already in `u`.
FrictionErrors ComputeFrictionErrors(const FrictionContactProblem& problem,
                                     const Eigen::VectorXd& r, const Eigen::VectorXd& u);
// The FCLib error alone.
double FclibError(const FrictionContactProblem& problem, const Eigen::VectorXd& r);

// Ellipsoidal friction (Xie & Chakraborty's (2016) e_t, e_o): contact a's cone is ||(r_t / e_t, r_o
// / e_o)|| <= mu r_N. It is the Coulomb cone in r' = E^-1 r, E = diag(1, e_t, e_o) per contact,
// with u' = E u, which keeps r.u: FC(E W E, E q, mu) is the problem in those variables, and maximal
// dissipation there, u'_T = -lambda r'_T, is the ellipsoidal law u_T = -lambda E^-2 r_T. So
// every friction solver serves such contact models: pose WithTangentialScaling(problem, scales)
// (scales: n_c rows of (e_t, e_o), each positive and finite; InputError otherwise), solve, and
// map the answer back with UnscaleReactions. (Torsional friction, e_r, makes the cone
// four-dimensional, which FrictionContactProblem does not pose.)
FrictionContactProblem WithTangentialScaling(const FrictionContactProblem& problem,
                                             const Eigen::MatrixX2d& scales);
// r = E r'.
Eigen::VectorXd UnscaleReactions(const Eigen::MatrixX2d& scales, const Eigen::VectorXd& scaled);

// The summary every frictional contact solver gives: natural_residual is the FCLib error above,
// the measure its tolerance applies to.
struct FrictionSolverSummary : SolverSummary {
  double siconos_error = std::numeric_limits<double>::infinity();  // FrictionErrors::siconos
  // Contacts taking off (r = 0), sticking (r inside the cone) and sliding (on its boundary, r_N
  // > 0) at the point returned.
  int take_off = 0, sticking = 0, sliding = 0;
  std::string FullReport() const override;
};

// Counts the contact states of r into the summary and sets its two errors.
void DescribeFrictionPoint(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                           FrictionSolverSummary* summary);
// The same with u = W r + q already in `u`.
void DescribeFrictionPoint(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                           const Eigen::VectorXd& u, FrictionSolverSummary* summary);

namespace internal {
// The errors from the coefficients, ||q|| and (r, u): what every form of the problem shares.
FrictionErrors FrictionErrorsOf(const Eigen::VectorXd& mu, double q_norm, const Eigen::VectorXd& r,
                                const Eigen::VectorXd& u);
// A Gauss-Seidel solve's status, iterations and message from its summary's error (set by
// DescribeFrictionPoint): converged, non-finite, or out of sweeps (or time).
void SetSweepOutcome(double tolerance, int sweeps, bool timed_out, const Eigen::VectorXd& r,
                     FrictionSolverSummary* summary);
// The errors, and the contacts taking off, sticking and sliding at r.
void DescribeFrictionPointOf(const Eigen::VectorXd& mu, double q_norm, const Eigen::VectorXd& r,
                             const Eigen::VectorXd& u, FrictionSolverSummary* summary);
// The same with the errors already computed (FrictionErrorsOf at r).
void DescribeFrictionPointOf(const Eigen::VectorXd& mu, const FrictionErrors& errors,
                             const Eigen::VectorXd& r, FrictionSolverSummary* summary);
}  // namespace internal

// Inline: the hot loops of every friction solver call them per contact.
inline Eigen::Vector3d ProjectOntoCone(double mu, const Eigen::Vector3d& x) {
  const double normal = x[0];
  const double tangent = TangentNorm(x[1], x[2]);
  if (mu * tangent <= -normal) return Eigen::Vector3d::Zero();  // polar cone
  // Inside, or on the boundary to the rounding of the tangential norm (a point a solver put on
  // the boundary stays where it is).
  if (tangent <= mu * normal * (1.0 + 4.0 * std::numeric_limits<double>::epsilon())) return x;
  const double projected_normal = (mu * tangent + normal) / (1.0 + mu * mu);
  const double scale = mu * projected_normal / tangent;
  return Eigen::Vector3d(projected_normal, scale * x[1], scale * x[2]);
}

inline Eigen::Vector3d ContactNaturalMap(double mu, const Eigen::Vector3d& r,
                                         const Eigen::Vector3d& u) {
  Eigen::Vector3d modified = u;
  modified[0] += mu * TangentNorm(u[1], u[2]);
  return r - ProjectOntoCone(mu, r - modified);
}

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_FRICTION_PROBLEM_H_
