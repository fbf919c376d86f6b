#include "solvers/friction/velocity_gauss_seidel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/cycle_watch.h"
#include "solvers/base/internal/finite.h"
#include "solvers/base/internal/rate_window.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/friction/single_contact.h"

namespace ncpkit {
namespace {
// Scratch that keeps its values and capacity from solve to solve.
void GrowTo(size_t size, std::vector<double>* scratch) {
  if (scratch->size() < size) scratch->resize(size);
}
}  // namespace

bool VelocityGaussSeidel::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_sweeps >= 1, "max_sweeps", max_sweeps, "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(relaxation > 0.0 && relaxation < 2.0, "relaxation", relaxation, "must be in (0, 2)")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Require(rate_window >= 0, "rate_window", rate_window, "must be >= 0")
      .Require(anderson_memory >= 0 && anderson_memory <= kMaxAndersonMemory, "anderson_memory",
               anderson_memory, "must be in [0, 10]")
      .Done(why);
}

// B_p = M_k^-1 H_p and the diagonal blocks W_aa = sum_p H_p^T B_p with their inverses. Where
// every block has 6 rows and no contact touches more than two (rigid bodies), each contact's
// pieces of H and B (or its blocks' scales, in the scaled records) go into one record (the
// compact layout), else H and B stay at the problem's offsets.
void VelocityGaussSeidel::Prepare(const GlobalFrictionContactProblem& problem) {
  const int nc = problem.num_contacts();
  parts_built_ = false;
  if (stalled_solves_ > 0) --stalled_solves_;
  const int num_pieces = problem.piece_begin(nc);
  compact_ = true;
  for (int a = 0; a < nc && compact_; ++a) {
    compact_ = problem.piece_begin(a + 1) - problem.piece_begin(a) <= 2;
  }
  for (int p = 0; p < num_pieces && compact_; ++p) {
    compact_ = problem.block_size(problem.piece_block(p)) == 6;
  }
  blocks_.resize(nc);
  inverses_.resize(nc);
  invertible_.assign(nc, 0);
  directions_.assign(nc, Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN()));
  if (compact_) {
    // B and W_aa are formed when a contact is first pressed (MakeReady): the contacts that stay
    // apart through a solve (speculative ones) never need them.
    // Grown, never shrunk: one solver serves islands of every size in turn, and resizing up
    // again would zero the records each time. Every record read is written first (here and in
    // MakeReady; a missing piece's values are unused).
    slots_.assign(2 * static_cast<size_t>(nc), -1);
    ready_.assign(nc, 0);
    FindScalarBlocks(problem);
    scaled_ = nc >= kScaledContacts;
    for (int p = 0; p < num_pieces && scaled_; ++p) {
      scaled_ = scalar_bottom_[problem.piece_block(p)] > 0.0;
    }
    GrowTo(static_cast<size_t>(RecordSize()) * nc, &records_);
    for (int a = 0; a < nc; ++a) {
      double* record = Record(a);
      for (int p = problem.piece_begin(a), k = 0; p < problem.piece_begin(a + 1); ++p, ++k) {
        const int block = problem.piece_block(p);
        slots_[2 * a + k] = problem.block_offset(block);
        std::copy(problem.piece_data(p), problem.piece_data(p) + 18, record + 18 * k);
        if (scaled_) {
          record[36 + 2 * k] = scalar_top_[block];
          record[37 + 2 * k] = scalar_bottom_[block];
        }
      }
    }
    FindManifolds(nc);
    return;
  }
  product_offset_.resize(static_cast<size_t>(num_pieces) + 1);
  product_offset_[0] = 0;
  for (int p = 0; p < num_pieces; ++p) {
    product_offset_[p + 1] = product_offset_[p] + 3 * problem.block_size(problem.piece_block(p));
  }
  products_.resize(static_cast<size_t>(product_offset_[num_pieces]));
  for (int a = 0; a < nc; ++a) {
    Eigen::Matrix3d W = Eigen::Matrix3d::Zero();
    for (int p = problem.piece_begin(a); p < problem.piece_begin(a + 1); ++p) {
      const int k = problem.piece_block(p), b = problem.block_size(k);
      double* product = products_.data() + product_offset_[p];
      internal::PieceLeftProduct(problem.inverse_mass_data(k), problem.piece_data(p), b, product);
      W += internal::PieceInnerProduct(problem.piece_data(p), product, b);
    }
    SetDiagonalBlock(a, W);
  }
}

// Blocks whose inverse is diag(s I, K) (s > 0) into scalar_top_ (0 for the others), and those
// whose K is t I besides (t > 0: a sphere's or a cube's, whose world inertia is exactly
// isotropic) into scalar_bottom_.
void VelocityGaussSeidel::FindScalarBlocks(const GlobalFrictionContactProblem& problem) {
  scalar_top_.assign(problem.num_blocks(), 0.0);
  scalar_bottom_.assign(problem.num_blocks(), 0.0);
  for (int k = 0; k < problem.num_blocks(); ++k) {
    const Eigen::Map<const Eigen::Matrix<double, 6, 6>> Minv(problem.inverse_mass_data(k));
    const double s = Minv(0, 0), t = Minv(3, 3);
    if (!(s > 0.0) || !Minv.topRightCorner<3, 3>().isZero(0.0) ||
        !Minv.bottomLeftCorner<3, 3>().isZero(0.0) ||
        Minv.topLeftCorner<3, 3>() != s * Eigen::Matrix3d::Identity()) {
      continue;
    }
    scalar_top_[k] = s;
    if (t > 0.0 && Minv.bottomRightCorner<3, 3>() == t * Eigen::Matrix3d::Identity()) {
      scalar_bottom_[k] = t;
    }
  }
}

