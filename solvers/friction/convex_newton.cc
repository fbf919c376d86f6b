#include "solvers/friction/convex_newton.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/message_buffer.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/friction/internal/convex_contact.h"
#include "solvers/linalg/block_cholesky.h"
#include "solvers/linalg/sparse_cholesky.h"
#include "solvers/linalg/sparse_lu.h"

namespace ncpkit {
namespace internal {

struct ConvexNewtonWorkspace {
  // Per contact: compliances (R_N, R_T), impulses g, curvatures G.
  Eigen::MatrixX2d compliance;
  Eigen::VectorXd u, gamma, du, u_of_r, best, best_u;
  std::vector<Eigen::Matrix3d> curvature;
  std::vector<ConvexContactState> states, factored_states;
  std::vector<ConvexContactScales> scales;
  // The global form: velocities, direction, gradient and scratch (n each).
  Eigen::VectorXd v, dv, gradient, scratch;
  // Its Hessian's lower triangle on the pattern of blocks joined by contacts: the block pairs
  // (column block j, row block i > j), each one's offset below the diagonal block in its
  // columns, and the matrix; or dense below ConvexNewton::kDenseDofs.
  std::vector<std::pair<int, int>> pairs;
  std::vector<int> pair_offset;
  Eigen::SparseMatrix<double> hessian;
  SparseCholesky cholesky;
  // Where every block is a rigid body's 6 x 6: the block factorization instead of CHOLMOD.
  bool rigid_blocks = false, factorized = false;
  BlockCholesky block_cholesky;
  std::vector<std::pair<int, int>> block_pairs;
  Eigen::MatrixXd dense_hessian;
  Eigen::LLT<Eigen::MatrixXd> dense_cholesky;
  std::vector<double> piece_products;  // H_p G (b x 3) per piece of a contact
  // The local form: rho and its direction; I + G W on W's block pattern, where each of W's
  // nonzeros lands in it, and its LU.
  Eigen::VectorXd rho, drho;
  Eigen::SparseMatrix<double> newton_matrix;
  std::vector<int> entry_target, diagonal_target;
  KluLu lu;
  bool symbolic_needed = true;
};

}  // namespace internal

namespace {

using internal::ConvexContactPoint;
using internal::ConvexContactScales;
using internal::ConvexContactState;
using internal::ConvexNewtonWorkspace;

// The scale w_a of a contact's compliance: the root mean square of its Delassus block's entries
// (1 where the block is zero or not finite: a contact nothing moves).
double DelassusScale(const Eigen::Matrix3d& W) {
  const double scale = W.norm() / 3.0;
  return scale > 0.0 && std::isfinite(scale) ? scale : 1.0;
}

// The model's error at r from u_of_r = W r + q (top of convex_newton.h).
double ModelErrorOf(const Eigen::VectorXd& mu, const Eigen::MatrixX2d& compliance, double q_norm,
                    const Eigen::VectorXd& r, const Eigen::VectorXd& u_of_r) {
  double sum = 0.0;
  for (Eigen::Index a = 0; a < mu.size(); ++a) {
    const Eigen::Vector3d ra = r.segment<3>(3 * a);
    const Eigen::Vector3d shifted =
        u_of_r.segment<3>(3 * a) +
        Eigen::Vector3d(compliance(a, 0), compliance(a, 1), compliance(a, 1)).cwiseProduct(ra);
    sum += (ra - ProjectOntoCone(mu[a], ra - shifted)).squaredNorm();
  }
  return std::sqrt(sum) / (1.0 + q_norm);
}

// The global form: the iterate is v, the Hessian M + H G H^T.
class GlobalForm {
 public:
  GlobalForm(const GlobalFrictionContactProblem& problem, ConvexNewtonWorkspace* work)
      : p_(problem), w_(*work) {}

