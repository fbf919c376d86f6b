#include "solvers/friction/global_friction_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/finite.h"

namespace ncpkit {
namespace {

[[noreturn]] void FailGlobalProblem(const std::string& what) {
  throw InputError("invalid global frictional contact problem: " + what);
}

// Appends a matrix's values, column by column (no zero-filling first: a step's problem is
// rebuilt from an emptied vector whose capacity is kept).
void Append(const Eigen::Ref<const Eigen::MatrixXd>& x, std::vector<double>* values) {
  if (x.outerStride() == x.rows()) {
    values->insert(values->end(), x.data(), x.data() + x.size());
    return;
  }
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    values->insert(values->end(), x.col(j).data(), x.col(j).data() + x.rows());
  }
}

using internal::AllFinite;

// A symmetric 3 x 3 matrix is positive definite when its leading principal minors are
// (Sylvester's criterion).
bool PositiveDefinite(const Eigen::Matrix3d& A) {
  const double minor2 = A(0, 0) * A(1, 1) - A(0, 1) * A(1, 0);
  return A(0, 0) > 0.0 && minor2 > 0.0 && A.determinant() > 0.0;
}

}  // namespace

GlobalFrictionContactProblem::GlobalFrictionContactProblem(const Eigen::SparseMatrix<double>& M,
                                                           const Eigen::SparseMatrix<double>& H,
                                                           const Eigen::VectorXd& f,
                                                           const Eigen::VectorXd& w,
                                                           const Eigen::VectorXd& mu) {
  const Eigen::Index n = M.rows();
  if (M.cols() != n || H.rows() != n || f.size() != n || H.cols() != 3 * mu.size() ||
      w.size() != H.cols()) {
    std::ostringstream os;
    os << "M is " << M.rows() << " x " << M.cols() << ", H " << H.rows() << " x " << H.cols()
       << ", f has " << f.size() << " entries, w " << w.size() << " and mu " << mu.size()
       << ": expected n x n, n x 3 n_c, n, 3 n_c and n_c";
    FailGlobalProblem(os.str());
  }
  // Diagonal blocks: block [s, e] ends where no column in it reaches a row beyond e.
  std::vector<Eigen::Index> lowest(n, n), highest(n, -1);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(M, j); it; ++it) {
      lowest[j] = std::min(lowest[j], it.row());
      highest[j] = std::max(highest[j], it.row());
    }
  }
  Clear();
  std::vector<int> block_of_row(n, -1);
  Eigen::Index start = 0;
  while (start < n) {
    Eigen::Index end = std::max(start, highest[start]);
    for (Eigen::Index j = start; j <= end; ++j) {
      end = std::max(end, highest[j]);
      if (lowest[j] < start) {
        std::ostringstream os;
        os << "M(" << lowest[j] << "," << j << ") lies outside the diagonal blocks";
        FailGlobalProblem(os.str());
      }
    }
    const Eigen::Index size = end - start + 1;
    if (size > kMaxBlockSize) {
      std::ostringstream os;
      os << "M's diagonal block at rows " << start << ".." << end << " has " << size
         << " rows, more than " << kMaxBlockSize
         << " (a block-diagonal M is required; reduce the problem to its local form instead)";
      FailGlobalProblem(os.str());
    }
    const Eigen::MatrixXd block = Eigen::MatrixXd(M).block(start, start, size, size);
    const int k = AddBlock(block, f.segment(start, size));
    for (Eigen::Index i = start; i <= end; ++i) block_of_row[i] = k;
    start = end + 1;
  }
  // H's columns by contact and block.
  Eigen::SparseMatrix<double> Hc = H;
  Hc.makeCompressed();
  Eigen::MatrixXd rows;
  for (Eigen::Index c = 0; c < mu.size(); ++c) {
    AddContact(mu[c], w.segment<3>(3 * c));
    std::vector<int> blocks;
    for (int k = 0; k < 3; ++k) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(Hc, 3 * c + k); it; ++it) {
        blocks.push_back(block_of_row[it.row()]);
      }
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    for (const int block : blocks) {
      const int offset = block_offset_[block], size = block_size(block);
      rows.setZero(size, 3);
      for (int k = 0; k < 3; ++k) {
        for (Eigen::SparseMatrix<double>::InnerIterator it(Hc, 3 * c + k); it; ++it) {
          if (block_of_row[it.row()] == block) rows(it.row() - offset, k) += it.value();
        }
      }
      AddContactBlock(block, rows);
    }
  }
  Finalize();
}

