#include "integrators/trajectory_quality.h"

#include <algorithm>
#include <cmath>

namespace ncpkit {

TrajectoryQualityMeter::TrajectoryQualityMeter(const std::vector<Body>& bodies,
                                               const Eigen::Vector3d& gravity)
    : bodies_(bodies), gravity_(gravity) {
  double energy = 0.0;
  for (const Body& body : bodies_) {
    if (!body.fixed) energy += MechanicalEnergy(body.mass, body.state, gravity_);
  }
  first_energy_ = last_energy_ = energy;
  std::vector<RigidBodyState> states;
  for (const Body& body : bodies_) states.push_back(body.state);
  int64_t unmeasured = 0;
  quality_.max_penetration = Penetration(states, &unmeasured);
}

double TrajectoryQualityMeter::Penetration(const std::vector<RigidBodyState>& states,
                                           int64_t* unmeasured) {
  const size_t n = bodies_.size();
  spheres_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    spheres_[i].centre = states[i].position;
    spheres_[i].radius = bodies_[i].shape.BoundingRadius();
    spheres_[i].fixed = bodies_[i].fixed;
  }
  broad_phase_.Find(spheres_, &pairs_);
  double deepest = 0.0;
  for (const auto& [i, j] : pairs_) {
    const Body& a = bodies_[i];
    const Body& b = bodies_[j];
    if (!geometry_.Supports(a.shape.kind, b.shape.kind)) {
      ++*unmeasured;
      continue;
    }
    ShapePose pose_a, pose_b;
    pose_a.position = states[i].position;
    pose_a.rotation = states[i].orientation.toRotationMatrix();
    pose_b.position = states[j].position;
    pose_b.rotation = states[j].orientation.toRotationMatrix();
    points_.clear();
    geometry_.FindContacts(a.shape, pose_a, b.shape, pose_b, 0.0, &points_);
    for (const ContactPoint& p : points_) deepest = std::max(deepest, -p.distance);
  }
  return deepest;
}

void TrajectoryQualityMeter::Add(const std::vector<RigidBodyState>& states) {
  ++quality_.steps;
  quality_.max_penetration =
      std::max(quality_.max_penetration, Penetration(states, &quality_.unmeasured_pairs));
  double energy = 0.0;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].fixed) continue;
    energy += MechanicalEnergy(bodies_[i].mass, states[i], gravity_);
    const double angle = states[i].orientation.angularDistance(bodies_[i].state.orientation);
    quality_.max_rotation = std::max(quality_.max_rotation, angle);
  }
  quality_.max_energy_rise = std::max(quality_.max_energy_rise, energy - last_energy_);
  quality_.energy_change = energy - first_energy_;
  last_energy_ = energy;
  if (settle_start_ > 0 && quality_.steps >= settle_start_) {
    if (quality_.steps == settle_start_) {
      settle_positions_.resize(states.size());
      for (size_t i = 0; i < states.size(); ++i) settle_positions_[i] = states[i].position;
    }
    for (size_t i = 0; i < bodies_.size(); ++i) {
      if (bodies_[i].fixed) continue;
      quality_.settled_drift =
          std::max(quality_.settled_drift, (states[i].position - settle_positions_[i]).norm());
    }
  }
}

double SlideError(const Eigen::Vector3d& start_position, const Eigen::Vector3d& start_velocity,
                  double mu, double g, const std::vector<double>& times,
                  const std::vector<Eigen::Vector3d>& positions) {
  Eigen::Vector3d v0 = start_velocity;
  v0.z() = 0.0;
  const double speed = v0.norm();
  const Eigen::Vector3d direction = speed > 0.0 ? Eigen::Vector3d(v0 / speed) : v0;
  const double deceleration = mu * g;
  const double stop = deceleration > 0.0 ? speed / deceleration : INFINITY;
  double worst = 0.0;
  for (size_t k = 0; k < times.size(); ++k) {
    const double t = std::min(times[k], stop);
    const double distance = speed * t - 0.5 * deceleration * t * t;
    const Eigen::Vector3d exact = start_position + distance * direction;
    Eigen::Vector3d error = positions[k] - exact;
    error.z() = 0.0;
    if (distance > 0.0) worst = std::max(worst, error.norm() / distance);
  }
  return worst;
}

}  // namespace ncpkit
