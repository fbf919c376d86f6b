#include "integrators/explicit/pyramid.h"

#include <string>

#include "integrators/explicit_stepper.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {
namespace {

// Checked before the base class creates the solver.
const ExplicitStepperOptions& RequireZeroDiagonalSolver(const ExplicitStepperOptions& options) {
  const SolverEntry* entry = FindSolver(options.solver);
  if (entry != nullptr && entry->needs_positive_diagonal) {
    throw InputError("explicit stepper: " + options.solver +
                     " cannot take the pyramid model's LCP (its gamma rows have a zero "
                     "diagonal); use relaxed/" +
                     options.solver + ", or pyramid/lemke");
  }
  return options;
}

}  // namespace

PyramidModel::PyramidModel(const ExplicitStepperOptions& options)
    : LinearizedConeModel(RequireZeroDiagonalSolver(options), options.friction_directions + 2,
                          options.friction_directions + 1, "explicit pyramid step") {}

// The normal, then the edge directions.
void PyramidModel::BuildGenerator(double /*mu*/, Generator* G) const {
  G->setZero(3, directions_ + 1);
  for (int k = 0; k < directions_; ++k) {
    const Eigen::Vector2d d = PyramidEdge(k, directions_);
    G->col(1 + k) << 0.0, d.x(), d.y();
  }
  (*G)(0, 0) = 1.0;
}

// The normal and the edges do not depend on mu.
void PyramidModel::BuildGeneratorDerivative(Generator* dG) const {
  dG->setZero(3, directions_ + 1);
}

// gamma (the last unknown): mu lambda_n - sum beta >= 0 in its row, +gamma in each beta row.
void PyramidModel::AddCouplings(int base, double mu, std::vector<Eigen::Triplet<double>>* triplets,
                                Eigen::VectorXd* q) const {
  const int gamma = base + directions_ + 1;
  (*q)[gamma] = 0.0;
  triplets->emplace_back(gamma, base, mu);
  for (int k = 0; k < directions_; ++k) {
    triplets->emplace_back(base + 1 + k, gamma, 1.0);
    triplets->emplace_back(gamma, base + 1 + k, -1.0);
  }
}

// mu's one entry, in gamma's row.
void PyramidModel::AddCouplingDerivatives(int base,
                                          std::vector<Eigen::Triplet<double>>* triplets) const {
  triplets->emplace_back(base + directions_ + 1, base, 1.0);
}

// lambda_n = r_N; the tangential impulse on the two edges around it.
void PyramidModel::WarmStart(const Eigen::Vector3d& r, double /*mu*/,
                             Eigen::Ref<Eigen::VectorXd> z) const {
  Eigen::Vector2d ab;
  const int k = SplitOverEdges(Eigen::Vector2d(r[1], r[2]), directions_, &ab);
  z[0] = r[0];
  z[1 + k] = ab[0];
  z[1 + (k + 1) % directions_] = ab[1];
}

}  // namespace ncpkit::internal
