#include "integrators/explicit/linearized.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "integrators/explicit_stepper.h"
#include "solvers/base/input_error.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/sensitivity/linear_sensitivity.h"

namespace ncpkit::internal {

Eigen::Vector2d PyramidEdge(int k, int n) {
  const double angle = 2.0 * M_PI * k / n;
  return Eigen::Vector2d(std::cos(angle), std::sin(angle));
}

int SplitOverEdges(const Eigen::Vector2d& t, int n, Eigen::Vector2d* ab) {
  const double step = 2.0 * M_PI / n;
  double angle = std::atan2(t.y(), t.x());
  if (angle < 0.0) angle += 2.0 * M_PI;
  const int k = std::min(n - 1, static_cast<int>(angle / step));
  const Eigen::Vector2d d0 = PyramidEdge(k, n), d1 = PyramidEdge((k + 1) % n, n);
  Eigen::Matrix2d D;
  D << d0, d1;
  *ab = D.inverse() * t;
  *ab = ab->cwiseMax(0.0);
  return k;
}

LinearizedConeModel::LinearizedConeModel(const ExplicitStepperOptions& options, int unknowns,
                                         int impulse_columns, const char* problem_name)
    : directions_(options.friction_directions),
      unknowns_(unknowns),
      impulse_columns_(impulse_columns),
      problem_name_(problem_name),
      warm_start_(options.warm_start) {
  // The proximal solver hands every attempt its start (or an empty one for cold).
  SolverOptions linear = options.SolverSettings();
  linear.warm_start = true;
  solver_ = CreateSolver(options.solver, ProblemKind::Linear, linear);
  ProximalPointSolver::Options proximal;
  proximal.relative_regularization = options.proximal_regularization;
  proximal.max_outer_iterations = options.max_proximal_iterations;
  proximal_ = std::make_unique<ProximalPointSolver>(solver_.get(), proximal);
}

void LinearizedConeModel::ComputeDelassusBlocks(const ExplicitStepContext& step,
                                                const IslandView& island) {
  const ExplicitWorkspace& w = step.workspace;
  blocks_.clear();
  for (int k = 0; k < island.num_bodies; ++k) {
    const int body = island.bodies[k];
    const auto* first = w.by_body.data() + w.by_body_begin[body];
    const auto* last = w.by_body.data() + w.by_body_begin[body + 1];
    for (const auto* p1 = first; p1 != last; ++p1) {
      const auto [c1, side1] = *p1;
      const Matrix36& J1 = side1 == 0 ? w.rows_a[c1] : w.rows_b[c1];
      const Matrix36 J1_Minv = J1 * w.inverse_mass[body];
      const int row = w.islands.local_index(c1);
      for (const auto* p2 = first; p2 != last; ++p2) {
        const auto [c2, side2] = *p2;
        const Matrix36& J2 = side2 == 0 ? w.rows_a[c2] : w.rows_b[c2];
        blocks_.push_back({row, w.islands.local_index(c2), J1_Minv * J2.transpose()});
      }
    }
  }
}

void LinearizedConeModel::Assemble(const ExplicitStepContext& step, const IslandView& island) {
  const ExplicitWorkspace& w = step.workspace;
  const int n = unknowns_, g = impulse_columns_, num_contacts = island.num_links;
  triplets_.clear();
  ComputeDelassusBlocks(step, island);
  triplets_.reserve(blocks_.size() * g * g + 3 * (n - g) * directions_ * num_contacts);
  half_.resize(3, g);
  block_value_.resize(g, g);
  for (const Block& block : blocks_) {
    half_.noalias() = block.value * generators_[block.col];
    block_value_.noalias() = generators_[block.row].transpose() * half_;
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < g; ++j)
        triplets_.emplace_back(n * block.row + i, n * block.col + j, block_value_(i, j));
  }
  q_.resize(n * num_contacts);
  for (int k = 0; k < num_contacts; ++k) {
    const int c = island.links[k];
    q_.segment(n * k, g).noalias() =
        generators_[k].transpose() * w.contact_velocity.segment<3>(3 * c);
    AddCouplings(n * k, w.mu[c], &triplets_, &q_);
  }
  assembly_.Assemble(n * num_contacts, n * num_contacts, triplets_, &matrix_);
  lcp_.AssignLcp(matrix_, q_);
  lcp_.name = problem_name_;
}

