#include "solvers/sensitivity/friction_sensitivity.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "solvers/base/input_error.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/lcp/independent_blocks.h"

namespace ncpkit {

namespace {

// How far outside its cone, relative to 1 + ||r||_inf, a contact's impulse may lie and still be
// taken as a solver's answer (at FCLib error 1e-6, RockPile's lies outside by more than 1e-7).
constexpr double kOutsideCone = 1e-3;

Eigen::Vector2d Perpendicular(const Eigen::Vector2d& d) { return Eigen::Vector2d(-d.y(), d.x()); }

void RequireCompliances(const Eigen::MatrixX2d& compliances, Eigen::Index num_contacts) {
  if (compliances.rows() != num_contacts || !compliances.allFinite() ||
      !(compliances.array() > 0.0).all()) {
    throw InputError(
        "sensitivity: the convex model needs a positive, finite compliance pair per "
        "contact (" +
        std::to_string(compliances.rows()) + " for " + std::to_string(num_contacts) + " contacts)");
  }
}

// FC(W, q, mu) given by its parts: the checks FrictionContactProblem's constructor makes.
void RequireProblemParts(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& mu) {
  if (W.rows() != W.cols() || W.rows() != 3 * mu.size() || q.size() != W.rows()) {
    throw InputError("sensitivity: W is " + std::to_string(W.rows()) + " x " +
                     std::to_string(W.cols()) + ", q has " + std::to_string(q.size()) +
                     " entries and mu " + std::to_string(mu.size()) +
                     ": expected 3 n_c, 3 n_c and n_c");
  }
  const Eigen::Map<const Eigen::VectorXd> values(W.valuePtr(), W.nonZeros());
  if (!values.allFinite() || !q.allFinite() || !mu.allFinite() || (mu.array() < 0.0).any())
    throw InputError("sensitivity: W, q and mu must be finite and mu >= 0");
}

}  // namespace

FrictionSensitivity::FrictionSensitivity(const FrictionContactProblem& problem,
                                         const Eigen::VectorXd& r,
                                         const SensitivityOptions& options)
    : r_(r), pattern_(problem.W_columns()) {
  Start(problem.q(), problem.mu(), options);
}

FrictionSensitivity::FrictionSensitivity(const FrictionContactProblem& problem,
                                         const Eigen::VectorXd& r,
                                         const Eigen::MatrixX2d& compliances,
                                         const SensitivityOptions& options)
    : r_(r), pattern_(problem.W_columns()), compliance_(compliances) {
  RequireCompliances(compliances, problem.num_contacts());
  Start(problem.q(), problem.mu(), options);
}

FrictionSensitivity::FrictionSensitivity(Eigen::SparseMatrix<double> W, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                                         const SensitivityOptions& options)
    : r_(r), pattern_(std::move(W)) {
  pattern_.makeCompressed();
  RequireProblemParts(pattern_, q, mu);
  Start(q, mu, options);
}

FrictionSensitivity::FrictionSensitivity(Eigen::SparseMatrix<double> W, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                                         const Eigen::MatrixX2d& compliances,
                                         const SensitivityOptions& options)
    : r_(r), pattern_(std::move(W)), compliance_(compliances) {
  pattern_.makeCompressed();
  RequireProblemParts(pattern_, q, mu);
  RequireCompliances(compliances, mu.size());
  Start(q, mu, options);
}

FrictionSensitivity::FrictionSensitivity(const GlobalFrictionContactProblem& problem,
                                         const Eigen::VectorXd& r,
                                         const SensitivityOptions& options)
    : r_(r) {
  ProjectImpulses(problem.local_q(), problem.mu(), options);
  Eigen::VectorXd v, u;  // u = H^T M^-1 (H r + f) + w = W r + q
  problem.Velocity(r_, &v);
  problem.ContactVelocity(v, &u);
  Classify(problem.local_q(), problem.mu(), u, options);
  if (FactorizeFromRows(problem)) {
    w_formed_ = false;
    return;
  }
  pattern_ = problem.Delassus();
  Assemble(problem.mu(), options.max_dense_least_squares);
}

namespace {

using RowsGroup = internal::SelectedSystem::RowsGroup;

// The groups of bodies that sticking contacts join (sticking[a]): each group's mass matrix, and in
// column[body] a body's first column in its group's rows. The groups are `bodies`' blocks.
std::vector<RowsGroup> BodyGroups(const GlobalFrictionContactProblem& problem,
                                  const std::vector<char>& sticking, IndependentBlocks* bodies,
                                  std::vector<int>* column) {
  bodies->Start(problem.num_blocks());
  for (int a = 0; a < problem.num_contacts(); ++a) {
    if (!sticking[a]) continue;
    for (int p = problem.piece_begin(a) + 1; p < problem.piece_begin(a + 1); ++p)
      bodies->Join(problem.piece_block(problem.piece_begin(a)), problem.piece_block(p));
  }
  bodies->Number();
  std::vector<RowsGroup> groups(bodies->num_blocks());
  column->assign(problem.num_blocks(), 0);
  for (int g = 0; g < bodies->num_blocks(); ++g) {
    int d = 0;
    for (int k = 0; k < bodies->block_size(g); ++k) {
      const int body = bodies->members(g)[k];
      (*column)[body] = d;
      d += problem.block_size(body);
    }
    groups[g].mass.setZero(d, d);
    for (int k = 0; k < bodies->block_size(g); ++k) {
      const int body = bodies->members(g)[k], b = problem.block_size(body);
      groups[g].mass.block((*column)[body], (*column)[body], b, b) =
          Eigen::Map<const Eigen::MatrixXd>(problem.mass_data(body), b, b);
    }
  }
  return groups;
}

}  // namespace

bool FrictionSensitivity::FactorizeFromRows(const GlobalFrictionContactProblem& problem) {
  const int nc = num_contacts();
  std::vector<char> sticking(nc, 0);
  for (int a = 0; a < nc; ++a) {
    if (state_[a] == ContactState::Apart) continue;
    if (state_[a] != ContactState::Sticking) return false;
    if (problem.piece_begin(a) == problem.piece_begin(a + 1)) return false;  // no moving body
    sticking[a] = 1;
  }
  IndependentBlocks bodies;
  std::vector<int> column;
  std::vector<RowsGroup> groups = BodyGroups(problem, sticking, &bodies, &column);
  std::vector<int> contacts_in(groups.size(), 0);
  for (int a = 0; a < nc; ++a) {
    if (sticking[a]) ++contacts_in[bodies.block(problem.piece_block(problem.piece_begin(a)))];
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].rows.setZero(3 * contacts_in[g], groups[g].mass.rows());
    groups[g].unknowns.reserve(3 * contacts_in[g]);
  }
  std::fill(contacts_in.begin(), contacts_in.end(), 0);
  for (int a = 0; a < nc; ++a) {
    if (!sticking[a]) continue;
    const int g = bodies.block(problem.piece_block(problem.piece_begin(a)));
    for (int k = 0; k < 3; ++k) groups[g].unknowns.push_back(3 * a + k);
    const int row = 3 * contacts_in[g]++;
    for (int p = problem.piece_begin(a); p < problem.piece_begin(a + 1); ++p) {
      const int body = problem.piece_block(p);
      groups[g].rows.block(row, column[body], 3, problem.block_size(body)) =
          problem.PieceRows(p).transpose();
    }
  }
  // A body in no sticking contact has no unknowns here; an apart contact's dr = 0 is a group of
  // its own (rows and mass the identity).
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const RowsGroup& group) { return group.unknowns.empty(); }),
               groups.end());
  for (int a = 0; a < nc; ++a) {
    if (sticking[a]) continue;
    RowsGroup apart;
    apart.unknowns = {3 * a, 3 * a + 1, 3 * a + 2};
    apart.rows = Eigen::Matrix3d::Identity();
    apart.mass = Eigen::Matrix3d::Identity();
    groups.push_back(std::move(apart));
  }
  return system_.FactorizeFromRows(num_unknowns_, &groups);
}

