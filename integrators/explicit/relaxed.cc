#include "integrators/explicit/relaxed.h"

#include <algorithm>

#include "integrators/explicit_stepper.h"

namespace ncpkit::internal {

RelaxedModel::RelaxedModel(const ExplicitStepperOptions& options)
    : LinearizedConeModel(options, options.friction_directions, options.friction_directions,
                          "explicit relaxed-cone step") {}

// The relaxed cone's edges (1, mu d_k).
void RelaxedModel::BuildGenerator(double mu, Generator* G) const {
  G->setZero(3, directions_);
  for (int k = 0; k < directions_; ++k) {
    const Eigen::Vector2d d = PyramidEdge(k, directions_);
    G->col(k) << 1.0, mu * d.x(), mu * d.y();
  }
}

void RelaxedModel::BuildGeneratorDerivative(Generator* dG) const {
  dG->setZero(3, directions_);
  for (int k = 0; k < directions_; ++k) dG->col(k).tail<2>() = PyramidEdge(k, directions_);
}

// The tangential impulse / mu on the two edges around it, the rest of r_N spread evenly (the
// edges sum to zero); without friction r_N spread evenly.
void RelaxedModel::WarmStart(const Eigen::Vector3d& r, double mu,
                             Eigen::Ref<Eigen::VectorXd> z) const {
  const int nd = directions_;
  if (!(mu > 0.0)) {
    for (int k = 0; k < nd; ++k) z[k] = r[0] / nd;
    return;
  }
  Eigen::Vector2d ab;
  const int k = SplitOverEdges(Eigen::Vector2d(r[1], r[2]) / mu, nd, &ab);
  const double rest = r[0] - ab.sum();
  if (rest < 0.0) ab *= r[0] / ab.sum();
  z[k] = ab[0];
  z[(k + 1) % nd] = ab[1];
  for (int j = 0; j < nd; ++j) z[j] += std::max(rest, 0.0) / nd;
}

}  // namespace ncpkit::internal