  int num_contacts() const { return p_.num_contacts(); }
  const Eigen::VectorXd& mu() const { return p_.mu(); }
  double q_norm() const { return p_.local_q_norm(); }
  Eigen::Matrix3d DelassusBlock(int a) const {
    Eigen::Matrix3d W = Eigen::Matrix3d::Zero();
    std::vector<double>& product = w_.piece_products;
    for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
      const int block = p_.piece_block(k), b = p_.block_size(block);
      if (product.size() < static_cast<size_t>(3 * b)) product.resize(3 * b);
      internal::PieceLeftProduct(p_.inverse_mass_data(block), p_.piece_data(k), b, product.data());
      W += internal::PieceInnerProduct(p_.piece_data(k), product.data(), b);
    }
    return W;
  }
  void Start(const Eigen::VectorXd* r) {
    p_.Velocity(r != nullptr ? *r : Eigen::VectorXd(), &w_.v);
    if (p_.num_dofs() > ConvexNewton::kDenseDofs) BuildPattern();
  }
  void Velocities(Eigen::VectorXd* u) const { p_.ContactVelocity(w_.v, u); }
  void VelocityOfImpulses(const Eigen::VectorXd& r, Eigen::VectorXd* u) const {
    p_.Velocity(r, &w_.scratch);
    p_.ContactVelocity(w_.scratch, u);
  }
  // The Newton direction into dv, its contact velocities into du; a0 = dv^T (M v - f),
  // a1 = dv^T M dv. False if the Hessian could not be factorized.
  bool Direction(const Eigen::VectorXd& gamma, bool refactor, Eigen::VectorXd* du, double* a0,
                 double* a1) {
    const int n = p_.num_dofs();
    MassTimes(w_.v, &w_.scratch);
    w_.scratch -= p_.f();  // M v - f
    w_.gradient = w_.scratch;
    AddImpulses(-1.0, gamma, &w_.gradient);
    if (n <= ConvexNewton::kDenseDofs) {
      if (refactor) {
        AssembleDense();
        w_.dense_cholesky.compute(w_.dense_hessian);
      }
      if (w_.dense_cholesky.info() != Eigen::Success) return false;
      w_.dv = -w_.dense_cholesky.solve(w_.gradient);
    } else {
      if (refactor) {
        AssembleSparse();
        if (w_.rigid_blocks) {
          w_.factorized = w_.block_cholesky.Factorize();
        } else {
          w_.cholesky.compute(w_.hessian);
          w_.factorized = w_.cholesky.info() == Eigen::Success;
        }
      }
      if (!w_.factorized) return false;
      w_.gradient = -w_.gradient;
      if (w_.rigid_blocks) {
        w_.block_cholesky.Solve(w_.gradient, &w_.dv);
      } else {
        w_.cholesky.solveInto(w_.gradient, &w_.dv);
      }
    }
    if (!w_.dv.allFinite()) return false;
    *a0 = w_.dv.dot(w_.scratch);
    MassTimes(w_.dv, &w_.scratch);
    *a1 = w_.dv.dot(w_.scratch);
    du->setZero(3 * num_contacts());
    for (int a = 0; a < num_contacts(); ++a) {
      Eigen::Vector3d ua = Eigen::Vector3d::Zero();
      for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
        const int block = p_.piece_block(k);
        internal::AddPieceTransposeProduct(p_.piece_data(k), p_.block_size(block),
                                           w_.dv.data() + p_.block_offset(block), &ua);
      }
      du->segment<3>(3 * a) = ua;
    }
    return true;
  }
  void Move(double alpha) { w_.v += alpha * w_.dv; }
  int symbolic_analyses() const {
    return w_.cholesky.symbolic_analyses() + w_.block_cholesky.analyses();
  }