void FrictionSensitivity::ProjectImpulses(const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                                          const SensitivityOptions& options) {
  const Eigen::VectorXd r = r_;
  RequireValidOptions(options, "sensitivity");
  if (r.size() != q.size())
    throw InputError("sensitivity: r has " + std::to_string(r.size()) + " entries, the problem " +
                     std::to_string(q.size()));
  if (!r.allFinite()) throw InputError("sensitivity: r is not finite");
  // A solver stops within its tolerance of the cones, not on them: r is taken onto its cones
  // first, and only a point far outside (kOutsideCone of its scale) is refused as no solution.
  const double scale = 1.0 + r.lpNorm<Eigen::Infinity>();
  for (int a = 0; a < mu.size(); ++a) {
    const Eigen::Vector3d projected = ProjectOntoCone(mu[a], r.segment<3>(3 * a));
    if ((projected - r.segment<3>(3 * a)).norm() > kOutsideCone * scale)
      throw InputError("sensitivity: r of contact " + std::to_string(a) + " is outside its cone");
    r_.segment<3>(3 * a) = projected;
  }
}

void FrictionSensitivity::Start(const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                                const SensitivityOptions& options) {
  pattern_.makeCompressed();  // (AddEntries reads its arrays)
  ProjectImpulses(q, mu, options);
  Eigen::VectorXd u = q;
  u.noalias() += pattern_ * r_;
  for (int a = 0; a < compliance_.rows(); ++a) {  // the convex model's u + R r
    u.segment<3>(3 * a) += r_.segment<3>(3 * a).cwiseProduct(
        Eigen::Vector3d(compliance_(a, 0), compliance_(a, 1), compliance_(a, 1)));
  }
  Classify(q, mu, u, options);
  Assemble(mu, options.max_dense_least_squares);
}

