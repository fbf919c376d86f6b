// Derivatives of the solution of a box-constrained complementarity problem (MCP) with respect to
// anything its function and bounds depend on, by implicit differentiation of the solution's
// active set: the core that the LCP/MLCP, MCP and builder sensitivities share
// (docs/derivatives.md).
//
// At a solution z of  l <= z <= u  ⊥  F(z), each index is
//   at its lower bound (z_i = l_i, F_i >= 0), at its upper bound (z_i = u_i, F_i <= 0), or
//   free (l_i < z_i < u_i, F_i = 0),
// and, where no index is degenerate, the solution is differentiable: a perturbation that moves F
// by dF at fixed z (dF = dF/dtheta dtheta) and the bounds by dl, du moves z by
//   dz_B = dl_B or du_B                             (the bound of an index at its bound),
//   J_FF dz_F = -(dF_F + J_FB dz_B)                 (the free rows stay F_i = 0),
// J = dF/dz at z. A degenerate index (at its bound with F_i = 0: z_i - l_i and |F_i| both within
// the tolerance) is where the solution map has a kink; Options::degenerate_side (or, per index,
// degenerate_sides) names the one-sided derivative returned — that of the piece where the index
// stays at its bound (default), or of the piece where it is free — and degenerate() lists those
// indices. Where J_FF
// is singular (redundant equations), dz_F is the least-squares solution of least norm
// (internal/selected_system.h: sparse rank-revealing QR, or a dense pseudo-inverse);
// least_squares() says so.
//
// The adjoint (vector-Jacobian) products come from the same factorization: for a scalar L(z)
// with gradient g, lambda solves J_FF^T lambda = g_F, and
//   dL/dF (at fixed z) = -lambda on the free indices and 0 elsewhere,
//   dL/d(bound_i) = g_i - (J_FB^T lambda)_i for an index at its bound, 0 for a free one,
// so that <g, dz> = <dL/dF, dF> + <dL/dl, dl> + <dL/du, du> for every perturbation.
#ifndef NCPKIT_SOLVERS_SENSITIVITY_BOX_SENSITIVITY_H_
#define NCPKIT_SOLVERS_SENSITIVITY_BOX_SENSITIVITY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

#include "solvers/sensitivity/internal/selected_system.h"

namespace ncpkit {

// The one-sided derivative returned at a degenerate index (box_sensitivity.h).
enum class DegenerateSide { Bound, Free };

struct SensitivityOptions {
  // The one-sided derivative returned at a degenerate index. Default Bound.
  DegenerateSide degenerate_side = DegenerateSide::Bound;
  // Per index, its side in place of degenerate_side (empty: degenerate_side for all; else one
  // entry per index): for a problem whose indices differ in which side keeps the solution's
  // mode (the explicit stepper's pyramid: a sticking contact's friction edges, free).
  std::vector<DegenerateSide> degenerate_sides;
  // An index is degenerate when z_i - bound and |F_i| are both within this tolerance, scaled
  // by (1 + ||z||_inf) and (1 + ||F_0||_inf) respectively (F_0: the caller's scale of F,
  // ||q|| for an LCP). Default 1e-7 (solvers stop at natural residuals of 1e-8); > 0.
  double degeneracy_tolerance = 1e-7;
  // Free indices up to which a singular J_FF is solved in least squares (a dense
  // decomposition, and its pseudo-inverse kept: 8 n^2 bytes); above it, the sensitivity is
  // refused with the reason; a singular system (or independent block of it) of at most 32 rows
  // is always solved so. Default 2000.
  int max_dense_least_squares = 2000;
  bool IsValid(std::string* why) const;
};

class BoxSensitivity {
 public:
  using Options = SensitivityOptions;
  using Side = DegenerateSide;
  enum class IndexState { Lower, Upper, Free };

  // The active set of z and the factorization of J_FF. J: dF/dz at z (n x n); F: F(z); scale:
  // the scale of F in the degeneracy test. Throws InputError for mismatched sizes, non-finite
  // values, z outside [l, u], invalid options, or a singular J_FF too large for least squares.
  BoxSensitivity(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd& F,
                 const Eigen::VectorXd& z, const Eigen::VectorXd& lower,
                 const Eigen::VectorXd& upper, double scale, const Options& options);
  ~BoxSensitivity();
  BoxSensitivity(BoxSensitivity&&) noexcept;
  BoxSensitivity& operator=(BoxSensitivity&&) noexcept;

  int size() const { return static_cast<int>(state_.size()); }
  IndexState state(int i) const { return state_[i]; }
  // Degenerate indices, ascending.
  const std::vector<int>& degenerate() const { return degenerate_; }
  // True when J_FF was singular and the least-squares solution of least norm is used.
  bool least_squares() const { return system_.least_squares(); }
  // The directions in z (n x their number, zero on the bound indices) that the linearized
  // problem leaves free: an orthonormal basis of J_FF's null space, none unless least_squares().
  Eigen::MatrixXd UndeterminedDirections() const;

  // dz for the perturbation dF of F at fixed z and dl, du of the bounds (an empty vector is 0).
  Eigen::VectorXd Tangent(const Eigen::VectorXd& dF, const Eigen::VectorXd& dl,
                          const Eigen::VectorXd& du) const;
  // The adjoint of Tangent for the gradient g of a scalar of z: its gradients with respect to
  // F (at fixed z), l and u.
  struct Adjoint {
    Eigen::VectorXd F, lower, upper;
  };
  Adjoint Cotangent(const Eigen::VectorXd& g) const;

 private:
  void Classify(const Eigen::VectorXd& F, const Eigen::VectorXd& z, const Eigen::VectorXd& lower,
                const Eigen::VectorXd& upper, double scale);
  void Factorize(const Eigen::SparseMatrix<double>& J);

  Options options_;
  std::vector<IndexState> state_;
  std::vector<int> degenerate_;
  std::vector<int> free_, bound_;     // indices, ascending
  std::vector<int> position_;         // index -> its position in free_ (or -1)
  Eigen::SparseMatrix<double> J_FB_;  // |F| x |B|
  internal::SelectedSystem system_;   // J_FF
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_BOX_SENSITIVITY_H_