void LinearizedConeModel::StartFromPrevious(const ExplicitStepContext& step,
                                            const IslandView& island,
                                            const std::vector<ExplicitContact>& contacts) {
  const int nc = island.num_links;
  z_.setZero(unknowns_ * nc);
  if (!warm_start_) {
    z_.resize(0);
    return;
  }
  for (int k = 0; k < nc; ++k) {
    const int c = island.links[k];
    const ExplicitContact* old = step.workspace.Previous(contacts, c);
    if (old == nullptr) continue;
    const Eigen::Vector3d r = ImpulseInFrame(*old, contacts[c]);
    if (r[0] > 0.0) WarmStart(r, step.workspace.mu[c], z_.segment(unknowns_ * k, unknowns_));
  }
}

void LinearizedConeModel::Solve(const ExplicitStepContext& step, const IslandView& island,
                                std::vector<ExplicitContact>* contacts,
                                ExplicitIslandResult* result) {
  const int nc = island.num_links;
  generators_.resize(nc);
  for (int k = 0; k < nc; ++k) {
    BuildGenerator(step.workspace.mu[island.links[k]], &generators_[k]);
  }
  Assemble(step, island);
  StartFromPrevious(step, island, *contacts);
  const SolverSummary* summary = &proximal_->Solve(lcp_, &z_);
  result->attempts = 1;
  if (!summary->IsSolved() && warm_start_) {
    z_.resize(0);
    result->attempts = 2;
    summary = &proximal_->Solve(lcp_, &z_);
  }
  result->summary = *summary;
  if (z_.size() != unknowns_ * nc || !z_.allFinite()) z_.setZero(unknowns_ * nc);
  Eigen::VectorXd& kept = step.workspace.model_unknowns;  // sized by the stepper
  for (int k = 0; k < nc; ++k) {
    const int c = island.links[k];
    (*contacts)[c].impulse = generators_[k] * z_.segment(unknowns_ * k, impulse_columns_);
    if (kept.size() >= unknowns_ * (c + 1)) {
      kept.segment(unknowns_ * c, unknowns_) = z_.segment(unknowns_ * k, unknowns_);
    }
  }
  result->problem_size = unknowns_ * nc;
}

namespace {

// The impulses r = G z of the LCP A z + b >= 0 _|_ z >= 0, A = G^T W G + C, b = G^T q (W, q the
// local form's, G block diagonal with a generator per contact, C the couplings), where G and C
// are affine in each contact's mu. At fixed z, a change (dq, dmu) moves A z + b by
//   G^T (dq + W e) + sum_c dmu_c k_c,   e_c = dmu_c dG_c z_c,   k_c = dG_c^T u_c + dC_c z_c
// (u = W r + q the contacts' velocities; dG_c, dC_c the derivatives by mu_c), and r by G dz + e.
class LinearizedSensitivity : public ExplicitImpulseSensitivity {
 public:
  struct Pieces {
    int unknowns = 0;  // per contact
    Eigen::SparseMatrix<double> G, W;
    Eigen::VectorXd a;  // per contact dG_c z_c (3 each)
    Eigen::VectorXd k;  // per contact k_c (`unknowns` each)
  };
  LinearizedSensitivity(Pieces pieces, const LinearComplementarityProblem& lcp,
                        const Eigen::VectorXd& z, const SensitivityOptions& options)
      : p_(std::move(pieces)), lcp_(lcp, z, options) {}

  const LinearSensitivity& lcp() const { return lcp_; }