void FrictionSensitivity::Classify(const Eigen::VectorXd& q, const Eigen::VectorXd& mu_of,
                                   const Eigen::VectorXd& u, const SensitivityOptions& options) {
  const int nc = static_cast<int>(mu_of.size());
  const double r_tolerance = options.degeneracy_tolerance * (1.0 + r_.lpNorm<Eigen::Infinity>());
  const double u_tolerance = options.degeneracy_tolerance * (1.0 + q.lpNorm<Eigen::Infinity>());
  const bool bound_side = options.degenerate_side == DegenerateSide::Bound;
  state_.assign(nc, ContactState::Apart);
  direction_.assign(nc, Eigen::Vector2d::Zero());
  slip_.assign(nc, 0.0);
  extra_.assign(nc, -1);
  num_unknowns_ = 3 * nc;
  for (int a = 0; a < nc; ++a) {
    const double mu = mu_of[a], rn = r_[3 * a];
    const Eigen::Vector2d rt(r_[3 * a + 1], r_[3 * a + 2]), ut(u[3 * a + 1], u[3 * a + 2]);
    const double slip = ut.norm();
    // The normal velocity beyond the cone's: u_N for Coulomb, ũ_N - mu ||ũ_T|| for the convex
    // model (zero where it slides).
    const double un = u[3 * a] - (compliance_.rows() > 0 ? mu * slip : 0.0);
    ContactState state = ContactState::Apart;
    if (rn <= r_tolerance && un > u_tolerance) {
      state = ContactState::Apart;
    } else if (rn <= r_tolerance && bound_side) {
      degenerate_.push_back(a);  // grazing, taken apart
      state = ContactState::Apart;
    } else {
      const bool grazing = rn <= r_tolerance;
      const bool at_edge =
          !grazing && mu > 0.0 && slip <= u_tolerance && rt.norm() >= mu * rn - r_tolerance;
      if (grazing || at_edge) degenerate_.push_back(a);
      if (slip > u_tolerance) {
        state = ContactState::Sliding;
        direction_[a] = -ut / slip;
        slip_[a] = slip;
      } else if (mu == 0.0) {
        state = ContactState::Frictionless;
      } else if (at_edge && bound_side) {
        state = ContactState::Sliding;  // about to slip along -d
        direction_[a] = rt / rt.norm();
      } else {
        state = ContactState::Sticking;
      }
    }
    state_[a] = state;
    if (state == ContactState::Sliding) {
      extra_[a] = num_unknowns_;
      num_unknowns_ += 2;
    }
  }
}