 private:
  void MassTimes(const Eigen::VectorXd& x, Eigen::VectorXd* out) const {
    out->resize(x.size());
    for (int k = 0; k < p_.num_blocks(); ++k) {
      const int o = p_.block_offset(k), b = p_.block_size(k);
      out->segment(o, b).noalias() =
          Eigen::Map<const Eigen::MatrixXd>(p_.mass_data(k), b, b) * x.segment(o, b);
    }
  }
  // out += sign H gamma.
  void AddImpulses(double sign, const Eigen::VectorXd& gamma, Eigen::VectorXd* out) const {
    for (int a = 0; a < num_contacts(); ++a) {
      const Eigen::Vector3d ga = sign * gamma.segment<3>(3 * a);
      for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
        const int block = p_.piece_block(k);
        internal::AddPieceProduct(p_.piece_data(k), p_.block_size(block), ga,
                                  out->data() + p_.block_offset(block));
      }
    }
  }
  // H_k G_a (b x 3) into w_.piece_products, one slot per piece of contact a; returns the slot
  // size.
  int PieceProducts(int a) {
    int largest = 0;
    for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
      largest = std::max(largest, p_.block_size(p_.piece_block(k)));
    }
    const int slot = 3 * largest;
    const size_t needed = static_cast<size_t>(slot) * (p_.piece_begin(a + 1) - p_.piece_begin(a));
    if (w_.piece_products.size() < needed) w_.piece_products.resize(needed);
    for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
      const int b = p_.block_size(p_.piece_block(k));
      Eigen::Map<Eigen::MatrixXd>(w_.piece_products.data() + slot * (k - p_.piece_begin(a)), b, 3)
          .noalias() = Eigen::Map<const Eigen::MatrixXd>(p_.piece_data(k), b, 3) * w_.curvature[a];
    }
    return slot;
  }
  // X = (H_k G) H_l^T for pieces k, l of contact a (b_k x b_l), from PieceProducts' slots,
  // handed to add(X): a fixed-size product for two rigid bodies' 6-row blocks.
  template <class Add>
  void PieceBlock(int a, int slot, int k, int l, const Add& add) const {
    const int bk = p_.block_size(p_.piece_block(k)), bl = p_.block_size(p_.piece_block(l));
    const double* product = w_.piece_products.data() + slot * (k - p_.piece_begin(a));
    if (bk == 6 && bl == 6) {
      const Eigen::Matrix<double, 6, 6> X =
          Eigen::Map<const Eigen::Matrix<double, 6, 3>>(product) *
          Eigen::Map<const Eigen::Matrix<double, 6, 3>>(p_.piece_data(l)).transpose();
      add(X);
      return;
    }
    const Eigen::MatrixXd X =
        Eigen::Map<const Eigen::MatrixXd>(product, bk, 3) *
        Eigen::Map<const Eigen::MatrixXd>(p_.piece_data(l), bl, 3).transpose();
    add(X);
  }
  // Calls add(i, j, X) with every block X of the Hessian M + H G H^T at block (i, j): M's
  // diagonal blocks, then each pressed contact's products of its pieces (only i >= j with
  // lower_only).
  template <class Add>
  void ForEachHessianBlock(bool lower_only, const Add& add) {
    for (int k = 0; k < p_.num_blocks(); ++k) {
      const int b = p_.block_size(k);
      add(k, k, Eigen::Map<const Eigen::MatrixXd>(p_.mass_data(k), b, b));
    }
    for (int a = 0; a < num_contacts(); ++a) {
      if (w_.states[a] == ConvexContactState::Apart) continue;
      const int slot = PieceProducts(a);
      for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
        for (int l = p_.piece_begin(a); l < p_.piece_begin(a + 1); ++l) {
          const int bk = p_.piece_block(k), bl = p_.piece_block(l);
          if (lower_only && bk < bl) continue;
          PieceBlock(a, slot, k, l, [&](const auto& X) { add(bk, bl, X); });
        }
      }
    }
  }
  void AssembleDense() {
    w_.dense_hessian.setZero(p_.num_dofs(), p_.num_dofs());
    ForEachHessianBlock(false, [&](int i, int j, const auto& X) {
      w_.dense_hessian.block(p_.block_offset(i), p_.block_offset(j), X.rows(), X.cols()) += X;
    });
  }

  // The pattern of the lower triangle: every block's diagonal block, and the block pairs that
  // share a contact (apart or not: the pattern, and so CHOLMOD's analysis, stays while the
  // contacts touch the same bodies).
  void BuildPattern() {
    w_.pairs.clear();
    for (int a = 0; a < num_contacts(); ++a) {
      for (int k = p_.piece_begin(a); k < p_.piece_begin(a + 1); ++k) {
        for (int l = p_.piece_begin(a); l < p_.piece_begin(a + 1); ++l) {
          const int i = p_.piece_block(k), j = p_.piece_block(l);
          if (i > j) w_.pairs.emplace_back(j, i);
        }
      }
    }
    std::sort(w_.pairs.begin(), w_.pairs.end());
    w_.pairs.erase(std::unique(w_.pairs.begin(), w_.pairs.end()), w_.pairs.end());
    w_.rigid_blocks = p_.num_dofs() == BlockCholesky::kBlock * p_.num_blocks();
    if (w_.rigid_blocks) {
      w_.block_pairs.clear();
      for (const auto& [j, i] : w_.pairs) w_.block_pairs.emplace_back(i, j);
      std::sort(w_.block_pairs.begin(), w_.block_pairs.end());
      w_.rigid_blocks = w_.block_cholesky.Analyze(p_.num_blocks(), w_.block_pairs);
      if (w_.rigid_blocks) return;
    }
    const int n = p_.num_dofs();
    Eigen::SparseMatrix<double>& A = w_.hessian;
    A.resize(n, n);
    // Column sizes: the diagonal block's rows from the column down, then each paired block.
    std::vector<int>& offset = w_.pair_offset;
    offset.assign(w_.pairs.size(), 0);
    std::vector<int> below(p_.num_blocks(), 0);
    for (size_t e = 0; e < w_.pairs.size(); ++e) {
      const auto [j, i] = w_.pairs[e];
      offset[e] = below[j];
      below[j] += p_.block_size(i);
    }
    A.resizeNonZeros(0);
    std::vector<int> starts(n + 1, 0);
    for (int j = 0; j < p_.num_blocks(); ++j) {
      const int o = p_.block_offset(j), b = p_.block_size(j);
      for (int t = 0; t < b; ++t) starts[o + t + 1] = starts[o + t] + (b - t) + below[j];
    }
    A.resizeNonZeros(starts[n]);
    std::copy(starts.begin(), starts.end(), A.outerIndexPtr());
    size_t e = 0;
    for (int j = 0; j < p_.num_blocks(); ++j) {
      const int o = p_.block_offset(j), b = p_.block_size(j);
      const size_t first = e;
      while (e < w_.pairs.size() && w_.pairs[e].first == j) ++e;
      for (int t = 0; t < b; ++t) {
        int* rows = A.innerIndexPtr() + starts[o + t];
        for (int s = t; s < b; ++s) *rows++ = o + s;
        for (size_t f = first; f < e; ++f) {
          const int i = w_.pairs[f].second;
          for (int s = 0; s < p_.block_size(i); ++s) *rows++ = p_.block_offset(i) + s;
        }
      }
    }
  }
  // Adds X (b_i x b_j) at block (i, j), i >= j, of the lower triangle.
  template <class Matrix>
  void AddToSparse(int i, int j, const Matrix& X) {
    Eigen::SparseMatrix<double>& A = w_.hessian;
    const int o = p_.block_offset(j), b = p_.block_size(j);
    if (i == j) {
      for (int t = 0; t < b; ++t) {
        double* values = A.valuePtr() + A.outerIndexPtr()[o + t];
        for (int s = t; s < b; ++s) values[s - t] += X(s, t);
      }
      return;
    }
    const auto found = std::lower_bound(w_.pairs.begin(), w_.pairs.end(), std::make_pair(j, i));
    const int below = w_.pair_offset[found - w_.pairs.begin()];
    for (int t = 0; t < b; ++t) {
      double* values = A.valuePtr() + A.outerIndexPtr()[o + t] + (b - t) + below;
      for (int s = 0; s < X.rows(); ++s) values[s] += X(s, t);
    }
  }
  // X at block (i, j), i >= j, of the Hessian: into the block factorization's storage or
  // CHOLMOD's matrix.
  template <class Matrix>
  void AddBlock(int i, int j, const Matrix& X) {
    if (w_.rigid_blocks) {
      if constexpr (Matrix::RowsAtCompileTime == BlockCholesky::kBlock &&
                    Matrix::ColsAtCompileTime == BlockCholesky::kBlock) {
        w_.block_cholesky.Add(i, j, X);
      } else {
        w_.block_cholesky.Add(i, j, BlockCholesky::Block(X));
      }
    } else {
      AddToSparse(i, j, X);
    }
  }
  void AssembleSparse() {
    if (w_.rigid_blocks) {
      w_.block_cholesky.SetZero();
    } else {
      Eigen::SparseMatrix<double>& A = w_.hessian;
      std::fill(A.valuePtr(), A.valuePtr() + A.nonZeros(), 0.0);
    }
    ForEachHessianBlock(true, [&](int i, int j, const auto& X) { AddBlock(i, j, X); });
  }

  const GlobalFrictionContactProblem& p_;
  ConvexNewtonWorkspace& w_;
};