void GlobalFrictionContactProblem::Clear() {
  block_offset_.assign(1, 0);
  mass_offset_.assign(1, 0);
  mass_.clear();
  inverse_mass_.clear();
  inverse_given_.clear();
  piece_begin_.assign(1, 0);
  piece_block_.clear();
  piece_offset_.clear();
  piece_values_.clear();
  f_values_.clear();
  w_values_.clear();
  mu_values_.clear();
  finalized_ = false;
}

void GlobalFrictionContactProblem::Reserve(int num_blocks, int num_contacts, int block_size) {
  const size_t blocks = std::max(num_blocks, 0), contacts = std::max(num_contacts, 0);
  const size_t b = std::clamp(block_size, 1, kMaxBlockSize), pieces = 2 * contacts;
  block_offset_.reserve(blocks + 1);
  mass_offset_.reserve(blocks + 1);
  mass_.reserve(blocks * b * b);
  inverse_mass_.reserve(blocks * b * b);
  inverse_given_.reserve(blocks);
  f_values_.reserve(blocks * b);
  piece_begin_.reserve(contacts + 1);
  piece_block_.reserve(pieces);
  piece_offset_.reserve(pieces);
  piece_values_.reserve(pieces * 3 * b);
  w_values_.reserve(3 * contacts);
  mu_values_.reserve(contacts);
}

int GlobalFrictionContactProblem::AddBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
                                           const Eigen::Ref<const Eigen::VectorXd>& f) {
  const int k = AppendBlock(mass, f);
  inverse_mass_.resize(mass_.size());
  inverse_given_.push_back(0);
  return k;
}

int GlobalFrictionContactProblem::AddBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
                                           const Eigen::Ref<const Eigen::MatrixXd>& inverse,
                                           const Eigen::Ref<const Eigen::VectorXd>& f) {
  if (inverse.rows() != mass.rows() || inverse.cols() != mass.cols()) {
    std::ostringstream os;
    os << "block " << num_blocks() << " of M is " << mass.rows() << " x " << mass.cols()
       << " but its inverse " << inverse.rows() << " x " << inverse.cols();
    FailGlobalProblem(os.str());
  }
  const int k = AppendBlock(mass, f);
  Append(inverse, &inverse_mass_);
  inverse_given_.push_back(1);
  return k;
}

int GlobalFrictionContactProblem::AppendBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
                                              const Eigen::Ref<const Eigen::VectorXd>& f) {
  const Eigen::Index b = mass.rows();
  if (b < 1 || b > kMaxBlockSize || mass.cols() != b || f.size() != b) {
    std::ostringstream os;
    os << "block " << num_blocks() << " of M is " << mass.rows() << " x " << mass.cols() << " with "
       << f.size() << " entries of f: expected b x b and b, 1 <= b <= " << kMaxBlockSize;
    FailGlobalProblem(os.str());
  }
  Append(mass, &mass_);
  mass_offset_.push_back(static_cast<int>(mass_.size()));
  f_values_.insert(f_values_.end(), f.data(), f.data() + b);
  block_offset_.push_back(block_offset_.back() + static_cast<int>(b));
  finalized_ = false;
  return num_blocks() - 1;
}

void GlobalFrictionContactProblem::AddContact(double mu, const Eigen::Vector3d& w) {
  mu_values_.push_back(mu);
  // Three push_backs, not a range insert: the compiler inlines push_back's fast path, where it
  // may call the general insert out of line (on the stack's steps, 1 % of their instructions).
  for (int k = 0; k < 3; ++k) w_values_.push_back(w[k]);
  piece_begin_.push_back(piece_begin_.back());
  finalized_ = false;
}