  Eigen::VectorXd Jvp(const Eigen::VectorXd& dq, const Eigen::VectorXd& dmu,
                      const Eigen::VectorXd& /*dW*/) const override {
    const Eigen::Index nc = p_.a.size() / 3;
    Eigen::VectorXd e = Eigen::VectorXd::Zero(3 * nc);
    LinearSensitivity::Tangent tangent;
    tangent.q = Eigen::VectorXd::Zero(p_.k.size());
    for (Eigen::Index c = 0; c < nc && dmu.size() > 0; ++c) {
      e.segment<3>(3 * c) = dmu[c] * p_.a.segment<3>(3 * c);
      tangent.q.segment(p_.unknowns * c, p_.unknowns) =
          dmu[c] * p_.k.segment(p_.unknowns * c, p_.unknowns);
    }
    tangent.q += p_.G.transpose() * (dq + p_.W * e);
    return p_.G * lcp_.Jvp(tangent) + e;
  }

  void Vjp(const Eigen::VectorXd& g, Eigen::VectorXd* q, Eigen::VectorXd* mu,
           Eigen::VectorXd* /*W*/) const override {
    const Eigen::VectorXd lambda = lcp_.Vjp(p_.G.transpose() * g).q;
    *q = p_.G * lambda;
    const Eigen::VectorXd through_w = p_.W * *q + g;
    const Eigen::Index nc = p_.a.size() / 3;
    mu->resize(nc);
    for (Eigen::Index c = 0; c < nc; ++c) {
      (*mu)[c] = through_w.segment<3>(3 * c).dot(p_.a.segment<3>(3 * c)) +
                 lambda.segment(p_.unknowns * c, p_.unknowns)
                     .dot(p_.k.segment(p_.unknowns * c, p_.unknowns));
    }
  }

 private:
  Pieces p_;
  LinearSensitivity lcp_;
};

// Whether the changes of z that the LCP's linearization leaves free (its least-squares family)
// move no velocity: M^-1 H G times them within 1e-8 of M^-1 H G's largest entry (as
// GlobalFrictionSensitivity::VelocitiesDetermined() for the cone).
bool VelocitiesDetermined(const GlobalFrictionContactProblem& problem,
                          const Eigen::SparseMatrix<double>& G, const BoxSensitivity& box) {
  if (!box.least_squares()) return true;
  const Eigen::MatrixXd free = box.UndeterminedDirections();
  if (free.cols() == 0) return true;
  std::vector<Eigen::Triplet<double>> triplets;
  for (int c = 0; c < problem.num_contacts(); ++c) {
    for (int p = problem.piece_begin(c); p < problem.piece_begin(c + 1); ++p) {
      const int block = problem.piece_block(p), offset = problem.block_offset(block);
      const Eigen::MatrixXd rows = problem.InverseMass(block) * problem.PieceRows(p);
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < rows.rows(); ++i)
          triplets.emplace_back(offset + i, 3 * c + j, rows(i, j));
    }
  }
  Eigen::SparseMatrix<double> map(problem.num_dofs(), problem.size());
  map.setFromTriplets(triplets.begin(), triplets.end());
  const Eigen::SparseMatrix<double> velocity_of_z = map * G;
  const double scale =
      velocity_of_z.nonZeros() == 0 ? 0.0 : velocity_of_z.coeffs().cwiseAbs().maxCoeff();
  return (velocity_of_z * free).cwiseAbs().maxCoeff() <= 1e-8 * scale;
}

}  // namespace

