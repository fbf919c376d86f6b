#include "solvers/friction/friction_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "solvers/base/input_error.h"
#include "solvers/base/internal/finite.h"
#include "solvers/base/internal/message_buffer.h"

namespace ncpkit {
namespace {

[[noreturn]] void FailFrictionProblem(const std::string& what) {
  throw InputError("invalid frictional contact problem: " + what);
}

// ||F_nat||^2 of contact a, as ContactNaturalMap(...).squaredNorm() computes it.
double NaturalMapSquare(const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                        const Eigen::VectorXd& u, Eigen::Index a) {
  return ContactNaturalMap(mu[a], r.segment<3>(3 * a), u.segment<3>(3 * a)).squaredNorm();
}

#if defined(__SSE2__)
// The same for contacts a and a + 1 at once, their operations those of ContactNaturalMap and
// ProjectOntoCone in the same order, the three cases of the projection blended instead of
// branched: the same bits, for about half the time of two scalar calls on a pile's contacts,
// whose cases alternate unpredictably. TangentNorm's guarded range (squares between 1e-300 and
// 1e300) is checked, and a pair outside it goes to the scalar code.
bool NaturalMapSquarePair(const double* mu, const double* r, const double* u, double* out) {
  const auto lanes = [](const double* x, int k) { return _mm_set_pd(x[3 + k], x[k]); };
  const __m128d m = _mm_loadu_pd(mu);
  const __m128d r0 = lanes(r, 0), r1 = lanes(r, 1), r2 = lanes(r, 2);
  const __m128d u0 = lanes(u, 0), u1 = lanes(u, 1), u2 = lanes(u, 2);
  const __m128d low = _mm_set1_pd(1e-300), high = _mm_set1_pd(1e300);
  const auto in_range = [&](__m128d square) {
    return _mm_movemask_pd(_mm_and_pd(_mm_cmpgt_pd(square, low), _mm_cmplt_pd(square, high)));
  };
  const __m128d u_square = _mm_add_pd(_mm_mul_pd(u1, u1), _mm_mul_pd(u2, u2));
  const __m128d x0 = _mm_sub_pd(r0, _mm_add_pd(u0, _mm_mul_pd(m, _mm_sqrt_pd(u_square))));
  const __m128d x1 = _mm_sub_pd(r1, u1), x2 = _mm_sub_pd(r2, u2);
  const __m128d x_square = _mm_add_pd(_mm_mul_pd(x1, x1), _mm_mul_pd(x2, x2));
  if (in_range(u_square) != 3 || in_range(x_square) != 3) return false;
  const __m128d tangent = _mm_sqrt_pd(x_square);
  const __m128d m_tangent = _mm_mul_pd(m, tangent);
  const __m128d polar = _mm_cmple_pd(m_tangent, _mm_sub_pd(_mm_setzero_pd(), x0));
  const __m128d inside = _mm_cmple_pd(
      tangent, _mm_mul_pd(_mm_mul_pd(m, x0),
                          _mm_set1_pd(1.0 + 4.0 * std::numeric_limits<double>::epsilon())));
  const __m128d projected_normal =
      _mm_div_pd(_mm_add_pd(m_tangent, x0), _mm_add_pd(_mm_set1_pd(1.0), _mm_mul_pd(m, m)));
  const __m128d scale = _mm_div_pd(_mm_mul_pd(m, projected_normal), tangent);
  // P: 0 (polar), x (inside), else (projected_normal, scale x_T); F = r - P.
  const auto pick = [&](__m128d x, __m128d boundary) {
    const __m128d kept = _mm_or_pd(_mm_and_pd(inside, x), _mm_andnot_pd(inside, boundary));
    return _mm_andnot_pd(polar, kept);
  };
  const __m128d f0 = _mm_sub_pd(r0, pick(x0, projected_normal));
  const __m128d f1 = _mm_sub_pd(r1, pick(x1, _mm_mul_pd(scale, x1)));
  const __m128d f2 = _mm_sub_pd(r2, pick(x2, _mm_mul_pd(scale, x2)));
  const __m128d square =
      _mm_add_pd(_mm_add_pd(_mm_mul_pd(f0, f0), _mm_mul_pd(f1, f1)), _mm_mul_pd(f2, f2));
  _mm_storeu_pd(out, square);
  return true;
}
#endif

}  // namespace

FrictionContactProblem::FrictionContactProblem(const Eigen::SparseMatrix<double>& W,
                                               Eigen::VectorXd q, Eigen::VectorXd mu)
    : q_(std::move(q)), mu_(std::move(mu)) {
  Validate(W);
  columns_ = W;
  columns_.makeCompressed();
  rows_ = columns_;
  rows_.makeCompressed();
}

void FrictionContactProblem::Assign(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& q,
                                    const Eigen::VectorXd& mu) {
  q_ = q;
  mu_ = mu;
  Validate(W);
  columns_ = W;
  columns_.makeCompressed();
  CopyColumnsToRows();
}

void FrictionContactProblem::CopyColumnsToRows() {
  const int n_rows = static_cast<int>(columns_.rows()), n_cols = static_cast<int>(columns_.cols());
  if (rows_.rows() != n_rows || rows_.cols() != n_cols || !rows_.isCompressed()) {
    rows_.resize(n_rows, n_cols);
  }
  rows_.resizeNonZeros(columns_.nonZeros());
  int* outer = rows_.outerIndexPtr();
  std::fill(outer, outer + n_rows + 1, 0);
  const int* column_starts = columns_.outerIndexPtr();
  const int* column_rows = columns_.innerIndexPtr();
  const double* column_values = columns_.valuePtr();
  for (int k = 0; k < column_starts[n_cols]; ++k) ++outer[column_rows[k] + 1];
  for (int i = 0; i < n_rows; ++i) outer[i + 1] += outer[i];
  next_.assign(outer, outer + n_rows);
  int* inner = rows_.innerIndexPtr();
  double* values = rows_.valuePtr();
  for (int j = 0; j < n_cols; ++j) {
    for (int k = column_starts[j]; k < column_starts[j + 1]; ++k) {
      const int slot = next_[column_rows[k]]++;
      inner[slot] = j;  // columns in increasing order within each row
      values[slot] = column_values[k];
    }
  }
}

void FrictionContactProblem::Validate(const Eigen::SparseMatrix<double>& W) {
  if (W.rows() != W.cols()) {
    std::ostringstream os;
    os << "W is " << W.rows() << " x " << W.cols() << ", it must be square";
    FailFrictionProblem(os.str());
  }
  if (W.rows() != 3 * mu_.size() || q_.size() != W.rows()) {
    std::ostringstream os;
    os << "W is " << W.rows() << " x " << W.cols() << ", q has " << q_.size() << " entries and mu "
       << mu_.size() << ": expected 3 n_c, 3 n_c and n_c";
    FailFrictionProblem(os.str());
  }
  for (Eigen::Index i = 0; i < q_.size(); ++i) {
    if (!std::isfinite(q_[i])) {
      std::ostringstream os;
      os << "q(" << i << ") = " << q_[i] << " is not finite";
      FailFrictionProblem(os.str());
    }
  }
  for (Eigen::Index a = 0; a < mu_.size(); ++a) {
    if (!(mu_[a] >= 0.0) || !std::isfinite(mu_[a])) {
      std::ostringstream os;
      os << "mu(" << a << ") = " << mu_[a] << " must be finite and >= 0";
      FailFrictionProblem(os.str());
    }
  }
  for (int j = 0; j < W.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
      if (!std::isfinite(it.value())) {
        std::ostringstream os;
        os << "W(" << it.row() << "," << it.col() << ") = " << it.value() << " is not finite";
        FailFrictionProblem(os.str());
      }
    }
  }
}