// The local form: the iterate is rho (v = H rho for any H^T H = W), the Newton matrix I + G W.
class LocalForm {
 public:
  LocalForm(const FrictionContactProblem& problem, ConvexNewtonWorkspace* work)
      : p_(problem), w_(*work), q_norm_(problem.q().norm()) {}

  int num_contacts() const { return p_.num_contacts(); }
  const Eigen::VectorXd& mu() const { return p_.mu(); }
  double q_norm() const { return q_norm_; }
  Eigen::Matrix3d DelassusBlock(int a) const { return p_.DiagonalBlock(a); }
  void Start(const Eigen::VectorXd* r) {
    if (r != nullptr) {
      w_.rho = *r;
    } else {
      w_.rho.setZero(p_.size());
    }
    BuildPattern();
  }
  void Velocities(Eigen::VectorXd* u) const { p_.Velocity(w_.rho, u); }
  void VelocityOfImpulses(const Eigen::VectorXd& r, Eigen::VectorXd* u) const { p_.Velocity(r, u); }
  bool Direction(const Eigen::VectorXd& gamma, bool refactor, Eigen::VectorXd* du, double* a0,
                 double* a1) {
    if (refactor && !Factorize()) return false;
    w_.drho = gamma - w_.rho;
    w_.lu.solveInPlace(&w_.drho);
    if (!w_.drho.allFinite()) return false;
    *du = p_.W() * w_.drho;
    *a0 = du->dot(w_.rho);
    *a1 = du->dot(w_.drho);
    return true;
  }
  void Move(double alpha) { w_.rho += alpha * w_.drho; }
  int symbolic_analyses() const { return 0; }