void LinearizedConeModel::AssembleStepLcp(const Eigen::VectorXd& mu, const Eigen::VectorXd& z,
                                          const Eigen::VectorXd& u, StepLcp* out) const {
  const int n = unknowns_, g = impulse_columns_, nc = static_cast<int>(mu.size());
  std::vector<Eigen::Triplet<double>> g_triplets, c_triplets, dc_triplets;
  out->offsets = Eigen::VectorXd::Zero(n * nc);
  out->a.resize(3 * nc);
  out->k = Eigen::VectorXd::Zero(n * nc);
  Generator G, dG;
  BuildGeneratorDerivative(&dG);
  for (int c = 0; c < nc; ++c) {
    BuildGenerator(mu[c], &G);
    for (int j = 0; j < g; ++j)
      for (int i = 0; i < 3; ++i) g_triplets.emplace_back(3 * c + i, n * c + j, G(i, j));
    AddCouplings(n * c, mu[c], &c_triplets, &out->offsets);
    AddCouplingDerivatives(n * c, &dc_triplets);
    out->a.segment<3>(3 * c) = dG * z.segment(n * c, g);
    out->k.segment(n * c, g) = dG.transpose() * u.segment<3>(3 * c);
  }
  out->G.resize(3 * nc, n * nc);
  out->G.setFromTriplets(g_triplets.begin(), g_triplets.end());
  out->C.resize(n * nc, n * nc);
  out->C.setFromTriplets(c_triplets.begin(), c_triplets.end());
  Eigen::SparseMatrix<double> dC(n * nc, n * nc);
  dC.setFromTriplets(dc_triplets.begin(), dc_triplets.end());
  out->k += dC * z;
}

namespace {

// Each contact's mode from its impulse and velocity: sliding where the tangential velocity is
// beyond `still`.
std::string ContactModes(const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                         const Eigen::VectorXd& u, double still) {
  std::string modes;
  for (Eigen::Index c = 0; c < mu.size(); ++c) {
    modes += !(r[3 * c] > 0.0)                        ? 'a'
             : mu[c] == 0.0                           ? 'f'
             : u.segment<2>(3 * c + 1).norm() > still ? 'l'
                                                      : 's';
  }
  return modes;
}

}  // namespace

std::unique_ptr<ExplicitImpulseSensitivity> LinearizedConeModel::Sensitivity(
    const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
    const ExplicitWorkspace& workspace) const {
  const int n = unknowns_, nc = problem.num_contacts();
  const Eigen::VectorXd& z = workspace.model_unknowns;
  if (z.size() != n * nc) {
    throw InputError(
        "explicit stepper: the step's LCP solution was not kept, so the step has no "
        "derivative");
  }
  FrictionContactProblem local;
  problem.Reduce(&local);
  LinearizedSensitivity::Pieces p;
  p.unknowns = n;
  p.W = local.W();
  const Eigen::VectorXd u = p.W * r + local.q();
  StepLcp step;
  AssembleStepLcp(problem.mu(), z, u, &step);
  p.G = std::move(step.G);
  p.a = std::move(step.a);
  p.k = std::move(step.k);
  LinearComplementarityProblem lcp;
  lcp.AssignLcp(Eigen::SparseMatrix<double>(p.G.transpose() * p.W * p.G) + step.C,
                p.G.transpose() * local.q() + step.offsets);
  // A sticking contact stays stuck on both sides of a change: its unused edges (zero impulse,
  // zero velocity) are free, so that its rows hold the tangential velocity at zero however the
  // force is spread over the edges (the pyramid's gamma, held, keeps it inside the cone). Every
  // other degenerate index keeps its bound: a sliding contact keeps its active edges, one apart
  // stays apart. (Still: within the sensitivity's degeneracy tolerance.)
  std::string modes =
      ContactModes(problem.mu(), r, u, 1e-7 * (1.0 + local.q().cwiseAbs().maxCoeff()));
  SensitivityOptions options;
  options.degenerate_sides.assign(n * nc, DegenerateSide::Bound);
  for (int c = 0; c < nc; ++c) {
    if (modes[c] != 's') continue;
    for (int j = 0; j < impulse_columns_; ++j) {
      options.degenerate_sides[n * c + j] = DegenerateSide::Free;
    }
  }
  const Eigen::SparseMatrix<double> generators = p.G;
  auto out = std::make_unique<LinearizedSensitivity>(std::move(p), lcp, z, options);
  const LinearSensitivity& linear = out->lcp();
  out->modes = std::move(modes);
  for (const int i : linear.degenerate()) {
    if (out->degenerate.empty() || out->degenerate.back() != i / n) {
      out->degenerate.push_back(i / n);
    }
  }
  out->determined = VelocitiesDetermined(problem, generators, linear.box());
  return out;
}

}  // namespace ncpkit::internal