void GlobalFrictionContactProblem::AddContactBlock(
    int block, const Eigen::Ref<const Eigen::MatrixXd>& H_rows) {
  if (mu_values_.empty()) FailGlobalProblem("AddContactBlock() before any AddContact()");
  if (block < 0 || block >= num_blocks() || H_rows.rows() != block_size(block) ||
      H_rows.cols() != 3) {
    std::ostringstream os;
    os << "contact " << mu_values_.size() - 1 << ": rows of H for block " << block << " are "
       << H_rows.rows() << " x " << H_rows.cols() << " (" << num_blocks() << " blocks)";
    FailGlobalProblem(os.str());
  }
  piece_block_.push_back(block);
  piece_offset_.push_back(static_cast<int>(piece_values_.size()));
  Append(H_rows, &piece_values_);
  ++piece_begin_.back();
  finalized_ = false;
}

namespace {

using Matrix6d = Eigen::Matrix<double, 6, 6>;

// The figures FinalizeMassBlock checks, of one 3 x 3 diagonal block D of a rigid body's 6 x 6
// block and the same block of its inverse (column-major, leading dimension 6).
struct DiagonalBlockFigures {
  double scale;          // max |D_ij|
  double asymmetry;      // max |D_ij - D_ji|
  double inverse_scale;  // max |(D^-1)_ij|
  double inverse_error;  // ||D D^-1 - I||_max
  bool positive;         // D positive definite (when symmetric)
};

DiagonalBlockFigures FiguresOf(const double* d, const double* d_inverse) {
  using Block = Eigen::Map<const Eigen::Matrix3d, 0, Eigen::OuterStride<6>>;
  const Eigen::OuterStride<6> stride;
  const Eigen::Matrix3d D = Block(d, stride), E = Block(d_inverse, stride);
  DiagonalBlockFigures figures;
  figures.scale = D.cwiseAbs().maxCoeff();
  figures.asymmetry = std::max(
      {std::fabs(D(0, 1) - D(1, 0)), std::fabs(D(0, 2) - D(2, 0)), std::fabs(D(1, 2) - D(2, 1))});
  figures.inverse_scale = E.cwiseAbs().maxCoeff();
  Eigen::Matrix3d product = D * E;
  product.diagonal().array() -= 1.0;
  figures.inverse_error = product.cwiseAbs().maxCoeff();
  figures.positive = PositiveDefinite(D);
  return figures;
}

// A rigid body's 6 x 6 block, fixed sizes: whether it is positive definite; *inverse computed
// unless given, else *inverse_error = ||M M^-1 - I||_max.
bool CheckRigidBlock(const double* mass_data, double* inverse_data, bool given,
                     double* inverse_error) {
  const Eigen::Map<const Matrix6d> m6(mass_data);
  Eigen::Map<Matrix6d> i6(inverse_data);
  const bool split =
      given && m6.topRightCorner<3, 3>().isZero(0.0) && m6.bottomLeftCorner<3, 3>().isZero(0.0) &&
      i6.topRightCorner<3, 3>().isZero(0.0) && i6.bottomLeftCorner<3, 3>().isZero(0.0);
  if (split) {
    // diag(A, C) (a rigid body's about its centre of mass: m I and its inertia) is positive
    // definite when A and C are, and M M^-1 - I has only the two blocks' products.
    const DiagonalBlockFigures a = FiguresOf(mass_data, inverse_data);
    const DiagonalBlockFigures c = FiguresOf(mass_data + 21, inverse_data + 21);
    *inverse_error = std::max(a.inverse_error, c.inverse_error);
    return a.positive && c.positive;
  }
  const Eigen::LLT<Matrix6d> llt(m6);
  if (llt.info() != Eigen::Success) return false;
  if (given) {
    *inverse_error = (m6 * i6 - Matrix6d::Identity()).cwiseAbs().maxCoeff();
  } else {
    i6 = llt.solve(Matrix6d::Identity());
    i6 = (0.5 * (i6 + i6.transpose())).eval();
  }
  return true;
}

// The same for a block of any size up to kMaxBlockSize, by a Cholesky factorization of a
// fixed-capacity matrix (no heap).
bool CheckSmallBlock(int b, const double* mass_data, double* inverse_data, bool given,
                     double* inverse_error) {
  using Block = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0,
                              GlobalFrictionContactProblem::kMaxBlockSize,
                              GlobalFrictionContactProblem::kMaxBlockSize>;
  const Eigen::Map<const Eigen::MatrixXd> mass(mass_data, b, b);
  Eigen::Map<Eigen::MatrixXd> inverse(inverse_data, b, b);
  const Eigen::LLT<Block> llt{Block(mass)};
  if (llt.info() != Eigen::Success) return false;
  if (given) {
    const Block product = mass * inverse;
    *inverse_error = (product - Block::Identity(b, b)).cwiseAbs().maxCoeff();
  } else {
    inverse = llt.solve(Block::Identity(b, b));
    inverse = (0.5 * (inverse + inverse.transpose())).eval();
  }
  return true;
}

// Whether a rigid body's 6 x 6 block given with its inverse passes every check of
// FinalizeMassBlock as diag(A, C) and diag(A^-1, C^-1) (a body's about its centre of mass: m I
// and its inertia): nothing off the diagonal blocks, A and C finite, nonzero, symmetric and
// positive definite, the inverses finite and within rounding of theirs. The checks on the two
// 3 x 3 blocks alone, since a time-stepper poses every body's block at every step; any other
// block, and any failure, goes through the general checks, which say what failed.
bool SplitRigidBlockPasses(const double* mass_data, const double* inverse_data) {
  // Column-major 6 x 6: the corners are rows 3..5 of columns 0..2 and rows 0..2 of columns 3..5.
  double corners = 0.0, sum = 0.0;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      corners += std::fabs(mass_data[6 * j + 3 + i]) + std::fabs(mass_data[6 * (j + 3) + i]) +
                 std::fabs(inverse_data[6 * j + 3 + i]) + std::fabs(inverse_data[6 * (j + 3) + i]);
      sum += mass_data[6 * j + i] + mass_data[6 * (j + 3) + 3 + i] + inverse_data[6 * j + i] +
             inverse_data[6 * (j + 3) + 3 + i];
    }
  }
  if (!(corners == 0.0) || !std::isfinite(sum)) return false;
  const DiagonalBlockFigures a = FiguresOf(mass_data, inverse_data);
  const DiagonalBlockFigures c = FiguresOf(mass_data + 21, inverse_data + 21);
  const double scale = std::max(a.scale, c.scale);
  return scale > 0.0 && std::max(a.asymmetry, c.asymmetry) <= 1e-12 * scale && a.positive &&
         c.positive &&
         std::max(a.inverse_error, c.inverse_error) <=
             1e-12 * 6 * scale * std::max(a.inverse_scale, c.inverse_scale);
}

}  // namespace