namespace {
// diag(s I, t I) H for a piece H (6 x 3, column-major).
EIGEN_ALWAYS_INLINE Eigen::Matrix<double, 6, 3> ScaledPiece(const double* H, double s, double t) {
  const Eigen::Map<const Eigen::Matrix<double, 6, 3>> rows(H);
  Eigen::Matrix<double, 6, 3> B;
  B.topRows<3>() = s * rows.topRows<3>();
  B.bottomRows<3>() = t * rows.bottomRows<3>();
  return B;
}
}  // namespace

// B_k of contact a (compact layout, after MakeReady): formed from H_k and its block's scales in
// the scaled records, else kept.
EIGEN_ALWAYS_INLINE Eigen::Matrix<double, 6, 3> VelocityGaussSeidel::ProductOf(int a, int k) const {
  const double* record = Record(a);
  if (scaled_) return ScaledPiece(record + 18 * k, record[36 + 2 * k], record[37 + 2 * k]);
  return Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 36 + 18 * k);
}

// W_aa of contact a in the compact layout, and its B where kept.
void VelocityGaussSeidel::MakeReady(const GlobalFrictionContactProblem& problem, int a) {
  double* record = Record(a);
  Eigen::Matrix3d W = Eigen::Matrix3d::Zero();
  for (int p = problem.piece_begin(a), k = 0; p < problem.piece_begin(a + 1); ++p, ++k) {
    const int block = problem.piece_block(p);
    const Eigen::Map<const Eigen::Matrix<double, 6, 3>> H(record + 18 * k);
    if (scaled_) {
      W.noalias() += H.transpose() * ProductOf(a, k);
      continue;
    }
    const double s = scalar_top_[block], t = scalar_bottom_[block];
    Eigen::Map<Eigen::Matrix<double, 6, 3>> B(record + 36 + 18 * k);
    const Eigen::Map<const Eigen::Matrix<double, 6, 6>> Minv(problem.inverse_mass_data(block));
    if (t > 0.0) {  // M^-1 = diag(s I, t I): a sphere's or a cube's
      B = ScaledPiece(record + 18 * k, s, t);
      W.noalias() += H.transpose() * B;
    } else if (s > 0.0) {
      // M^-1 = diag(s I, K), a rigid body's: a third of the products.
      B.topRows<3>() = s * H.topRows<3>();
      B.bottomRows<3>().noalias() = Minv.bottomRightCorner<3, 3>() * H.bottomRows<3>();
      W.noalias() += H.topRows<3>().transpose() * B.topRows<3>();
      W.noalias() += H.bottomRows<3>().transpose() * B.bottomRows<3>();
    } else {
      B.noalias() = Minv * H;
      W.noalias() += H.transpose() * B;
    }
  }
  SetDiagonalBlock(a, W);
  ready_[a] = 1;
}

void VelocityGaussSeidel::SetDiagonalBlock(int a, const Eigen::Matrix3d& W) {
  blocks_[a] = W;
  invertible_[a] = 0;
  const double scale = W.norm();
  if (!(scale > 0.0)) return;
  // Invertible when |det W| > 1e-14 ||W||^3 (cofactors and determinant computed once).
  double determinant;
  bool invertible;
  W.computeInverseAndDetWithCheck(inverses_[a], determinant, invertible,
                                  1e-14 * scale * scale * scale);
  invertible_[a] = invertible && inverses_[a].allFinite();
}

// u = H^T v + w for every contact, into u_.
void VelocityGaussSeidel::ContactVelocities(const GlobalFrictionContactProblem& problem) {
  if (!compact_) {
    problem.ContactVelocity(v_, &u_);
    return;
  }
  const int nc = problem.num_contacts();
  u_.resize(3 * nc);
  const double* v = v_.data();
  for (int a = 0; a < nc; ++a) {
    if (prefetch_ && a + kPrefetchAhead < nc) PrefetchVelocities(a + kPrefetchAhead);
    const double* record = Record(a);
    Eigen::Vector3d u = problem.w().segment<3>(3 * a);
    for (int k = 0; k < 2; ++k) {
      const int slot = slots_[2 * a + k];
      if (slot < 0) continue;
      u.noalias() += Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 18 * k).transpose() *
                     Eigen::Map<const Eigen::Matrix<double, 6, 1>>(v + slot);
    }
    u_.segment<3>(3 * a) = u;
  }
}

// The contacts' bodies are visited in the order of the contacts (the cone model's: by height),
// which on a wide scene jumps across v. Once v outgrows a core's cache (kPrefetchDofs), the
// velocities of the contact kPrefetchAhead on are fetched while this one is solved: 100,000
// spheres dropped in a box (v: 4.8 MB) then take 0.87 and 0.93 of the time (two runs against the
// program without); below that size the fetches would only cost their instructions.
EIGEN_ALWAYS_INLINE void VelocityGaussSeidel::PrefetchVelocities(int a) const {
  for (int k = 0; k < 2; ++k) {
    const int slot = slots_[2 * a + k];
    if (slot < 0) continue;
    __builtin_prefetch(v_.data() + slot, 1);
    __builtin_prefetch(v_.data() + slot + 5, 1);
  }
}

// One sweep over the contacts: each one's exact local solve with the others fixed, relaxed,
// and v updated by B_a times the change of r_a.
// u_a = w_a + H_a^T v.
template <bool kCompact>
EIGEN_ALWAYS_INLINE Eigen::Vector3d VelocityGaussSeidel::LocalVelocity(
    const GlobalFrictionContactProblem& problem, int a, const double* v) const {
  Eigen::Vector3d u = problem.w().segment<3>(3 * a);
  if constexpr (kCompact) {
    const double* record = Record(a);
    for (int k = 0; k < 2; ++k) {
      const int slot = slots_[2 * a + k];
      if (slot < 0) continue;
      u.noalias() += Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 18 * k).transpose() *
                     Eigen::Map<const Eigen::Matrix<double, 6, 1>>(v + slot);
    }
  } else {
    for (int p = problem.piece_begin(a); p < problem.piece_begin(a + 1); ++p) {
      const int k = problem.piece_block(p);
      internal::AddPieceTransposeProduct(problem.piece_data(p), problem.block_size(k),
                                         v + problem.block_offset(k), &u);
    }
  }
  return u;
}

