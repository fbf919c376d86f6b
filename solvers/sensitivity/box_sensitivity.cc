#include "solvers/sensitivity/box_sensitivity.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solvers/base/input_error.h"

namespace ncpkit {

namespace {

void RequireSize(const Eigen::VectorXd& v, int n, const char* name) {
  if (v.size() != n)
    throw InputError("sensitivity: " + std::string(name) + " has " + std::to_string(v.size()) +
                     " entries, the problem " + std::to_string(n));
}

void RequireFinite(const Eigen::VectorXd& v, const char* name) {
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw InputError("sensitivity: " + std::string(name) + "[" + std::to_string(i) +
                       "] is not finite");
}

// A vector of size n, or zeros where `v` is empty.
Eigen::VectorXd OrZero(const Eigen::VectorXd& v, int n, const char* name) {
  if (v.size() == 0) return Eigen::VectorXd::Zero(n);
  RequireSize(v, n, name);
  return v;
}

}  // namespace

bool SensitivityOptions::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(degeneracy_tolerance > 0.0, "degeneracy_tolerance", degeneracy_tolerance,
               "must be > 0")
      .Require(max_dense_least_squares >= 0, "max_dense_least_squares", max_dense_least_squares,
               "must be >= 0")
      .Done(why);
}

BoxSensitivity::BoxSensitivity(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd& F,
                               const Eigen::VectorXd& z, const Eigen::VectorXd& lower,
                               const Eigen::VectorXd& upper, double scale, const Options& options)
    : options_(options) {
  RequireValidOptions(options, "sensitivity");
  const int n = static_cast<int>(z.size());
  if (!options.degenerate_sides.empty() && static_cast<int>(options.degenerate_sides.size()) != n) {
    throw InputError("sensitivity: degenerate_sides has " +
                     std::to_string(options.degenerate_sides.size()) + " entries for " +
                     std::to_string(n) + " unknowns");
  }
  RequireSize(F, n, "F");
  RequireSize(lower, n, "lower");
  RequireSize(upper, n, "upper");
  if (J.rows() != n || J.cols() != n)
    throw InputError("sensitivity: J is " + std::to_string(J.rows()) + " x " +
                     std::to_string(J.cols()) + ", the problem has " + std::to_string(n) +
                     " unknowns");
  RequireFinite(F, "F");
  RequireFinite(z, "z");
  for (Eigen::Index k = 0; k < J.nonZeros(); ++k)
    if (!std::isfinite(J.valuePtr()[k])) throw InputError("sensitivity: J has a non-finite entry");
  Classify(F, z, lower, upper, scale);
  Factorize(J);
}

BoxSensitivity::~BoxSensitivity() = default;
BoxSensitivity::BoxSensitivity(BoxSensitivity&&) noexcept = default;
BoxSensitivity& BoxSensitivity::operator=(BoxSensitivity&&) noexcept = default;

void BoxSensitivity::Classify(const Eigen::VectorXd& F, const Eigen::VectorXd& z,
                              const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                              double scale) {
  const int n = static_cast<int>(z.size());
  const double z_tolerance = options_.degeneracy_tolerance * (1.0 + z.lpNorm<Eigen::Infinity>());
  const double F_tolerance = options_.degeneracy_tolerance * (1.0 + std::abs(scale));
  state_.assign(n, IndexState::Free);
  position_.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    // A solver's z may cross a bound by its rounding; beyond the tolerance it is no solution.
    if (z[i] < lower[i] - z_tolerance || z[i] > upper[i] + z_tolerance)
      throw InputError("sensitivity: z[" + std::to_string(i) + "] is outside its bounds");
    // The bound nearer in the natural map's sense: the smaller of (z_i - l_i, F_i) decides.
    const double to_lower = std::max(z[i] - lower[i], 0.0);
    const double to_upper = std::max(upper[i] - z[i], 0.0);
    IndexState s = IndexState::Free;
    bool degenerate = false;
    if (std::isfinite(lower[i]) && to_lower <= std::max(F[i], 0.0) && to_lower <= to_upper) {
      s = IndexState::Lower;
      degenerate = to_lower <= z_tolerance && std::abs(F[i]) <= F_tolerance;
    } else if (std::isfinite(upper[i]) && to_upper <= std::max(-F[i], 0.0)) {
      s = IndexState::Upper;
      degenerate = to_upper <= z_tolerance && std::abs(F[i]) <= F_tolerance;
    } else if (std::isfinite(lower[i]) && to_lower <= z_tolerance &&
               std::abs(F[i]) <= F_tolerance) {
      s = IndexState::Lower;  // F_i rounded below zero at the bound
      degenerate = true;
    } else if (std::isfinite(upper[i]) && to_upper <= z_tolerance &&
               std::abs(F[i]) <= F_tolerance) {
      s = IndexState::Upper;
      degenerate = true;
    }
    if (degenerate) {
      degenerate_.push_back(i);
      const Side side = options_.degenerate_sides.empty() ? options_.degenerate_side
                                                          : options_.degenerate_sides[i];
      if (side == Side::Free && lower[i] < upper[i]) s = IndexState::Free;
    }
    state_[i] = s;
    if (s == IndexState::Free) {
      position_[i] = static_cast<int>(free_.size());
      free_.push_back(i);
    } else {
      bound_.push_back(i);
    }
  }
}