// One pass over mu and w as whole vectors, and each contact's blocks compared; the contacts are
// scanned one by one for the message only when that pass finds something.
bool GlobalFrictionContactProblem::ContactsPass() const {
  const int nc = static_cast<int>(mu_values_.size());
  if (nc == 0) return true;
  if (!(mu_.minCoeff() >= 0.0) || !AllFinite(mu_values_.data(), mu_values_.size()) ||
      !AllFinite(w_values_.data(), 3 * static_cast<size_t>(nc))) {
    return false;
  }
  for (int c = 0; c < nc; ++c) {
    const int first = piece_begin_[c], end = piece_begin_[c + 1];
    if (end - first == 2) {
      if (piece_block_[first] == piece_block_[first + 1]) return false;
    } else if (end - first > 2) {
      return false;  // the scan below decides
    }
  }
  return true;
}

void GlobalFrictionContactProblem::ValidateContacts() const {
  if (ContactsPass()) return;
  const int nc = static_cast<int>(mu_values_.size());
  for (int c = 0; c < nc; ++c) {
    if (!(mu_[c] >= 0.0) || !std::isfinite(mu_[c])) {
      std::ostringstream os;
      os << "mu(" << c << ") = " << mu_[c] << " must be finite and >= 0";
      FailGlobalProblem(os.str());
    }
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(w_[3 * c + k])) {
        std::ostringstream os;
        os << "w(" << 3 * c + k << ") = " << w_[3 * c + k] << " is not finite";
        FailGlobalProblem(os.str());
      }
    }
    for (int p = piece_begin_[c]; p < piece_begin_[c + 1]; ++p) {
      for (int q = piece_begin_[c]; q < p; ++q) {
        if (piece_block_[q] != piece_block_[p]) continue;
        std::ostringstream os;
        os << "contact " << c << " names block " << piece_block_[p] << " twice";
        FailGlobalProblem(os.str());
      }
    }
  }
}