// out += B_k change for piece k of contact a (compact layout).
EIGEN_ALWAYS_INLINE void VelocityGaussSeidel::AddProduct(int a, int k,
                                                         const Eigen::Vector3d& change,
                                                         double* out) const {
  const double* record = Record(a);
  if (scaled_) {
    // B change = diag(s I, t I) H change, as H (s change) and H (t change): the chain from one
    // contact's change to the next one's velocity, which a sweep waits on, one product longer
    // than with B kept.
    const Eigen::Map<const Eigen::Matrix<double, 6, 3>> H(record + 18 * k);
    const Eigen::Vector3d top = record[36 + 2 * k] * change;
    const Eigen::Vector3d bottom = record[37 + 2 * k] * change;
    Eigen::Map<Eigen::Vector3d>(out).noalias() += H.topRows<3>() * top;
    Eigen::Map<Eigen::Vector3d>(out + 3).noalias() += H.bottomRows<3>() * bottom;
  } else {
    Eigen::Map<Eigen::Matrix<double, 6, 1>>(out).noalias() +=
        Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 36 + 18 * k) * change;
  }
}

// v += B_a change (B_a = M^-1 H_a).
template <bool kCompact>
EIGEN_ALWAYS_INLINE void VelocityGaussSeidel::ScatterChange(
    const GlobalFrictionContactProblem& problem, int a, const Eigen::Vector3d& change,
    double* v) const {
  if constexpr (kCompact) {
    for (int k = 0; k < 2; ++k) {
      const int slot = slots_[2 * a + k];
      if (slot >= 0) AddProduct(a, k, change, v + slot);
    }
  } else {
    for (int p = problem.piece_begin(a); p < problem.piece_begin(a + 1); ++p) {
      const int k = problem.piece_block(p);
      internal::AddPieceProduct(products_.data() + product_offset_[p], problem.block_size(k),
                                change, v + problem.block_offset(k));
    }
  }
}

// Contact a's local solution for q_local: sticking (r = -W^-1 q inside the cone, the common
// case at rest) tested here, the other cases by the single-contact solver, started from `old`
// and the contact's last sliding direction.
inline Eigen::Vector3d VelocityGaussSeidel::LocalSolve(int a, const Eigen::Vector3d& q_local,
                                                       double mu, const Eigen::Vector3d& old) {
  Eigen::Vector3d solved;
  if (q_local[0] < 0.0 && invertible_[a] &&
      (solved = -(inverses_[a] * q_local), solved[0] >= 0.0) &&
      TangentNorm(solved[1], solved[2]) <= mu * solved[0]) {
    directions_[a].x() = std::numeric_limits<double>::quiet_NaN();
    return solved;
  }
  // (Sticking was tried above: a second try in the single-contact solve would fail the same way.)
  return SolveCarryingDirection(&directions_[a],
                                [&](const Eigen::Vector2d* warm) {
                                  return SolveSingleContactNotSticking(blocks_[a], q_local, mu, old,
                                                                       warm);
                                })
      .r;
}

// A manifold is solved as a block only where its sticking solution leaves no velocity above this
// share of the tolerance: blocks that could not zero the velocities (a tilted face's unequal
// gaps, pieces not of two rigid bodies) would hold the error above the tolerance.
constexpr double kBlockExactness = 0.1;

// Runs of 3 to kMaxManifold consecutive contacts with the same blocks (compact layout).
void VelocityGaussSeidel::FindManifolds(int nc) {
  manifolds_.clear();
  manifold_of_.assign(nc, -1);
  if (!options_.manifolds) return;
  size_t size = 0;
  for (int a = 0; a < nc;) {
    int end = a + 1;
    while (end < nc && end - a < kMaxManifold && slots_[2 * end] == slots_[2 * a] &&
           slots_[2 * end + 1] == slots_[2 * a + 1]) {
      ++end;
    }
    if (end - a >= 3) {
      manifold_of_[a] = static_cast<int>(manifolds_.size());
      Manifold& manifold = manifolds_.emplace_back();
      manifold.first = a;
      manifold.end = end;
      manifold.matrices = size;
      size += 2 * static_cast<size_t>(9 * (end - a) * (end - a));
    }
    a = end;
  }
  GrowTo(size, &manifold_matrices_);  // written by FactorizeManifold before any use
}

// H_0: the manifold's pieces on its first block, side by side.
void VelocityGaussSeidel::ManifoldRowsOf(const Manifold& manifold, ManifoldRows* H0) const {
  for (int a = manifold.first, i = 0; a < manifold.end; ++a, ++i) {
    H0->middleCols<3>(3 * i) = Eigen::Map<const Eigen::Matrix<double, 6, 3>>(Record(a));
  }
}

