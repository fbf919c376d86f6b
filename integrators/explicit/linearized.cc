#include "integrators/explicit/linearized.h"

#include <algorithm>
#include <cmath>

#include "integrators/explicit_stepper.h"

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
    const ExplicitContact* old = step.workspace.Previous(step.bodies, contacts, c);
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
  for (int k = 0; k < nc; ++k) {
    (*contacts)[island.links[k]].impulse =
        generators_[k] * z_.segment(unknowns_ * k, impulse_columns_);
  }
  result->problem_size = unknowns_ * nc;
}

}  // namespace ncpkit::internal