// H's pieces and f: summed first, each entry scanned only when a sum is not finite.
void GlobalFrictionContactProblem::ValidateRowsAndForces() const {
  if (!AllFinite(piece_values_.data(), piece_values_.size())) {
    for (int p = 0; p < static_cast<int>(piece_block_.size()); ++p) {
      if (PieceRows(p).allFinite()) continue;
      const int c = static_cast<int>(std::upper_bound(piece_begin_.begin(), piece_begin_.end(), p) -
                                     piece_begin_.begin()) -
                    1;
      std::ostringstream os;
      os << "H has a non-finite entry in contact " << c << "'s rows of block " << piece_block_[p];
      FailGlobalProblem(os.str());
    }
  }
  if (f_.allFinite()) return;
  for (Eigen::Index i = 0; i < f_.size(); ++i) {
    if (std::isfinite(f_[i])) continue;
    std::ostringstream os;
    os << "f(" << i << ") = " << f_[i] << " is not finite";
    FailGlobalProblem(os.str());
  }
}

void GlobalFrictionContactProblem::FinalizeMassBlock(int k) {
  const int b = block_size(k);
  if (b == 6 && inverse_given_[k] &&
      SplitRigidBlockPasses(mass_.data() + mass_offset_[k],
                            inverse_mass_.data() + mass_offset_[k])) {
    return;
  }
  const Eigen::Map<const Eigen::MatrixXd> mass(mass_.data() + mass_offset_[k], b, b);
  double scale, asymmetry;
  if (b == 6) {
    const Eigen::Map<const Matrix6d> m6(mass.data());
    scale = m6.cwiseAbs().maxCoeff();
    asymmetry = (m6 - m6.transpose()).cwiseAbs().maxCoeff();
  } else {
    scale = mass.cwiseAbs().maxCoeff();
    asymmetry = (mass - mass.transpose()).cwiseAbs().maxCoeff();
  }
  if (!AllFinite(mass.data(), static_cast<size_t>(b * b)) || !(scale > 0.0) ||
      !(asymmetry <= 1e-12 * scale)) {
    std::ostringstream os;
    os << "block " << k << " of M (rows " << block_offset_[k] << ".." << block_offset_[k + 1] - 1
       << ") must be finite, symmetric and nonzero";
    FailGlobalProblem(os.str());
  }
  Eigen::Map<Eigen::MatrixXd> inverse(inverse_mass_.data() + mass_offset_[k], b, b);
  double inverse_error = 0.0;
  bool ok =
      b == 6 ? CheckRigidBlock(mass.data(), inverse.data(), inverse_given_[k], &inverse_error)
             : CheckSmallBlock(b, mass.data(), inverse.data(), inverse_given_[k], &inverse_error);
  const double inverse_scale = inverse.cwiseAbs().maxCoeff();
  // The given inverse, to its rounding: ||M M^-1 - I||_max <= 1e-12 b ||M||_max ||M^-1||_max.
  const double allowed = 1e-12 * b * scale * inverse_scale;
  if (ok && inverse_given_[k] && !(inverse_error <= allowed)) {
    std::ostringstream os;
    os << "block " << k
       << " of M: the inverse given is not its inverse (||M M^-1 - I||_max = " << inverse_error
       << " > " << allowed << ")";
    FailGlobalProblem(os.str());
  }
  ok = ok && AllFinite(inverse.data(), static_cast<size_t>(b * b));
  if (!ok) {
    std::ostringstream os;
    os << "block " << k << " of M (rows " << block_offset_[k] << ".." << block_offset_[k + 1] - 1
       << ") is not positive definite";
    FailGlobalProblem(os.str());
  }
}

void GlobalFrictionContactProblem::Finalize() {
  const int nc = static_cast<int>(mu_values_.size());
  f_ = Eigen::Map<const Eigen::VectorXd>(f_values_.data(),
                                         static_cast<Eigen::Index>(f_values_.size()));
  w_ = Eigen::Map<const Eigen::VectorXd>(w_values_.data(), 3 * nc);
  mu_ = Eigen::Map<const Eigen::VectorXd>(mu_values_.data(), nc);
  ValidateContacts();
  ValidateRowsAndForces();
  for (int k = 0; k < num_blocks(); ++k) FinalizeMassBlock(k);
  finalized_ = true;
  // ||q|| of the local form.
  Velocity(Eigen::VectorXd(), &free_velocity_);
  ContactVelocity(free_velocity_, &q_);
  local_q_norm_ = q_.norm();
}