 private:
  // I + G W into newton_matrix, and its LU.
  bool Factorize() {
    Eigen::SparseMatrix<double>& A = w_.newton_matrix;
    std::fill(A.valuePtr(), A.valuePtr() + A.nonZeros(), 0.0);
    for (const int d : w_.diagonal_target) A.valuePtr()[d] = 1.0;
    const Eigen::SparseMatrix<double>& W = p_.W_columns();
    int entry = 0;
    for (int j = 0; j < W.outerSize(); ++j) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it, ++entry) {
        const int row = static_cast<int>(it.row()), a = row / 3;
        double* values = A.valuePtr() + w_.entry_target[entry];
        for (int k = 0; k < 3; ++k) values[k] += w_.curvature[a](k, row - 3 * a) * it.value();
      }
    }
    if (w_.symbolic_needed) {
      w_.lu.analyzePattern(A);
      w_.symbolic_needed = false;
      if (w_.lu.info() != Eigen::Success) return false;
    }
    w_.lu.factorize(A);
    return w_.lu.info() == Eigen::Success;
  }
  // I + G W on W's 3 x 3 block pattern with every diagonal block: each block column's block
  // rows in order, three rows each.
  void BuildPattern() {
    const Eigen::SparseMatrix<double>& W = p_.W_columns();
    const int nc = p_.num_contacts(), m = p_.size();
    std::vector<std::vector<int>> rows_of(nc);
    for (int j = 0; j < m; ++j) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
        rows_of[j / 3].push_back(static_cast<int>(it.row()) / 3);
      }
    }
    for (int b = 0; b < nc; ++b) {
      rows_of[b].push_back(b);
      std::sort(rows_of[b].begin(), rows_of[b].end());
      rows_of[b].erase(std::unique(rows_of[b].begin(), rows_of[b].end()), rows_of[b].end());
    }
    Eigen::SparseMatrix<double>& A = w_.newton_matrix;
    A.resize(m, m);
    std::vector<int> starts(m + 1, 0);
    for (int j = 0; j < m; ++j)
      starts[j + 1] = starts[j] + 3 * static_cast<int>(rows_of[j / 3].size());
    A.resizeNonZeros(starts[m]);
    std::copy(starts.begin(), starts.end(), A.outerIndexPtr());
    w_.diagonal_target.resize(m);
    for (int j = 0; j < m; ++j) {
      const std::vector<int>& rows = rows_of[j / 3];
      int* inner = A.innerIndexPtr() + starts[j];
      for (size_t e = 0; e < rows.size(); ++e) {
        for (int k = 0; k < 3; ++k) inner[3 * e + k] = 3 * rows[e] + k;
        if (rows[e] == j / 3) w_.diagonal_target[j] = starts[j] + 3 * static_cast<int>(e) + j % 3;
      }
    }
    w_.entry_target.clear();
    for (int j = 0; j < m; ++j) {
      const std::vector<int>& rows = rows_of[j / 3];
      for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
        const int a = static_cast<int>(it.row()) / 3;
        const int e =
            static_cast<int>(std::lower_bound(rows.begin(), rows.end(), a) - rows.begin());
        w_.entry_target.push_back(starts[j] + 3 * e);
      }
    }
    w_.symbolic_needed = true;
  }

  const FrictionContactProblem& p_;
  ConvexNewtonWorkspace& w_;
  double q_norm_;
};