void BoxSensitivity::Factorize(const Eigen::SparseMatrix<double>& J) {
  const int nf = static_cast<int>(free_.size()), nb = static_cast<int>(bound_.size());
  std::vector<int> bound_position(state_.size(), -1);
  for (int k = 0; k < nb; ++k) bound_position[bound_[k]] = k;
  std::vector<Eigen::Triplet<double>> ff, fb;
  for (int j = 0; j < J.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(J, j); it; ++it) {
      const int row = position_[it.row()];
      if (row < 0) continue;
      if (position_[j] >= 0) {
        ff.emplace_back(row, position_[j], it.value());
      } else {
        fb.emplace_back(row, bound_position[j], it.value());
      }
    }
  }
  J_FB_.resize(nf, nb);
  J_FB_.setFromTriplets(fb.begin(), fb.end());
  if (nf == 0) return;
  Eigen::SparseMatrix<double> J_FF(nf, nf);
  J_FF.setFromTriplets(ff.begin(), ff.end());
  system_.Factorize(J_FF, options_.max_dense_least_squares, "the free rows' Jacobian");
}

Eigen::VectorXd BoxSensitivity::Tangent(const Eigen::VectorXd& dF, const Eigen::VectorXd& dl,
                                        const Eigen::VectorXd& du) const {
  const int n = size();
  const Eigen::VectorXd dF0 = OrZero(dF, n, "dF"), dl0 = OrZero(dl, n, "dl"),
                        du0 = OrZero(du, n, "du");
  Eigen::VectorXd dz = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd dz_bound(bound_.size());
  for (size_t k = 0; k < bound_.size(); ++k) {
    const int i = bound_[k];
    dz_bound[static_cast<Eigen::Index>(k)] = state_[i] == IndexState::Lower ? dl0[i] : du0[i];
    dz[i] = dz_bound[static_cast<Eigen::Index>(k)];
  }
  if (free_.empty()) return dz;
  Eigen::VectorXd rhs(free_.size());
  for (size_t k = 0; k < free_.size(); ++k) rhs[static_cast<Eigen::Index>(k)] = -dF0[free_[k]];
  rhs.noalias() -= J_FB_ * dz_bound;
  const Eigen::VectorXd dz_free = system_.Solve(rhs, false);
  for (size_t k = 0; k < free_.size(); ++k) dz[free_[k]] = dz_free[static_cast<Eigen::Index>(k)];
  return dz;
}

Eigen::MatrixXd BoxSensitivity::UndeterminedDirections() const {
  if (!system_.least_squares()) return Eigen::MatrixXd(size(), 0);
  const Eigen::MatrixXd basis = system_.null_basis();
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(size(), basis.cols());
  for (size_t k = 0; k < free_.size(); ++k)
    out.row(free_[k]) = basis.row(static_cast<Eigen::Index>(k));
  return out;
}

BoxSensitivity::Adjoint BoxSensitivity::Cotangent(const Eigen::VectorXd& g) const {
  const int n = size();
  RequireSize(g, n, "g");
  Adjoint out;
  out.F = Eigen::VectorXd::Zero(n);
  out.lower = Eigen::VectorXd::Zero(n);
  out.upper = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd through_free = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(bound_.size()));
  if (!free_.empty()) {
    Eigen::VectorXd g_free(free_.size());
    for (size_t k = 0; k < free_.size(); ++k) g_free[static_cast<Eigen::Index>(k)] = g[free_[k]];
    const Eigen::VectorXd lambda = system_.Solve(g_free, true);
    for (size_t k = 0; k < free_.size(); ++k)
      out.F[free_[k]] = -lambda[static_cast<Eigen::Index>(k)];
    through_free.noalias() = J_FB_.transpose() * lambda;
  }
  for (size_t k = 0; k < bound_.size(); ++k) {
    const int i = bound_[k];
    const double value = g[i] - through_free[static_cast<Eigen::Index>(k)];
    (state_[i] == IndexState::Lower ? out.lower : out.upper)[i] = value;
  }
  return out;
}

}  // namespace ncpkit