std::vector<int> FrictionSensitivity::RowsOfW() const {
  std::vector<int> rows(3 * static_cast<size_t>(num_contacts()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const int a = i / 3, k = i % 3;
    switch (state_[a]) {
      case ContactState::Apart:
        rows[i] = -1;
        break;
      case ContactState::Sticking:
        rows[i] = i;
        break;
      case ContactState::Frictionless:
        rows[i] = k == 0 ? i : -1;
        break;
      case ContactState::Sliding:
        rows[i] = k == 0 ? i : extra_[a] + k - 1;
        break;
    }
  }
  return rows;
}

template <class Add>
void FrictionSensitivity::AddEntries(const Eigen::VectorXd& mu_of, const std::vector<int>& row_of,
                                     const Add& add) const {
  // Looked up per entry of W (RowsOfW): a resting stack's W has some 70 entries per contact.
  const int* outer = pattern_.outerIndexPtr();
  const int* inner = pattern_.innerIndexPtr();
  const double* values = pattern_.valuePtr();
  for (int j = 0; j < pattern_.outerSize(); ++j) {
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      const int row = row_of[inner[p]];
      if (row >= 0) add(row, j, values[p]);
    }
  }
  for (int i = 0; i < 3 * compliance_.rows(); ++i) {  // the convex model's (W + R) dr
    const int row = row_of[i];
    if (row >= 0) add(row, i, compliance_(i / 3, i % 3 == 0 ? 0 : 1));
  }
  for (int a = 0; a < num_contacts(); ++a) {
    const int n = 3 * a;
    switch (state_[a]) {
      case ContactState::Apart:
        for (int k = 0; k < 3; ++k) add(n + k, n + k, 1.0);
        break;
      case ContactState::Frictionless:
        for (int k = 1; k < 3; ++k) add(n + k, n + k, 1.0);
        break;
      case ContactState::Sticking:
        break;
      case ContactState::Sliding: {
        const double mu = mu_of[a], rn = r_[n];
        const Eigen::Vector2d d = direction_[a], perpendicular = Perpendicular(d);
        const int e = extra_[a];
        // The convex model's normal row: (W dr + R dr)_N - mu ds = -dF_N + s dmu.
        if (compliance_.rows() > 0) add(n, e, -mu);
        for (int m = 0; m < 2; ++m) {
          // dr_T - mu d dr_N - mu r_N d_perp dphi = dmu r_N d.
          add(n + 1 + m, n + 1 + m, 1.0);
          add(n + 1 + m, n, -mu * d[m]);
          add(n + 1 + m, e + 1, -mu * rn * perpendicular[m]);
          // (W dr)_T + d ds + s d_perp dphi = -dF_T.
          add(e + m, e, d[m]);
          add(e + m, e + 1, slip_[a] * perpendicular[m]);
        }
        break;
      }
    }
  }
}

void FrictionSensitivity::Assemble(const Eigen::VectorXd& mu, int max_dense_least_squares) {
  // Most systems (a step's islands of a few bodies) go straight into dense blocks.
  const std::vector<int> row_of = RowsOfW();
  const auto for_each_entry = [&](const auto& add) { AddEntries(mu, row_of, add); };
  if (system_.FactorizeSmallBlocks(num_unknowns_, for_each_entry)) return;
  std::vector<Eigen::Triplet<double>> triplets;
  AddEntries(mu, row_of, [&](int i, int j, double value) { triplets.emplace_back(i, j, value); });
  Eigen::SparseMatrix<double> K(num_unknowns_, num_unknowns_);
  K.setFromTriplets(triplets.begin(), triplets.end());
  system_.Factorize(K, max_dense_least_squares, "the contacts' equations");
}

void FrictionSensitivity::RightHandSide(const Eigen::Ref<const Eigen::VectorXd>& dF,
                                        const Eigen::Ref<const Eigen::VectorXd>& dmu,
                                        Eigen::Ref<Eigen::VectorXd> b) const {
  b.setZero();
  const bool moved = dF.size() != 0, friction_moved = dmu.size() != 0;
  for (int a = 0; a < num_contacts(); ++a) {
    const int n = 3 * a;
    const double dmu_a = friction_moved ? dmu[a] : 0.0;
    switch (state_[a]) {
      case ContactState::Apart:
        break;
      case ContactState::Sticking:
        if (moved) b.segment<3>(n) = -dF.segment<3>(n);
        break;
      case ContactState::Frictionless:
        if (moved) b[n] = -dF[n];
        break;
      case ContactState::Sliding:
        b[n] = (moved ? -dF[n] : 0.0) + (compliance_.rows() > 0 ? slip_[a] * dmu_a : 0.0);
        b.segment<2>(n + 1) = dmu_a * r_[n] * direction_[a];
        if (moved) b.segment<2>(extra_[a]) = -dF.segment<2>(n + 1);
        break;
    }
  }
}

Eigen::VectorXd FrictionSensitivity::Jvp(const Tangent& tangent) const {
  const int n = size();
  Eigen::VectorXd dF = Eigen::VectorXd::Zero(n), dmu = Eigen::VectorXd::Zero(num_contacts());
  if (tangent.q.size() != 0) {
    if (tangent.q.size() != n) throw InputError("sensitivity: dq has the wrong size");
    dF = tangent.q;
  }
  if (tangent.W.rows() != 0 || tangent.W.cols() != 0) {
    if (tangent.W.rows() != n || tangent.W.cols() != n)
      throw InputError("sensitivity: dW has the wrong size");
    dF.noalias() += tangent.W * r_;
  }
  if (tangent.mu.size() != 0) {
    if (tangent.mu.size() != num_contacts())
      throw InputError("sensitivity: dmu has the wrong size");
    dmu = tangent.mu;
  }
  Eigen::VectorXd b(num_unknowns_);
  RightHandSide(dF, dmu, b);
  return system_.Solve(b, false).head(n);
}