Eigen::Map<const Eigen::MatrixXd> GlobalFrictionContactProblem::InverseMass(int k) const {
  const int b = block_size(k);
  return Eigen::Map<const Eigen::MatrixXd>(inverse_mass_.data() + mass_offset_[k], b, b);
}

Eigen::Map<const Eigen::MatrixXd> GlobalFrictionContactProblem::PieceRows(int p) const {
  return Eigen::Map<const Eigen::MatrixXd>(piece_values_.data() + piece_offset_[p],
                                           block_size(piece_block_[p]), 3);
}

void GlobalFrictionContactProblem::Velocity(const Eigen::VectorXd& r, Eigen::VectorXd* v) const {
  if (!finalized_) FailGlobalProblem("used before Finalize()");
  Eigen::VectorXd& out = *v;
  out = f_;
  if (r.size() == size()) {
    for (int c = 0; c < num_contacts(); ++c) {
      const Eigen::Vector3d rc = r.segment<3>(3 * c);
      for (int p = piece_begin_[c]; p < piece_begin_[c + 1]; ++p) {
        const int k = piece_block_[p];
        internal::AddPieceProduct(piece_data(p), block_size(k), rc, out.data() + block_offset_[k]);
      }
    }
  }
  // A block's product goes through a stack vector (at most kMaxBlockSize entries).
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxBlockSize, 1> block;
  for (int k = 0; k < num_blocks(); ++k) {
    const int b = block_size(k);
    double* segment = out.data() + block_offset_[k];
    if (b == 6) {
      Eigen::Map<Eigen::Matrix<double, 6, 1>> x(segment);
      const Eigen::Matrix<double, 6, 1> product =
          Eigen::Map<const Eigen::Matrix<double, 6, 6>>(inverse_mass_data(k)) * x;
      x = product;
    } else {
      Eigen::Map<Eigen::VectorXd> x(segment, b);
      block.noalias() = InverseMass(k) * x;
      x = block;
    }
  }
}

void GlobalFrictionContactProblem::ContactVelocity(const Eigen::VectorXd& v,
                                                   Eigen::VectorXd* u) const {
  if (!finalized_) FailGlobalProblem("used before Finalize()");
  u->resize(w_.size());
  for (int c = 0; c < num_contacts(); ++c) {
    Eigen::Vector3d uc = w_.segment<3>(3 * c);
    for (int p = piece_begin_[c]; p < piece_begin_[c + 1]; ++p) {
      const int k = piece_block_[p];
      internal::AddPieceTransposeProduct(piece_data(p), block_size(k), v.data() + block_offset_[k],
                                         &uc);
    }
    u->segment<3>(3 * c) = uc;
  }
}

void GlobalFrictionContactProblem::Reduce(FrictionContactProblem* local) const {
  PrepareReduction();
  AssembleW(&W_);
  local->Assign(W_, q_, mu_);  // q_: H^T M^-1 f + w, from Finalize()
  local->name = name;
}

Eigen::SparseMatrix<double> GlobalFrictionContactProblem::Delassus() const {
  PrepareReduction();
  Eigen::SparseMatrix<double> W;
  AssembleW(&W);
  return W;
}

void GlobalFrictionContactProblem::PrepareReduction() const {
  if (!finalized_) FailGlobalProblem("used before Finalize()");
  const int nc = num_contacts();
  const int num_pieces = static_cast<int>(piece_block_.size());
  // M_k^-1 H_p for every piece, at the piece's own offset.
  products_.resize(piece_values_.size());
  pieces_of_block_.resize(static_cast<size_t>(num_blocks()));
  for (auto& list : pieces_of_block_) list.clear();
  for (int c = 0; c < nc; ++c) {
    for (int p = piece_begin_[c]; p < piece_begin_[c + 1]; ++p) {
      const int k = piece_block_[p];
      internal::PieceLeftProduct(inverse_mass_data(k), piece_data(p), block_size(k),
                                 products_.data() + piece_offset_[p]);
      pieces_of_block_[k].push_back(p);
    }
  }
  std::vector<int>& contact_of = contact_of_;
  contact_of.resize(static_cast<size_t>(num_pieces));
  for (int c = 0; c < nc; ++c)
    for (int p = piece_begin_[c]; p < piece_begin_[c + 1]; ++p) contact_of[p] = c;
}