// H_0 H_0^T, then H_0 W_MM H_0^T = sum over the blocks k of (H_0 H_k^T) (B_k H_0^T). The
// manifold is unusable where either is singular (contacts on one line: a turn about it is free)
// or where u has a part outside the range of H_0^T (the gaps' offsets of a face tilted against
// the other: no impulse makes every contact stick).
void VelocityGaussSeidel::FactorizeManifold(const GlobalFrictionContactProblem& problem,
                                            const ManifoldVector& u, Manifold* manifold) {
  const int m = manifold->end - manifold->first;
  ManifoldRows H0;
  ManifoldRowsOf(*manifold, &H0);
  const auto rows = H0.leftCols(3 * m);
  const auto regular = [](const Eigen::LDLT<Eigen::Matrix<double, 6, 6>>& f) {
    const Eigen::Matrix<double, 6, 1> d = f.vectorD();
    return f.info() == Eigen::Success && d.minCoeff() > 1e-12 * d.maxCoeff();
  };
  manifold->state = Manifold::kUnusable;
  const Eigen::LDLT<Eigen::Matrix<double, 6, 6>> gram(rows * rows.transpose());
  if (!regular(gram)) return;
  const Eigen::Matrix<double, 6, 1> projected = gram.solve(rows * u.head(3 * m));
  const double outside = (u.head(3 * m) - rows.transpose() * projected).cwiseAbs().maxCoeff();
  if (!(outside <= kBlockExactness * options_.tolerance)) return;
  for (int a = manifold->first; a < manifold->end; ++a) {
    if (!ready_[a]) MakeReady(problem, a);
  }
  Eigen::Matrix<double, 6, 6> reduced = Eigen::Matrix<double, 6, 6>::Zero();
  for (int k = 0; k < 2; ++k) {
    if (slots_[2 * manifold->first + k] < 0) continue;
    Eigen::Matrix<double, 6, 6> left = Eigen::Matrix<double, 6, 6>::Zero();
    Eigen::Matrix<double, 6, 6> right = Eigen::Matrix<double, 6, 6>::Zero();
    for (int i = 0; i < m; ++i) {
      const double* record = Record(manifold->first + i);
      const Eigen::Map<const Eigen::Matrix<double, 6, 3>> H(record + 18 * k);
      const Eigen::Matrix<double, 6, 3> B = ProductOf(manifold->first + i, k);
      left.noalias() += H0.middleCols<3>(3 * i) * H.transpose();
      right.noalias() += B * H0.middleCols<3>(3 * i).transpose();
    }
    reduced.noalias() += left * right;
  }
  const Eigen::LDLT<Eigen::Matrix<double, 6, 6>> factor(reduced);
  if (!regular(factor)) return;
  const Eigen::Index n = 3 * m;
  Eigen::Map<Eigen::MatrixXd> P(manifold_matrices_.data() + manifold->matrices, n, n);
  Eigen::Map<Eigen::MatrixXd> Q(manifold_matrices_.data() + manifold->matrices + n * n, n, n);
  P.noalias() = -(rows.transpose() * factor.solve(rows));
  Q.noalias() = rows.transpose() * gram.solve(rows);
  manifold->state = Manifold::kFactorized;
}

// Whether u + W_MM change = 0 within kBlockExactness tolerances: W_MM has the two rigid bodies'
// form.
bool VelocityGaussSeidel::SolvesManifold(const Manifold& manifold, const ManifoldVector& u,
                                         const ManifoldVector& change) const {
  const int m = manifold.end - manifold.first;
  ManifoldVector after = u;
  for (int k = 0; k < 2; ++k) {
    if (slots_[2 * manifold.first + k] < 0) continue;
    Eigen::Matrix<double, 6, 1> dv = Eigen::Matrix<double, 6, 1>::Zero();
    for (int i = 0; i < m; ++i) {
      AddProduct(manifold.first + i, k, change.segment<3>(3 * i), dv.data());
    }
    for (int i = 0; i < m; ++i) {
      const double* record = Record(manifold.first + i);
      after.segment<3>(3 * i).noalias() +=
          Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 18 * k).transpose() * dv;
    }
  }
  return after.head(3 * m).cwiseAbs().maxCoeff() <= kBlockExactness * options_.tolerance;
}

bool VelocityGaussSeidel::InsideCones(const GlobalFrictionContactProblem& problem,
                                      const Manifold& manifold, const Eigen::VectorXd& r,
                                      const ManifoldVector& change) const {
  for (int a = manifold.first, i = 0; a < manifold.end; ++a, ++i) {
    const Eigen::Vector3d next = r.segment<3>(3 * a) + change.segment<3>(3 * i);
    const double limit = problem.mu()[a] * next[0];
    if (!(next[0] >= 0.0) || next[1] * next[1] + next[2] * next[2] > limit * limit) return false;
  }
  return true;
}

// A manifold within this of sticking (every |u| below it, in units of the tolerance) is left to
// the contact-by-contact solves, which finish it at a fraction of a block's cost: the resting
// steps' warm starts already solve their manifolds, and factorizing them would double the step.
constexpr double kNearlyStuck = 10.0;

// Blocks are tried in a solve's first sweeps only: there they take out the self-equilibrated
// impulses the contact-by-contact sweeps would drift through (a landing stack's steps need 27
// sweeps with them, 101 without); in the long solves that then go on without converging, a
// block costs about a third more than its contacts solved one by one and gains nothing (on
// explicit columns of 6 boxes at FCLib error 1e-10: 2.59 billion instructions with blocks in
// the first 30 sweeps, 2.79 with blocks in every sweep, 2.77 without).
constexpr int kManifoldSweeps = 30;

// Whether the manifold may be tried now, with its velocities into *u: false where a contact slid
// at its last local solve (or, in the first sweep, starts on its cone's boundary) or where every
// velocity is already within kNearlyStuck tolerances. *pressed: some contact pushes or closes.
bool VelocityGaussSeidel::ManifoldMayStick(const GlobalFrictionContactProblem& problem, int sweep,
                                           const Manifold& manifold, const Eigen::VectorXd& r,
                                           ManifoldVector* u, bool* pressed) const {
  *pressed = false;
  double largest = 0.0;
  for (int a = manifold.first, i = 0; a < manifold.end; ++a, ++i) {
    const Eigen::Vector3d ra = r.segment<3>(3 * a);
    if (!std::isnan(directions_[a].x()) ||
        (sweep == 1 && ra[0] > 0.0 && TangentNorm(ra[1], ra[2]) >= problem.mu()[a] * ra[0])) {
      return false;
    }
    const Eigen::Vector3d ua = LocalVelocity<true>(problem, a, v_.data());
    u->segment<3>(3 * i) = ua;
    *pressed = *pressed || ra[0] > 0.0 || ua[0] < 0.0;
    largest = std::max(largest, ua.cwiseAbs().maxCoeff());
  }
  return !*pressed || largest > kNearlyStuck * options_.tolerance;
}