Eigen::MatrixXd FrictionSensitivity::JvpColumns(const Eigen::MatrixXd& dq,
                                                const Eigen::MatrixXd& dmu) const {
  const int n = size();
  const Eigen::Index k = std::max(dq.cols(), dmu.cols());
  if ((dq.rows() != 0 && (dq.rows() != n || dq.cols() != k)) ||
      (dmu.rows() != 0 && (dmu.rows() != num_contacts() || dmu.cols() != k))) {
    throw InputError("sensitivity: dq or dmu has the wrong size");
  }
  Eigen::MatrixXd b(num_unknowns_, k);
  for (Eigen::Index j = 0; j < k; ++j) {  // (an empty dq or dmu: 0 rows, zero)
    const Eigen::Map<const Eigen::VectorXd> dq_j(dq.data() + j * dq.rows(), dq.rows()),
        dmu_j(dmu.data() + j * dmu.rows(), dmu.rows());
    RightHandSide(dq_j, dmu_j, b.col(j));
  }
  return system_.SolveColumns(b, false).topRows(n);
}

Eigen::MatrixXd FrictionSensitivity::UndeterminedImpulses() const {
  if (!system_.least_squares()) return Eigen::MatrixXd(size(), 0);
  return system_.null_basis().topRows(size());
}

FrictionSensitivity::Gradient FrictionSensitivity::Vjp(const Eigen::VectorXd& g) const {
  const int n = size();
  if (g.size() != n) throw InputError("sensitivity: g has the wrong size");
  Eigen::VectorXd extended = Eigen::VectorXd::Zero(num_unknowns_);
  extended.head(n) = g;
  const Eigen::VectorXd y = system_.Solve(extended, true);
  Gradient out;
  out.q = Eigen::VectorXd::Zero(n);
  out.mu = Eigen::VectorXd::Zero(num_contacts());
  for (int a = 0; a < num_contacts(); ++a) {
    const int c = 3 * a;
    switch (state_[a]) {
      case ContactState::Apart:
        break;
      case ContactState::Sticking:
        out.q.segment<3>(c) = -y.segment<3>(c);
        break;
      case ContactState::Frictionless:
        out.q[c] = -y[c];
        break;
      case ContactState::Sliding:
        out.q[c] = -y[c];
        out.q.segment<2>(c + 1) = -y.segment<2>(extra_[a]);
        out.mu[a] = r_[c] * direction_[a].dot(y.segment<2>(c + 1)) +
                    (compliance_.rows() > 0 ? slip_[a] * y[c] : 0.0);
        break;
    }
  }
  out.W_left = out.q;
  return out;
}

Eigen::MatrixXd FrictionSensitivity::MatrixGradient(const Gradient& gradient) const {
  return gradient.W_left * r_.transpose();
}

Eigen::MatrixXd FrictionSensitivity::Jacobian(Input input) const {
  const int n = size(), nc = num_contacts();
  if (input == Input::W && !w_formed_) {
    throw InputError(
        "sensitivity: the Jacobian with respect to W needs W, which this sensitivity (built from "
        "the global form's rows) did not form");
  }
  internal::RequireDenseJacobianSize(n,
                                     input == Input::mu  ? nc
                                     : input == Input::W ? static_cast<double>(pattern_.nonZeros())
                                                         : n,
                                     input == Input::mu  ? "mu"
                                     : input == Input::W ? "W"
                                                         : "q");
  if (input == Input::mu) {
    Eigen::MatrixXd out(n, nc);
    for (int a = 0; a < nc; ++a) {
      Tangent t;
      t.mu = Eigen::VectorXd::Unit(nc, a);
      out.col(a) = Jvp(t);
    }
    return out;
  }
  Eigen::MatrixXd by_q(n, n);
  for (int i = 0; i < n; ++i) {
    Tangent t;
    t.q = Eigen::VectorXd::Unit(n, i);
    by_q.col(i) = Jvp(t);
  }
  if (input == Input::q) return by_q;
  return internal::ColumnsPerEntry(by_q, pattern_, r_);  // dr/dW_ij = r_j dr/dq_i
}

}  // namespace ncpkit