// phi'(alpha) and phi''(alpha) of phi(alpha) = l(v + alpha dv):
//   phi' = a0 + alpha a1 - sum_a g_a(u + alpha du) . du_a,  phi'' = a1 + sum_a du_a^T G_a du_a.
struct LineFunction {
  const std::vector<internal::ConvexContactScales>& scales;
  const Eigen::VectorXd& u;
  const Eigen::VectorXd& du;
  double a0, a1;
  double Derivative(double alpha, double* second) const {
    double first = a0 + alpha * a1;
    *second = a1;
    for (size_t a = 0; a < scales.size(); ++a) {
      const Eigen::Vector3d d = du.segment<3>(3 * a);
      double curvature = 0.0;
      first -=
          internal::ConvexContactAlong(scales[a], u.segment<3>(3 * a) + alpha * d, d, &curvature);
      *second += curvature;
    }
    return first;
  }
};

// The minimizer of the convex phi on [0, 1] (1 if phi still decreases there): Newton's method on
// phi', kept inside the bracket of its sign change (bisection where a step leaves it), until
// |phi'| <= 1e-8 |phi'(0)|. Returns 0 if phi'(0) >= 0 (no descent: the direction is rounding).
double ExactLineSearch(const LineFunction& line, int* evaluations) {
  double second = 0.0;
  const double d0 = line.Derivative(0.0, &second);
  ++*evaluations;
  if (!(d0 < 0.0)) return 0.0;
  const double d1 = line.Derivative(1.0, &second);
  ++*evaluations;
  if (!(d1 > 0.0)) return 1.0;
  double lo = 0.0, hi = 1.0;
  double alpha = d0 / (d0 - d1);
  for (int k = 0; k < 100; ++k) {
    const double d = line.Derivative(alpha, &second);
    ++*evaluations;
    if (std::abs(d) <= 1e-8 * std::abs(d0)) break;
    (d < 0.0 ? lo : hi) = alpha;
    double next = second > 0.0 ? alpha - d / second : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (hi - lo <= 1e-14) break;
    alpha = next;
  }
  return alpha;
}

// Each contact's compliances (R_N, R_T), rows of *compliance: the options' ratios times the
// scale of its Delassus block, from either form.
template <class Form>
void CompliancesOf(const ConvexNewton::Options& options, const Form& form,
                   Eigen::MatrixX2d* compliance) {
  compliance->resize(form.num_contacts(), 2);
  for (int a = 0; a < form.num_contacts(); ++a) {
    const double scale = DelassusScale(form.DelassusBlock(a));
    (*compliance)(a, 0) = options.normal_regularization * scale;
    (*compliance)(a, 1) = options.tangential_regularization * scale;
  }
}

}  // namespace