// The manifold's sticking solution (top of the header), applied if its reactions lie in the
// cones; false leaves r and v as they were, for the contact-by-contact solves.
bool VelocityGaussSeidel::StickManifold(const GlobalFrictionContactProblem& problem, int sweep,
                                        Manifold* manifold, Eigen::VectorXd* r) {
  if (sweep > kManifoldSweeps || manifold->state == Manifold::kUnusable) return false;
  ManifoldVector u;
  bool pressed;
  if (!ManifoldMayStick(problem, sweep, *manifold, *r, &u, &pressed)) return false;
  if (!pressed) return true;  // every contact apart and leaving: nothing changes
  const int n = 3 * (manifold->end - manifold->first);
  if (manifold->state == Manifold::kUnfactorized) {
    FactorizeManifold(problem, u, manifold);
    if (manifold->state == Manifold::kUnusable) return false;
  }
  const Eigen::Map<const Eigen::MatrixXd> P(manifold_matrices_.data() + manifold->matrices, n, n);
  ManifoldVector change;
  change.head(n).noalias() = P * u.head(n);
  if (manifold->state == Manifold::kFactorized) {
    manifold->state =
        SolvesManifold(*manifold, u, change) ? Manifold::kChecked : Manifold::kUnusable;
    if (manifold->state == Manifold::kUnusable) return false;
  }
  if (!InsideCones(problem, *manifold, *r, change)) {
    // Without the current self-equilibrated impulses (W_MM's null space: H_0 r = 0).
    const Eigen::Map<const Eigen::MatrixXd> Q(
        manifold_matrices_.data() + manifold->matrices + static_cast<size_t>(n) * n, n, n);
    const Eigen::VectorXd::SegmentReturnType rm = r->segment(3 * manifold->first, n);
    change.head(n).noalias() += Q * rm;
    change.head(n) -= rm;
    if (!InsideCones(problem, *manifold, *r, change)) return false;
  }
  for (int a = manifold->first, i = 0; a < manifold->end; ++a, ++i) {
    const Eigen::Vector3d delta = change.segment<3>(3 * i);
    r->segment<3>(3 * a) += delta;
    ScatterChange<true>(problem, a, delta, v_.data());
  }
  return true;
}

template <bool kCompact>
EIGEN_ALWAYS_INLINE int VelocityGaussSeidel::SolveContact(
    const GlobalFrictionContactProblem& problem, int a, int sweep, bool backward,
    Eigen::VectorXd* r, int* not_sticking) {
  if constexpr (kCompact) {
    // (Manifolds are runs from their first contact: met forward only.)
    const int k = manifold_of_[a];
    if (k >= 0 && !backward && StickManifold(problem, sweep, &manifolds_[k], r)) {
      return manifolds_[k].end;
    }
  }
  const double* v = v_.data();
  const Eigen::Vector3d u = LocalVelocity<kCompact>(problem, a, v);
  const Eigen::Vector3d old = r->segment<3>(3 * a);
  const bool apart = old.isZero(0.0);
  if (apart && u[0] >= 0.0) {  // stays apart: r_a = 0, no change
    ++*not_sticking;
    return a + 1;
  }
  if constexpr (kCompact) {
    if (!ready_[a]) MakeReady(problem, a);
  }
  const double mu = problem.mu()[a];
  const double omega = options_.relaxation;
  const Eigen::Vector3d q_local = apart ? u : Eigen::Vector3d(u - blocks_[a] * old);
  const Eigen::Vector3d solved = LocalSolve(a, q_local, mu, old);
  if (!(solved[0] > 0.0 && std::isnan(directions_[a].x()))) ++*not_sticking;
  Eigen::Vector3d next = omega == 1.0 ? solved : Eigen::Vector3d(old + omega * (solved - old));
  if (omega > 1.0) next = ProjectOntoCone(mu, next);
  const Eigen::Vector3d change = next - old;
  if (change.isZero(0.0)) return a + 1;
  r->segment<3>(3 * a) = next;
  ScatterChange<kCompact>(problem, a, change, v_.data());
  return a + 1;
}

template <bool kCompact>
void VelocityGaussSeidel::Sweep(const GlobalFrictionContactProblem& problem, int sweep,
                                bool backward, Eigen::VectorXd* r) {
  const int nc = problem.num_contacts();
  not_sticking_ = 0;
  if (backward) {
    for (int a = nc - 1; a >= 0; --a) {
      if constexpr (kCompact) {
        if (prefetch_ && a >= kPrefetchAhead) PrefetchVelocities(a - kPrefetchAhead);
      }
      SolveContact<kCompact>(problem, a, sweep, true, r, &not_sticking_);
    }
    return;
  }
  for (int a = 0; a < nc;) {
    if constexpr (kCompact) {
      if (prefetch_ && a + kPrefetchAhead < nc) PrefetchVelocities(a + kPrefetchAhead);
    }
    a = SolveContact<kCompact>(problem, a, sweep, false, r, &not_sticking_);
  }
}

bool VelocityGaussSeidel::ParallelSweepsApply(const GlobalFrictionContactProblem& problem,
                                              bool turned) const {
  return runner_ != nullptr && runner_->parts() >= 2 && stalled_solves_ == 0 && compact_ &&
         !turned && problem.num_contacts() >= kParallelContacts &&
         options_.time_limit_seconds == 0.0;
}