Eigen::Matrix3d FrictionContactProblem::DiagonalBlock(int contact) const {
  Eigen::Matrix3d block = Eigen::Matrix3d::Zero();
  const int first = 3 * contact;
  for (int i = 0; i < 3; ++i) {
    for (RowSparseMatrix::InnerIterator it(rows_, first + i); it; ++it) {
      const Eigen::Index j = it.col() - first;
      if (j >= 0 && j < 3) block(i, j) += it.value();
    }
  }
  return block;
}

void FrictionContactProblem::Velocity(const Eigen::VectorXd& r, Eigen::VectorXd* u) const {
  u->noalias() = rows_ * r;
  *u += q_;
}

namespace internal {

FrictionErrors FrictionErrorsOf(const Eigen::VectorXd& mu, double q_norm, const Eigen::VectorXd& r,
                                const Eigen::VectorXd& u) {
  FrictionErrors errors;
  const Eigen::Index m = 3 * mu.size();
  if (r.size() != m || u.size() != m || !AllFinite(r) || !AllFinite(u)) {
    return FrictionErrors::Infinite();
  }
  // Summed in contact order, whatever computed each term.
  double sum = 0.0;
  Eigen::Index a = 0;
#if defined(__SSE2__)
  for (double pair[2]; a + 1 < mu.size(); a += 2) {
    if (NaturalMapSquarePair(mu.data() + a, r.data() + 3 * a, u.data() + 3 * a, pair)) {
      sum += pair[0];
      sum += pair[1];
    } else {
      sum += NaturalMapSquare(mu, r, u, a);
      sum += NaturalMapSquare(mu, r, u, a + 1);
    }
  }
#endif
  for (; a < mu.size(); ++a) sum += NaturalMapSquare(mu, r, u, a);
  errors.natural_map_norm = std::sqrt(sum);
  errors.fclib = errors.natural_map_norm / (1.0 + q_norm);
  const double scale = std::max({q_norm, r.norm(), u.norm()});
  errors.siconos = scale > 0.0 ? errors.natural_map_norm / scale : errors.natural_map_norm;
  return errors;
}

void SetSweepOutcome(double tolerance, int sweeps, bool timed_out, const Eigen::VectorXd& r,
                     FrictionSolverSummary* summary) {
  summary->iterations = sweeps;
  // Not a stream nor printf: a solve of a few contacts takes about as long as formatting one.
  internal::MessageBuffer message;
  if (summary->natural_residual <= tolerance) {
    summary->status = Status::Converged;
    message.Text("FCLib error ").Number(summary->natural_residual).Text(" <= tolerance ");
    message.Number(tolerance).Text(" after ").Integer(sweeps).Text(" sweeps");
  } else if (!std::isfinite(summary->natural_residual) || !r.allFinite()) {
    summary->status = Status::NumericalFailure;
    message.Text("the iterate became non-finite in sweep ").Integer(sweeps);
  } else {
    summary->status = Status::MaxIterations;
    message.Text("FCLib error ").Number(summary->natural_residual).Text(" > tolerance ");
    message.Number(tolerance).Text(" after ").Integer(sweeps).Text(" sweeps");
    message.Text(timed_out ? " (time limit reached)" : "");
  }
  message.AssignTo(&summary->message);
}

void DescribeFrictionPointOf(const Eigen::VectorXd& mu, double q_norm, const Eigen::VectorXd& r,
                             const Eigen::VectorXd& u, FrictionSolverSummary* summary) {
  DescribeFrictionPointOf(mu, FrictionErrorsOf(mu, q_norm, r, u), r, summary);
}

void DescribeFrictionPointOf(const Eigen::VectorXd& mu, const FrictionErrors& errors,
                             const Eigen::VectorXd& r, FrictionSolverSummary* summary) {
  summary->natural_residual = errors.fclib;
  summary->siconos_error = errors.siconos;
  summary->take_off = summary->sticking = summary->sliding = 0;
  if (r.size() != 3 * mu.size()) return;
  for (Eigen::Index a = 0; a < mu.size(); ++a) {
    const Eigen::Vector3d ra = r.segment<3>(3 * a);
    const double tangent = TangentNorm(ra[1], ra[2]);
    if (ra[0] <= 0.0 && tangent == 0.0) {
      ++summary->take_off;
    } else if (tangent < mu[a] * ra[0] * (1.0 - 1e-9)) {
      ++summary->sticking;
    } else {
      ++summary->sliding;
    }
  }
}

}  // namespace internal

