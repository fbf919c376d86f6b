#include "integrators/explicit/workspace.h"

namespace ncpkit::internal {

const ExplicitContact* ExplicitWorkspace::Previous(const std::vector<ExplicitContact>& contacts,
                                                   int index) const {
  const ExplicitContact& c = contacts[index];
  const auto [first, last] = previous_range[index];
  const ExplicitContact* nearest = nullptr;
  double nearest_distance = match_radius[fixed[c.body_b] ? c.body_a : c.body_b];
  for (int k = first; k < last; ++k) {
    const double d = (previous[k].anchor_point - c.anchor_point).norm();
    if (d < nearest_distance) {
      nearest_distance = d;
      nearest = &previous[k];
    }
  }
  return nearest;
}

Eigen::Vector3d ImpulseInFrame(const ExplicitContact& old, const ExplicitContact& c) {
  const Eigen::Vector3d f = old.impulse[0] * old.point.normal + old.impulse[1] * old.tangent1 +
                            old.impulse[2] * old.tangent2;
  return Eigen::Vector3d(f.dot(c.point.normal), f.dot(c.tangent1), f.dot(c.tangent2));
}

Vector6d StartTwist(const Body& body) {
  Vector6d twist;
  twist << body.state.linear_velocity, body.state.angular_velocity;
  return twist;
}

}  // namespace ncpkit::internal