// Each part's contacts in the sweeps' order on a thread of its own, waiting where a contact of
// another part must come first (internal/sweep_parts.h): every contact's update is the one the
// one-thread sweeps make, on the same velocities, so the sweeps' result is theirs to the bit.
void VelocityGaussSeidel::ParallelSweeps(const GlobalFrictionContactProblem& problem, int first,
                                         int last, Eigen::VectorXd* r) {
  const int nc = problem.num_contacts();
  const int parts = runner_->parts();
  if (!parts_built_) {
    part_bodies_.resize(2 * static_cast<size_t>(nc));
    for (int k = 0; k < 2 * nc; ++k) part_bodies_[k] = slots_[k] < 0 ? -1 : slots_[k] / 6;
    unit_end_.assign(nc, 0);
    for (const Manifold& manifold : manifolds_) unit_end_[manifold.first] = manifold.end;
    sweep_parts_.Build(nc, part_bodies_, unit_end_, parts);
    parts_built_ = true;
  }
  sweep_parts_.Reset(first - 1);
  part_not_sticking_.assign(parts, 0);
  // (Two pointers captured: the std::function holds them without allocating.)
  struct Job {
    const GlobalFrictionContactProblem* problem;
    int first, last;
    Eigen::VectorXd* r;
  } job{&problem, first, last, r};
  runner_->Run(
      [this, &job](int part) { SweepPart(*job.problem, job.first, job.last, part, job.r); });
  not_sticking_ = 0;
  for (int count : part_not_sticking_) not_sticking_ += count;
  if (sweep_parts_.stalled()) stalled_solves_ = kStalledSolves;
}

// Sweep `sweep`, backward or forward as the cycle watch (turned at sweep `turned`, 0: not)
// has them alternate; on runner_'s threads, every sweep up to the next check (forward ones, as
// the watch turns only at checks). Returns the last sweep taken.
int VelocityGaussSeidel::SweepsFrom(const GlobalFrictionContactProblem& problem, int sweep,
                                    int next_check, int turned, Eigen::VectorXd* r) {
  if (ParallelSweepsApply(problem, turned > 0)) {
    const int through = std::max(sweep, std::min(next_check, options_.max_sweeps));
    ParallelSweeps(problem, sweep, through, r);
    return through;
  }
  const bool backward = turned > 0 && (sweep - turned) % 2 == 1;
  if (compact_) {
    Sweep<true>(problem, sweep, backward, r);
  } else {
    Sweep<false>(problem, sweep, backward, r);
  }
  return sweep;
}

// Sweeps first .. last of one part's contacts (ParallelSweeps), on the part's thread.
void VelocityGaussSeidel::SweepPart(const GlobalFrictionContactProblem& problem, int first,
                                    int last, int part, Eigen::VectorXd* r) {
  const int begin = sweep_parts_.first(part), end = sweep_parts_.first(part + 1);
  int not_sticking = 0;
  for (int sweep = first; sweep <= last; ++sweep) {
    not_sticking = 0;
    for (int a = begin; a < end;) {
      if (prefetch_ && a + kPrefetchAhead < end) PrefetchVelocities(a + kPrefetchAhead);
      sweep_parts_.Wait(a, sweep);
      const int next = SolveContact<true>(problem, a, sweep, false, r, &not_sticking);
      for (; a < next; ++a) sweep_parts_.Done(a, sweep);
    }
  }
  part_not_sticking_[part] = not_sticking;
}

// The least-norm sticking impulses r = -W^+ q through the bodies: with W = A K A^T (A = H^T, one
// 6-column block per body, K = M^-1) and A of full column rank (every body held in all six
// directions by its contacts, as a box face's corners hold it), W^+ = A G^-1 K^-1 G^-1 A^T with
// G = A^T A: two Cholesky solves of the bodies' size (6 a body) instead of a decomposition of
// the contacts' (3 a contact, 12 a face). False where G is singular or nearly so (a box on an
// edge), for the dense path.
bool VelocityGaussSeidel::StickImpulsesByBodies(const GlobalFrictionContactProblem& problem) {
  using Vector6 = Eigen::Matrix<double, 6, 1>;
  constexpr double kMinReciprocalCondition = 1e-10;
  const int nc = problem.num_contacts();
  const int m = problem.num_dofs();
  for (int k = 0; k < problem.num_blocks(); ++k) {
    if (problem.block_size(k) != 6) return false;  // a block without contacts, of another size
  }
  const Eigen::VectorXd& q_all = problem.local_q();
  stick_G_.setZero(m, m);
  stick_y_.setZero(m);
  for (int a = 0; a < nc; ++a) {
    const double* record = Record(a);
    const Eigen::Vector3d q = q_all.segment<3>(3 * a);
    for (int k = 0; k < 2; ++k) {
      const int sk = slots_[2 * a + k];
      if (sk < 0) continue;
      const Eigen::Map<const Eigen::Matrix<double, 6, 3>> Hk(record + 18 * k);
      stick_y_.segment<6>(sk).noalias() += Hk * q;
      for (int l = 0; l < 2; ++l) {
        const int sl = slots_[2 * a + l];
        if (sl < 0) continue;
        stick_G_.block<6, 6>(sk, sl).noalias() +=
            Hk * Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 18 * l).transpose();
      }
    }
  }
  stick_cholesky_.compute(stick_G_);
  if (stick_cholesky_.info() != Eigen::Success ||
      !(stick_cholesky_.rcond() >= kMinReciprocalCondition)) {
    return false;
  }
  stick_cholesky_.solveInPlace(stick_y_);
  for (int k = 0; k < problem.num_blocks(); ++k) {  // K^-1 y = M y, block by block
    const Vector6 y_k = stick_y_.segment<6>(problem.block_offset(k));
    stick_y_.segment<6>(problem.block_offset(k)).noalias() =
        Eigen::Map<const Eigen::Matrix<double, 6, 6>>(problem.mass_data(k)) * y_k;
  }
  stick_cholesky_.solveInPlace(stick_y_);
  stick_r_.resize(3 * nc);
  for (int a = 0; a < nc; ++a) {
    const double* record = Record(a);
    Eigen::Vector3d r_a = Eigen::Vector3d::Zero();
    for (int k = 0; k < 2; ++k) {
      if (slots_[2 * a + k] >= 0) {
        r_a.noalias() -=
            Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record + 18 * k).transpose() *
            stick_y_.segment<6>(slots_[2 * a + k]);
      }
    }
    stick_r_.segment<3>(3 * a) = r_a;
  }
  return stick_r_.allFinite();
}