bool ConvexNewton::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_iterations >= 1, "max_iterations", max_iterations, "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Require(normal_regularization > 0.0 && std::isfinite(normal_regularization),
               "normal_regularization", normal_regularization, "must be positive and finite")
      .Require(tangential_regularization > 0.0 && std::isfinite(tangential_regularization),
               "tangential_regularization", tangential_regularization,
               "must be positive and finite")
      .Done(why);
}

std::string ConvexNewton::Summary::FullReport() const {
  std::ostringstream os;
  os << FrictionSolverSummary::FullReport() << "coulomb error " << coulomb_error
     << "\nline search iterations " << line_search_iterations << "\nsymbolic analyses "
     << symbolic_analyses << "\n";
  return os.str();
}

ConvexNewton::ConvexNewton() : ConvexNewton(Options()) {}
ConvexNewton::ConvexNewton(const Options& options)
    : options_(options), work_(std::make_unique<internal::ConvexNewtonWorkspace>()) {}
ConvexNewton::~ConvexNewton() = default;
ConvexNewton::ConvexNewton(ConvexNewton&&) noexcept = default;
ConvexNewton& ConvexNewton::operator=(ConvexNewton&&) noexcept = default;

template <class Form>
void ConvexNewton::Run(Form* form, Eigen::VectorXd* r) {
  const auto start = std::chrono::steady_clock::now();
  internal::ConvexNewtonWorkspace& w = *work_;
  Summary& s = summary_;
  const int nc = form->num_contacts();
  const Eigen::VectorXd& mu = form->mu();
  CompliancesOf(options_, *form, &w.compliance);
  w.scales.resize(nc);
  for (int a = 0; a < nc; ++a) {
    w.scales[a] = ConvexContactScales(mu[a], w.compliance(a, 0), w.compliance(a, 1));
  }
  const bool warm = options_.warm_start && r->size() == 3 * nc && r->allFinite();
  form->Start(warm ? r : nullptr);
  w.curvature.resize(nc);
  w.states.resize(nc);
  w.gamma.resize(3 * nc);
  double best_error = std::numeric_limits<double>::infinity();
  double last_error = best_error;
  const char* stop = "";
  for (int iteration = 0;; ++iteration) {
    form->Velocities(&w.u);
    for (int a = 0; a < nc; ++a) {
      const ConvexContactPoint point = internal::EvaluateConvexContact(
          mu[a], w.compliance(a, 0), w.compliance(a, 1), w.u.segment<3>(3 * a));
      w.gamma.segment<3>(3 * a) = point.impulse;
      w.curvature[a] = point.curvature;
      w.states[a] = point.state;
    }
    form->VelocityOfImpulses(w.gamma, &w.u_of_r);
    const double error = ModelErrorOf(mu, w.compliance, form->q_norm(), w.gamma, w.u_of_r);
    if (!(error >= best_error)) {
      best_error = error;
      w.best = w.gamma;
      w.best_u = w.u_of_r;
    }
    s.iterations = iteration;
    if (error <= options_.tolerance) {
      s.status = Status::Converged;
      break;
    }
    if (!std::isfinite(error)) {
      s.status = Status::NumericalFailure;
      stop = "the iterate became non-finite";
      break;
    }
    const bool timed_out = options_.time_limit_seconds > 0.0 &&
                           internal::SecondsSince(start) > options_.time_limit_seconds;
    if (iteration >= options_.max_iterations || timed_out) {
      s.status = Status::MaxIterations;
      stop = timed_out ? " (time limit reached)" : "";
      break;
    }
    double a0 = 0.0, a1 = 0.0;
    // The last factorization serves again where no contact changed its state since and the
    // last step cut the error tenfold: the Hessian moved only with the sliding contacts'
    // curvature, its direction still descends, and the exact line search keeps the descent.
    const bool reuse =
        s.factorizations > 0 && w.states == w.factored_states && error <= 0.1 * last_error;
    if (!form->Direction(w.gamma, !reuse, &w.du, &a0, &a1)) {
      s.status = Status::NumericalFailure;
      stop = "the Newton matrix could not be factorized";
      break;
    }
    if (!reuse) {
      ++s.factorizations;
      w.factored_states = w.states;
    }
    last_error = error;
    const LineFunction line{w.scales, w.u, w.du, a0, a1};
    const double alpha = ExactLineSearch(line, &s.line_search_iterations);
    if (!(alpha > 0.0)) {
      s.status = Status::Failed;
      stop = "the Newton direction does not descend (rounding, or W not positive semidefinite)";
      break;
    }
    form->Move(alpha);
  }
  *r = w.best;
  s.symbolic_analyses = form->symbolic_analyses() - symbolic_before_;
  internal::DescribeFrictionPointOf(mu, form->q_norm(), *r, w.best_u, &s);
  s.coulomb_error = s.natural_residual;
  s.natural_residual = best_error;
  internal::MessageBuffer message;
  if (s.status == Status::Converged) {
    message.Text("model error ").Number(best_error).Text(" <= tolerance ");
    message.Number(options_.tolerance).Text(" after ").Integer(s.iterations).Text(" iterations");
  } else if (s.status == Status::MaxIterations) {
    message.Text("model error ").Number(best_error).Text(" > tolerance ");
    message.Number(options_.tolerance).Text(" after ").Integer(s.iterations).Text(" iterations");
    message.Text(stop);
  } else {
    message.Text(stop).Text(" after ").Integer(s.iterations).Text(" iterations; model error ");
    message.Number(best_error);
  }
  message.AssignTo(&s.message);
  s.wall_time_seconds = internal::SecondsSince(start);
}

