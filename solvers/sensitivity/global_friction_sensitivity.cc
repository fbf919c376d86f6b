#include "solvers/sensitivity/global_friction_sensitivity.h"

#include <algorithm>
#include <string>
#include <vector>

#include "solvers/base/input_error.h"
#include "solvers/sensitivity/internal/selected_system.h"

namespace ncpkit {

namespace {

// An entry of an orthonormal basis vector this small is rounding: the vector's share there moves
// the velocities by less than VelocitiesDetermined's 1e-8 of the largest unit response.
constexpr double kNegligibleBasisEntry = 1e-10;

// M (or M^-1, `inverse`) as a sparse block-diagonal matrix, filled column by column in place
// (the blocks follow each other down the diagonal).
Eigen::SparseMatrix<double> MassMatrix(const GlobalFrictionContactProblem& problem, bool inverse) {
  const int n = problem.num_dofs();
  Eigen::Index entries = 0;
  for (int k = 0; k < problem.num_blocks(); ++k) {
    entries += static_cast<Eigen::Index>(problem.block_size(k)) * problem.block_size(k);
  }
  Eigen::SparseMatrix<double> out(n, n);
  out.resizeNonZeros(entries);
  int* starts = out.outerIndexPtr();
  int* rows = out.innerIndexPtr();
  double* values = out.valuePtr();
  int at = 0;
  for (int k = 0; k < problem.num_blocks(); ++k) {
    const int offset = problem.block_offset(k), b = problem.block_size(k);
    const double* block = inverse ? problem.inverse_mass_data(k) : problem.mass_data(k);
    for (int j = 0; j < b; ++j) {
      starts[offset + j] = at;
      for (int i = 0; i < b; ++i, ++at) {
        rows[at] = offset + i;
        values[at] = block[i + b * j];
      }
    }
  }
  starts[n] = at;
  return out;
}

// H (num_dofs x 3 n_c), filled column by column in place: contact c's three columns hold the
// rows of its pieces, the pieces in the order of their blocks' offsets.
Eigen::SparseMatrix<double> ContactMatrix(const GlobalFrictionContactProblem& problem) {
  Eigen::Index entries = 0;
  for (int p = 0; p < problem.piece_begin(problem.num_contacts()); ++p) {
    entries += 3 * problem.block_size(problem.piece_block(p));
  }
  Eigen::SparseMatrix<double> out(problem.num_dofs(), problem.size());
  out.resizeNonZeros(entries);
  int* starts = out.outerIndexPtr();
  int* rows = out.innerIndexPtr();
  double* values = out.valuePtr();
  int at = 0;
  std::vector<int> pieces;
  for (int c = 0; c < problem.num_contacts(); ++c) {
    pieces.clear();
    for (int p = problem.piece_begin(c); p < problem.piece_begin(c + 1); ++p) pieces.push_back(p);
    std::sort(pieces.begin(), pieces.end(),
              [&](int x, int y) { return problem.piece_block(x) < problem.piece_block(y); });
    for (int j = 0; j < 3; ++j) {
      starts[3 * c + j] = at;
      for (const int p : pieces) {
        const int offset = problem.block_offset(problem.piece_block(p));
        const Eigen::Map<const Eigen::MatrixXd> piece = problem.PieceRows(p);
        for (int i = 0; i < piece.rows(); ++i, ++at) {
          rows[at] = offset + i;
          values[at] = piece(i, j);
        }
      }
    }
  }
  starts[problem.size()] = at;
  return out;
}

// VelocitiesDetermined() for the local sensitivity `local`, `velocity_map` forming M^-1 H (dv per
// unit impulse) where it is needed.
template <class VelocityMap>
bool Determined(const FrictionSensitivity& local, const VelocityMap& velocity_map) {
  // An undetermined change dr (K dr = 0 for the local sensitivity's selected system K) moves the
  // velocities by dv = M^-1 H dr, and |M^1/2 dv|^2 = dr^T W dr = sum over the contacts of
  // dr_c . (W dr)_c, where K's rows make every term vanish (dr_c = 0 apart; (W dr)_c = 0 where
  // it sticks; (W dr)_N = 0 and dr_T = 0 frictionless) except the tangential one of a sliding
  // contact. So only the undetermined directions with tangential impulses on sliding contacts
  // can move v, and none can where nothing slides (a resting stack's many redundant corners).
  std::vector<int> sliding;
  for (int c = 0; c < local.num_contacts(); ++c) {
    if (local.state(c) == FrictionSensitivity::ContactState::Sliding) sliding.push_back(c);
  }
  if (sliding.empty()) return true;
  const Eigen::MatrixXd undetermined = local.UndeterminedImpulses();
  if (undetermined.cols() == 0) return true;
  std::vector<Eigen::Index> moving;  // the columns with such impulses
  for (Eigen::Index j = 0; j < undetermined.cols(); ++j) {
    double tangential = 0.0;
    for (const int c : sliding) {
      tangential =
          std::max(tangential, undetermined.col(j).segment<2>(3 * c + 1).cwiseAbs().maxCoeff());
    }
    if (tangential > kNegligibleBasisEntry) moving.push_back(j);
  }
  if (moving.empty()) return true;
  const Eigen::SparseMatrix<double> map = velocity_map();
  const double scale = map.nonZeros() == 0 ? 0.0 : map.coeffs().cwiseAbs().maxCoeff();
  return (map * undetermined(Eigen::all, moving)).cwiseAbs().maxCoeff() <= 1e-8 * scale;
}

}  // namespace

GlobalFrictionSensitivity::GlobalFrictionSensitivity(const GlobalFrictionContactProblem& problem,
                                                     const Eigen::VectorXd& r,
                                                     const SensitivityOptions& options)
    : local_(LocalSensitivity(problem, r, nullptr, options)),
      r_(r),
      H_(ContactMatrix(problem)),
      M_(MassMatrix(problem, false)),
      inverse_mass_(MassMatrix(problem, true)) {
  problem.Velocity(r, &v_);
}

GlobalFrictionSensitivity::GlobalFrictionSensitivity(const GlobalFrictionContactProblem& problem,
                                                     const Eigen::VectorXd& r,
                                                     const Eigen::MatrixX2d& compliances,
                                                     const SensitivityOptions& options)
    : local_(LocalSensitivity(problem, r, &compliances, options)),
      r_(r),
      H_(ContactMatrix(problem)),
      M_(MassMatrix(problem, false)),
      inverse_mass_(MassMatrix(problem, true)) {
  problem.Velocity(r, &v_);
}

// W = H^T M^-1 H moved into the local sensitivity (its only copy).
FrictionSensitivity GlobalFrictionSensitivity::LocalSensitivity(
    const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
    const Eigen::MatrixX2d* compliances, const SensitivityOptions& options) {
  if (compliances != nullptr) {
    return FrictionSensitivity(problem.Delassus(), problem.local_q(), problem.mu(), r, *compliances,
                               options);
  }
  return FrictionSensitivity(problem.Delassus(), problem.local_q(), problem.mu(), r, options);
}

bool GlobalFrictionSensitivity::VelocitiesDetermined() const {
  return Determined(local_, [&] { return Eigen::SparseMatrix<double>(inverse_mass_ * H_); });
}

bool GlobalFrictionSensitivity::VelocitiesDetermined(const GlobalFrictionContactProblem& problem,
                                                     const FrictionSensitivity& local) {
  return Determined(local, [&] {
    return Eigen::SparseMatrix<double>(MassMatrix(problem, true) * ContactMatrix(problem));
  });
}

Eigen::VectorXd GlobalFrictionSensitivity::Jvp(const Tangent& tangent) const {
  const int n = static_cast<int>(v_.size()), m = size();
  auto sized = [](const Eigen::VectorXd& x, int rows, const char* name) {
    if (x.size() != 0 && x.size() != rows)
      throw InputError(std::string("sensitivity: d") + name + " has the wrong size");
    return x.size() != 0;
  };
  auto sized_matrix = [](const Eigen::SparseMatrix<double>& x, int rows, int cols,
                         const char* name) {
    if (x.rows() == 0 && x.cols() == 0) return false;
    if (x.rows() != rows || x.cols() != cols)
      throw InputError(std::string("sensitivity: d") + name + " has the wrong size");
    return true;
  };
  // dF = dw + dH^T v + H^T M^-1 (df + dH r - dM v).
  Eigen::VectorXd dF = Eigen::VectorXd::Zero(m), inner = Eigen::VectorXd::Zero(n);
  if (sized(tangent.w, m, "w")) dF += tangent.w;
  if (sized(tangent.f, n, "f")) inner += tangent.f;
  if (sized_matrix(tangent.H, n, m, "H")) {
    dF.noalias() += tangent.H.transpose() * v_;
    inner.noalias() += tangent.H * r_;
  }
  if (sized_matrix(tangent.M, n, n, "M")) inner.noalias() -= tangent.M * v_;
  dF.noalias() += H_.transpose() * (inverse_mass_ * inner);
  FrictionSensitivity::Tangent local;
  local.q = dF;
  if (sized(tangent.mu, local_.num_contacts(), "mu")) local.mu = tangent.mu;
  return local_.Jvp(local);
}

GlobalFrictionSensitivity::Gradient GlobalFrictionSensitivity::Vjp(const Eigen::VectorXd& g) const {
  FrictionSensitivity::Gradient local = local_.Vjp(g);
  Gradient out;
  out.f = inverse_mass_ * (H_ * local.q);
  out.w = std::move(local.q);
  out.mu = std::move(local.mu);
  return out;
}

Eigen::MatrixXd GlobalFrictionSensitivity::HGradient(const Gradient& gradient) const {
  return v_ * gradient.w.transpose() + gradient.f * r_.transpose();
}

Eigen::MatrixXd GlobalFrictionSensitivity::MGradient(const Gradient& gradient) const {
  return -gradient.f * v_.transpose();
}

Eigen::SparseMatrix<double> GlobalFrictionSensitivity::HGradientOnPattern(
    const Gradient& gradient) const {
  return internal::OuterOnPattern(H_, v_, gradient.w) +
         internal::OuterOnPattern(H_, gradient.f, r_);
}

Eigen::SparseMatrix<double> GlobalFrictionSensitivity::MGradientOnPattern(
    const Gradient& gradient) const {
  return -internal::OuterOnPattern(M_, gradient.f, v_);
}

Eigen::MatrixXd GlobalFrictionSensitivity::Jacobian(Input input) const {
  const int n = static_cast<int>(v_.size()), m = size();
  const int columns = input == Input::f ? n : input == Input::w ? m : local_.num_contacts();
  internal::RequireDenseJacobianSize(m, columns,
                                     input == Input::f   ? "f"
                                     : input == Input::w ? "w"
                                                         : "mu");
  Eigen::MatrixXd out(m, columns);
  for (int k = 0; k < columns; ++k) {
    Tangent t;
    const Eigen::VectorXd e = Eigen::VectorXd::Unit(columns, k);
    (input == Input::f ? t.f : input == Input::w ? t.w : t.mu) = e;
    out.col(k) = Jvp(t);
  }
  return out;
}

}  // namespace ncpkit