// The same from W formed from the records, W_ab = sum over the blocks both contacts touch of
// H_a^T B_b, by a complete orthogonal decomposition.
void VelocityGaussSeidel::StickImpulsesDense(const GlobalFrictionContactProblem& problem) {
  const int nc = problem.num_contacts();
  const int n = 3 * nc;
  stick_W_.setZero(n, n);
  for (int a = 0; a < nc; ++a) {
    const double* record_a = Record(a);
    for (int b = 0; b < nc; ++b) {
      for (int k = 0; k < 2; ++k) {
        for (int l = 0; l < 2; ++l) {
          if (slots_[2 * a + k] < 0 || slots_[2 * a + k] != slots_[2 * b + l]) continue;
          stick_W_.block<3, 3>(3 * a, 3 * b).noalias() +=
              Eigen::Map<const Eigen::Matrix<double, 6, 3>>(record_a + 18 * k).transpose() *
              ProductOf(b, l);
        }
      }
    }
  }
  stick_decomposition_.compute(stick_W_);
  stick_r_ = -stick_decomposition_.solve(problem.local_q());
}

bool VelocityGaussSeidel::StickIsland(const GlobalFrictionContactProblem& problem,
                                      Eigen::VectorXd* r, FrictionErrors* errors) {
  const int nc = problem.num_contacts();
  for (int a = 0; a < nc; ++a) {
    if (!ready_[a]) MakeReady(problem, a);
  }
  if (!StickImpulsesByBodies(problem)) StickImpulsesDense(problem);
  if (!stick_r_.allFinite()) return false;
  // Kept, not recomputed from *r: the sweeps' v_ carries their rounding, and a failed attempt
  // leaves them bit for bit as they were.
  stick_v_ = v_;
  stick_u_ = u_;
  problem.Velocity(stick_r_, &v_);
  ContactVelocities(problem);
  const FrictionErrors stuck =
      internal::FrictionErrorsOf(problem.mu(), problem.local_q_norm(), stick_r_, u_);
  if (stuck.fclib <= options_.tolerance) {
    *r = stick_r_;
    *errors = stuck;
    return true;
  }
  v_.swap(stick_v_);  // back to where the attempt started
  u_.swap(stick_u_);
  return false;
}

// Signs that the island may rest, so that the sticking solve is tried where it is likely to
// succeed (on the 200-box pile at 5 sweeps, where cubes tumble, most attempts without them
// fail): every contact presses (where one is apart or newly met the sticking impulses would
// pull); at the start every contact is inside its cone (a contact sliding on in a warm start
// lies on the boundary, to rounding); between sweeps at most one contact in ten was left apart
// or sliding by the last sweep (a landing column's sweeps still slide a few contacts while the
// normal impulses pass between its boxes; a tumbling pile's slide more).
constexpr double kInsideCone = 1.0 - 1e-6;
constexpr int kMaxNotStickingShare = 10;  // at most one contact in this many

bool VelocityGaussSeidel::MayStickIsland(const GlobalFrictionContactProblem& problem,
                                         Eigen::VectorXd* r, FrictionErrors* errors,
                                         bool* stick_tried, bool at_start) {
  const int nc = problem.num_contacts();
  if (*stick_tried || !options_.stick_islands || !compact_ || nc > kMaxStickContacts) {
    return false;
  }
  if (!at_start && kMaxNotStickingShare * not_sticking_ > nc) return false;
  const Eigen::VectorXd& mu = problem.mu();
  for (int a = 0; a < nc; ++a) {
    const double* ra = r->data() + 3 * a;
    if (!(ra[0] > 0.0)) return false;
    if (at_start && !(TangentNorm(ra[1], ra[2]) < kInsideCone * mu[a] * ra[0])) return false;
  }
  *stick_tried = true;
  return StickIsland(problem, r, errors);
}

// Anderson's combination (internal/anderson.h) with v as the second vector: v = M^-1 (H r + f)
// is affine in r, and a contact's projection onto its cone moves v by B_a times the projection's
// change.
bool VelocityGaussSeidel::Accelerate(const GlobalFrictionContactProblem& problem,
                                     Eigen::VectorXd* r) {
  if (!anderson_.Combine(options_.anderson_memory, anderson_before_, r, &v_)) return false;
  const Eigen::VectorXd& mu = problem.mu();
  for (int a = 0; a < problem.num_contacts(); ++a) {
    const Eigen::Vector3d combined = r->segment<3>(3 * a);
    const Eigen::Vector3d projected = ProjectOntoCone(mu[a], combined);
    if (projected == combined) continue;
    r->segment<3>(3 * a) = projected;
    if (compact_) {
      if (!ready_[a]) MakeReady(problem, a);
      ScatterChange<true>(problem, a, projected - combined, v_.data());
    } else {
      ScatterChange<false>(problem, a, projected - combined, v_.data());
    }
  }
  return true;
}

int VelocityGaussSeidel::SweepsAfter(const GlobalFrictionContactProblem& problem, int sweep,
                                     int next_check, int turned, bool* accelerated,
                                     Eigen::VectorXd* r) {
  if (options_.anderson_memory == 0 || turned > 0) {
    return SweepsFrom(problem, sweep + 1, next_check, turned, r);
  }
  if (sweep > 0) {
    if (Accelerate(problem, r)) *accelerated = true;
  }
  anderson_before_ = *r;
  return SweepsFrom(problem, sweep + 1, sweep + 1, turned, r);
}