const ConvexNewton::Summary& ConvexNewton::Solve(const GlobalFrictionContactProblem& problem,
                                                 Eigen::VectorXd* r) {
  ResetSummaryKeepingStorage(&summary_);
  summary_.solver = "convex-newton";
  summary_.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary_)) return summary_;
  GlobalForm form(problem, work_.get());
  symbolic_before_ = form.symbolic_analyses();
  Run(&form, r);
  return summary_;
}

const ConvexNewton::Summary& ConvexNewton::Solve(const FrictionContactProblem& problem,
                                                 Eigen::VectorXd* r) {
  ResetSummaryKeepingStorage(&summary_);
  summary_.solver = "convex-newton";
  summary_.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary_)) return summary_;
  const Eigen::SparseMatrix<double>& W = problem.W_columns();
  const double largest = W.nonZeros() > 0 ? W.coeffs().cwiseAbs().maxCoeff() : 0.0;
  const double asymmetry =
      W.nonZeros() > 0 ? Eigen::SparseMatrix<double>(W - Eigen::SparseMatrix<double>(W.transpose()))
                             .coeffs()
                             .cwiseAbs()
                             .maxCoeff()
                       : 0.0;
  if (!(asymmetry <= 1e-10 * largest)) {
    summary_.status = Status::InvalidInput;
    internal::MessageBuffer message;
    message.Text("the convex model needs a symmetric W: |W - W^T| reaches ").Number(asymmetry);
    message.Text(" against a largest entry of ").Number(largest);
    message.AssignTo(&summary_.message);
    return summary_;
  }
  LocalForm form(problem, work_.get());
  symbolic_before_ = 0;
  Run(&form, r);
  return summary_;
}

Eigen::MatrixX2d ConvexNewton::Compliances(const GlobalFrictionContactProblem& problem) const {
  ConvexNewtonWorkspace scratch;
  Eigen::MatrixX2d compliance;
  CompliancesOf(options_, GlobalForm(problem, &scratch), &compliance);
  return compliance;
}

Eigen::MatrixX2d ConvexNewton::Compliances(const FrictionContactProblem& problem) const {
  ConvexNewtonWorkspace scratch;
  Eigen::MatrixX2d compliance;
  CompliancesOf(options_, LocalForm(problem, &scratch), &compliance);
  return compliance;
}

double ConvexNewton::ModelError(const GlobalFrictionContactProblem& problem,
                                const Eigen::VectorXd& r) const {
  if (r.size() != problem.size() || !r.allFinite()) return std::numeric_limits<double>::infinity();
  Eigen::VectorXd v, u;
  problem.Velocity(r, &v);
  problem.ContactVelocity(v, &u);
  return ModelErrorOf(problem.mu(), Compliances(problem), problem.local_q_norm(), r, u);
}

}  // namespace ncpkit