FrictionErrors ComputeFrictionErrors(const FrictionContactProblem& problem,
                                     const Eigen::VectorXd& r, const Eigen::VectorXd& u) {
  return internal::FrictionErrorsOf(problem.mu(), problem.q().norm(), r, u);
}

FrictionErrors FrictionErrors::Infinite() {
  FrictionErrors errors;
  errors.natural_map_norm = errors.fclib = errors.siconos = std::numeric_limits<double>::infinity();
  return errors;
}

FrictionErrors ComputeFrictionErrors(const FrictionContactProblem& problem,
                                     const Eigen::VectorXd& r) {
  if (r.size() != problem.size()) return FrictionErrors::Infinite();
  Eigen::VectorXd u;
  problem.Velocity(r, &u);
  return ComputeFrictionErrors(problem, r, u);
}

double FclibError(const FrictionContactProblem& problem, const Eigen::VectorXd& r) {
  return ComputeFrictionErrors(problem, r).fclib;
}

FrictionContactProblem WithTangentialScaling(const FrictionContactProblem& problem,
                                             const Eigen::MatrixX2d& scales) {
  if (scales.rows() != problem.num_contacts()) {
    std::ostringstream os;
    os << "tangential scales: " << scales.rows() << " rows for " << problem.num_contacts()
       << " contacts";
    FailFrictionProblem(os.str());
  }
  for (Eigen::Index a = 0; a < scales.rows(); ++a) {
    for (int k = 0; k < 2; ++k) {
      if (!(scales(a, k) > 0.0) || !std::isfinite(scales(a, k))) {
        std::ostringstream os;
        os << "tangential scale (" << a << "," << k << ") = " << scales(a, k)
           << " must be positive and finite";
        FailFrictionProblem(os.str());
      }
    }
  }
  Eigen::VectorXd e(problem.size());
  for (int a = 0; a < problem.num_contacts(); ++a)
    e.segment<3>(3 * a) << 1.0, scales(a, 0), scales(a, 1);
  Eigen::SparseMatrix<double> W = problem.W_columns();
  W = e.asDiagonal() * W * e.asDiagonal();
  FrictionContactProblem scaled(W, e.cwiseProduct(problem.q()), problem.mu());
  scaled.name = problem.name;
  return scaled;
}