FrictionErrors VelocityGaussSeidel::ErrorsAtCheck(const GlobalFrictionContactProblem& problem,
                                                  const Eigen::VectorXd& r, bool accelerated) {
  ContactVelocities(problem);
  FrictionErrors errors = internal::FrictionErrorsOf(problem.mu(), problem.local_q_norm(), r, u_);
  if (accelerated && errors.fclib <= options_.tolerance) {
    problem.Velocity(r, &v_);
    ContactVelocities(problem);
    errors = internal::FrictionErrorsOf(problem.mu(), problem.local_q_norm(), r, u_);
  }
  return errors;
}

int VelocityGaussSeidel::NextCheck(const Options& options, int sweep, double error, int last_check,
                                   double last_error) {
  int next = sweep + std::min(20, (sweep + 1) / 2);
  if (last_check > 0 && error > options.tolerance) {
    const double rate = std::pow(error / last_error, 1.0 / (sweep - last_check));
    const double at_end = error * std::pow(rate, options.max_sweeps - sweep);
    if (!(at_end <= 10.0 * options.tolerance)) {
      next = std::max(next, std::min(options.max_sweeps, sweep + 20));
    }
  }
  return next;
}

const VelocityGaussSeidel::Summary& VelocityGaussSeidel::Solve(
    const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r) {
  const auto start = std::chrono::steady_clock::now();
  ResetSummaryKeepingStorage(&summary_);
  Summary& summary = summary_;
  summary.solver = "nsgs-velocity";
  summary.tolerance = options_.tolerance;
  const auto elapsed = [&]() { return internal::SecondsSince(start); };
  if (!AcceptOptions(options_, &summary)) return summary;
  const int nc = problem.num_contacts();
  const int m = problem.size();
  const Eigen::VectorXd& mu = problem.mu();

  if (!(options_.warm_start && r->size() == m && internal::AllFinite(*r))) r->setZero(m);
  for (int a = 0; a < nc; ++a) r->segment<3>(3 * a) = ProjectOntoCone(mu[a], r->segment<3>(3 * a));

  // v = M^-1 (H r + f) and u from the start, through the problem's own rows: a start that
  // solves the problem (a warm start at rest, the common case on a resting island) ends the
  // solve before the sweeps' records are prepared. (The records' product is the same
  // expression on copies of the same rows: u to the bit.)
  const double q_norm = problem.local_q_norm();
  // The errors at *r from u_; a point that ends the solve is described too (its contacts'
  // states) from the same errors.
  const auto errors_at = [&]() { return internal::FrictionErrorsOf(mu, q_norm, *r, u_); };
  problem.Velocity(*r, &v_);
  problem.ContactVelocity(v_, &u_);
  best_ = *r;
  FrictionErrors errors = errors_at();
  double best_error = errors.fclib;
  // Whether v_, u_ and summary's description are exact for *r == best_.
  bool described = false;
  int sweep = 0;
  bool converged = best_error <= options_.tolerance;
  if (converged) {
    internal::DescribeFrictionPointOf(mu, errors, *r, &summary);
    described = true;
  } else {
    Prepare(problem);
    prefetch_ = problem.num_dofs() > kPrefetchDofs;
  }
  bool stick_tried = false;
  if (!converged && MayStickIsland(problem, r, &errors, &stick_tried, true)) {
    internal::DescribeFrictionPointOf(mu, errors, *r, &summary);
    best_ = *r;
    best_error = errors.fclib;
    described = converged = true;
  }
  bool timed_out = false;
  int next_check = 1, last_check = 0;
  double last_error = best_error;
  internal::RateWindow window(sweep, best_error);
  internal::CycleWatch cycle(options_.reverse_on_stall, kCycleSweeps, best_error);
  anderson_.Restart();
  bool accelerated = false;  // some sweep started from an Anderson combination
  while (!converged && sweep < options_.max_sweeps && std::isfinite(best_error)) {
    sweep = SweepsAfter(problem, sweep, next_check, cycle.turned_at(), &accelerated, r);
    if (options_.time_limit_seconds > 0.0 && elapsed() > options_.time_limit_seconds) {
      timed_out = true;
    }
    // The error costs a third of a sweep: checked after sweeps 1, 2, 3, 5, 8, 12, ... (then
    // every 20) and after the last; when the rate since the previous check leaves it above ten
    // times the tolerance after the last sweep, 20 sweeps later or after the last.
    const bool last = sweep >= options_.max_sweeps || timed_out;
    if (sweep < next_check && !last) continue;
    errors = ErrorsAtCheck(problem, *r, accelerated);
    const double error = errors.fclib;
    next_check = NextCheck(options_, sweep, error, last_check, last_error);
    last_check = sweep;
    last_error = error;
    converged = error <= options_.tolerance;
    if (!converged && !last && MayStickIsland(problem, r, &errors, &stick_tried, false)) {
      best_ = *r;
      best_error = errors.fclib;
      described = converged = true;
    }
    if (converged || last) internal::DescribeFrictionPointOf(mu, errors, *r, &summary);
    if (!(error >= best_error)) {
      best_error = error;
      best_ = *r;
      described = last || converged;
    }
    if (!std::isfinite(error)) break;
    if (timed_out) {
      timed_out = !converged;
      break;
    }
    cycle.Update(sweep, best_error);
    if (!converged && !last &&
        window.Stalled(options_.rate_window, options_.tolerance, options_.max_sweeps, sweep,
                       best_error)) {
      break;
    }
  }
  if (!described) {
    *r = best_;
    problem.Velocity(*r, &v_);
    ContactVelocities(problem);
    DescribeFrictionPoint(problem, *r, u_, &summary);
  }
  internal::SetSweepOutcome(options_.tolerance, sweep, timed_out, *r, &summary);
  if (window.stalled()) window.Explain("sweeps", &summary.message);
  cycle.Explain(sweep, "backward and forward sweeps in turn", "no progress in one order",
                &summary.message);
  summary.wall_time_seconds = elapsed();
  return summary;
}

}  // namespace ncpkit