// W straight into compressed storage, contact c's three columns holding a 3 x 3 block for every
// contact that shares a body with it (its neighbours, ascending): the sum over the shared blocks
// k of H_p1^T M_k^-1 H_p2 (p1 the neighbour's piece on k, p2 c's). No triplets to sort: the
// contacts of a scene change from step to step, and a step derivative's problem is new each time.
void GlobalFrictionContactProblem::AssembleW(Eigen::SparseMatrix<double>* W) const {
  const int nc = num_contacts();
  std::vector<int>& begin = neighbour_begin_;
  std::vector<int>& neighbours = neighbours_;
  begin.assign(1, 0);
  neighbours.clear();
  for (int c = 0; c < nc; ++c) {
    const size_t first = neighbours.size();
    for (int p2 = piece_begin_[c]; p2 < piece_begin_[c + 1]; ++p2) {
      for (const int p1 : pieces_of_block_[piece_block_[p2]]) neighbours.push_back(contact_of_[p1]);
    }
    std::sort(neighbours.begin() + first, neighbours.end());
    neighbours.erase(std::unique(neighbours.begin() + first, neighbours.end()), neighbours.end());
    begin.push_back(static_cast<int>(neighbours.size()));
  }
  const Eigen::Index nonzeros = 9 * static_cast<Eigen::Index>(neighbours.size());
  W->resize(3 * nc, 3 * nc);
  W->resizeNonZeros(nonzeros);
  int* outer = W->outerIndexPtr();
  int* inner = W->innerIndexPtr();
  double* values = W->valuePtr();
  std::fill(values, values + nonzeros, 0.0);
  position_.resize(static_cast<size_t>(nc));
  for (int c = 0; c < nc; ++c) {
    const int count = begin[c + 1] - begin[c], base = 9 * begin[c];
    for (int t = 0; t < count; ++t) position_[neighbours[begin[c] + t]] = t;
    for (int j = 0; j < 3; ++j) {
      outer[3 * c + j] = base + 3 * count * j;
      for (int t = 0; t < count; ++t)
        for (int i = 0; i < 3; ++i)
          inner[base + 3 * count * j + 3 * t + i] = 3 * neighbours[begin[c] + t] + i;
    }
    for (int p2 = piece_begin_[c]; p2 < piece_begin_[c + 1]; ++p2) {
      const int k = piece_block_[p2];
      for (const int p1 : pieces_of_block_[k]) {
        const Eigen::Matrix3d value = internal::PieceInnerProduct(
            products_.data() + piece_offset_[p1], piece_data(p2), block_size(k));
        const int at = base + 3 * position_[contact_of_[p1]];
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) values[at + 3 * count * j + i] += value(i, j);
      }
    }
  }
  outer[3 * nc] = static_cast<int>(nonzeros);
}

FrictionErrors ComputeFrictionErrors(const GlobalFrictionContactProblem& problem,
                                     const Eigen::VectorXd& r, const Eigen::VectorXd& u) {
  return internal::FrictionErrorsOf(problem.mu(), problem.local_q_norm(), r, u);
}

FrictionErrors ComputeFrictionErrors(const GlobalFrictionContactProblem& problem,
                                     const Eigen::VectorXd& r) {
  if (r.size() != problem.size()) return FrictionErrors::Infinite();
  Eigen::VectorXd v, u;
  problem.Velocity(r, &v);
  problem.ContactVelocity(v, &u);
  return ComputeFrictionErrors(problem, r, u);
}

void DescribeFrictionPoint(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
                           const Eigen::VectorXd& u, FrictionSolverSummary* summary) {
  internal::DescribeFrictionPointOf(problem.mu(), problem.local_q_norm(), r, u, summary);
}

}  // namespace ncpkit
