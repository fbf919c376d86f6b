// The explicit stepper's soft model (the contact modelling notes): a spring-damper
// F = K_p (r_c - r_c0) + K_d r_c' at every overlapping contact point, the anchor r_c0 kept from
// the step the contact began and dragged along when the tangential force would leave the Coulomb
// cone; no complementarity problem. Forces from the start of the step (semi-implicit Euler):
// stable while h sqrt(K_p / m) < 2 and h K_d r^2 / I < 2 for every body (r: contact arm, I: its
// inertia; a small box's yaw is the first to oscillate from step to step).
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include "integrators/explicit/model.h"

namespace ncpkit::internal {

// What the soft law did at a contact: its mode (StepDerivative::contact_modes()'s letter) and, on
// doubles, whether it stands at a switch to rounding (the normal force at its clamp to zero, the
// tangential one at the cone's edge), where the derivative is one-sided.
struct SoftBranch {
  char mode = 'a';
  bool degenerate = false;
};

// The law at a contact `depth` > 0 deep whose contact-frame velocity is v = [v_N, v_T]: the
// normal force K_p depth - K_d v_N (never pulling), the tangential one -K_p s - K_d v_T with s the
// anchor offset carried in (*s, in this step's tangent plane) moved by h v_T, kept inside the
// Coulomb cone by moving the anchor to where the spring alone would give it. Sets *s to the
// offset after the step and *r to the impulses h F. On any scalar: the step on doubles, its
// derivative on Jets (integrators/explicit/soft_derivative.h).
template <class T>
SoftBranch SoftLaw(const T& depth, const Eigen::Matrix<T, 3, 1>& v, const T& mu, const T& k,
                   const T& d, const T& h, Eigen::Matrix<T, 2, 1>* s, Eigen::Matrix<T, 3, 1>* r) {
  SoftBranch branch;
  const T pressing = k * depth - d * v[0];
  const T normal = pressing > T(0) ? pressing : T(0);
  const Eigen::Matrix<T, 2, 1> v_t(v[1], v[2]);
  *s += h * v_t;
  Eigen::Matrix<T, 2, 1> tangential = -k * *s - d * v_t;
  const T limit = mu * normal;
  // Squared: a Jet's square root at zero (no tangential force) has no derivative.
  const T squared = tangential.squaredNorm();
  branch.mode = normal > T(0) ? (mu > T(0) ? 's' : 'f') : 'a';
  if (squared > limit * limit) {
    using std::sqrt;
    tangential *= limit / sqrt(squared);
    if (k > T(0)) *s = -(tangential + d * v_t) / k;
    if (branch.mode == 's') branch.mode = 'l';
  }
  *r = h * Eigen::Matrix<T, 3, 1>(normal, tangential[0], tangential[1]);
  if constexpr (std::is_same_v<T, double>) {
    constexpr double kTie = 1e-12;
    const double cone = limit * limit;
    branch.degenerate =
        std::abs(pressing) <= kTie * (k * depth + std::abs(d * v[0])) ||
        (normal > 0.0 && mu > 0.0 && std::abs(squared - cone) <= kTie * std::max(squared, cone));
  }
  return branch;
}

class SoftModel : public ExplicitContactModel {
 public:
  explicit SoftModel(const ExplicitStepperOptions& options);
  const char* name() const override { return "soft"; }
  void Solve(const ExplicitStepContext& step, const IslandView& island,
             std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) override;
  // Contact by contact, as the forces were found.
  void ApplyImpulses(const ExplicitStepContext& step, const IslandView& island,
                     const std::vector<ExplicitContact>& contacts) override;
  const ComplementaritySolver& solver() const override { return *solver_; }
  bool ConstrainsEndVelocities() const override { return false; }

 private:
  std::unique_ptr<ComplementaritySolver> solver_;  // solves nothing; names the model
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_