Eigen::VectorXd UnscaleReactions(const Eigen::MatrixX2d& scales, const Eigen::VectorXd& scaled) {
  Eigen::VectorXd r = scaled;
  for (Eigen::Index a = 0; a < scales.rows() && 3 * a + 2 < r.size(); ++a) {
    r[3 * a + 1] *= scales(a, 0);
    r[3 * a + 2] *= scales(a, 1);
  }
  return r;
}

std::string FrictionSolverSummary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "fclib error       " << natural_residual << "\n"
     << "siconos error     " << siconos_error << "\n"
     << "contacts          " << take_off << " taking off, " << sticking << " sticking, " << sliding
     << " sliding\n";
  return os.str();
}

void DescribeFrictionPoint(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                           FrictionSolverSummary* summary) {
  if (r.size() != problem.size()) {
    DescribeFrictionPoint(problem, r, r, summary);
    return;
  }
  Eigen::VectorXd u;
  problem.Velocity(r, &u);
  DescribeFrictionPoint(problem, r, u, summary);
}

void DescribeFrictionPoint(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                           const Eigen::VectorXd& u, FrictionSolverSummary* summary) {
  internal::DescribeFrictionPointOf(problem.mu(), problem.q().norm(), r, u, summary);
}

}  // namespace ncpkit
