#include "dynamics/actuators.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using internal::NumberText;

}  // namespace

double ActuatorCommand::operator()(double t) const {
  if (waypoints.empty()) return offset + rate * t + amplitude * std::sin(omega * t + phase);
  if (t <= waypoints.front().first) return waypoints.front().second;
  if (t >= waypoints.back().first) return waypoints.back().second;
  const auto next = std::upper_bound(
      waypoints.begin(), waypoints.end(), t,
      [](double time, const std::pair<double, double>& w) { return time < w.first; });
  const auto& b = *next;
  const auto& a = *(next - 1);
  return a.second + (b.second - a.second) * (t - a.first) / (b.first - a.first);
}

bool ActuatorCommand::IsValid(std::string* why) const {
  for (double x : {offset, rate, amplitude, omega, phase}) {
    if (!std::isfinite(x)) {
      *why = "command parameters must be finite";
      return false;
    }
  }
  if (std::abs(offset) + std::abs(amplitude) > kMaxCoordinate) {
    *why = "command offset and amplitude reach beyond the coordinate limit " +
           NumberText(kMaxCoordinate);
    return false;
  }
  for (size_t k = 0; k < waypoints.size(); ++k) {
    if (!std::isfinite(waypoints[k].first) || !std::isfinite(waypoints[k].second)) {
      *why = "command waypoint " + std::to_string(k) + " is not finite (" +
             NumberText(waypoints[k].first) + ", " + NumberText(waypoints[k].second) + ")";
      return false;
    }
    if (std::abs(waypoints[k].second) > kMaxCoordinate) {
      *why = "command waypoint " + std::to_string(k) + " value " + NumberText(waypoints[k].second) +
             " is beyond the coordinate limit " + NumberText(kMaxCoordinate);
      return false;
    }
    if (k > 0 && !(waypoints[k].first > waypoints[k - 1].first)) {
      *why = "command waypoint times must increase (waypoint " + std::to_string(k) + ")";
      return false;
    }
  }
  return true;
}

bool Actuator::Moves(int body) const {
  return std::find(bodies.begin(), bodies.end(), body) != bodies.end();
}

void ValidateActuator(const std::vector<Body>& bodies, const std::vector<Actuator>& before,
                      Actuator* actuator) {
  const std::string who = "actuator '" + actuator->name + "': ";
  if (FindActuator(before, actuator->name) >= 0) throw InputError(who + "duplicate name");
  if (!actuator->prescribed && !(actuator->stiffness > 0.0 && std::isfinite(actuator->stiffness))) {
    throw InputError(who + "stiffness must be positive and finite, got " +
                     NumberText(actuator->stiffness));
  }
  if (!actuator->axis.allFinite() || actuator->axis.norm() < 1e-12 ||
      !actuator->pivot.allFinite()) {
    throw InputError(who + "axis must be a finite nonzero vector");
  }
  if (actuator->bodies.empty()) throw InputError(who + "moves no body");
  std::string why;
  if (!actuator->command.IsValid(&why)) throw InputError(who + why);
  actuator->axis.normalize();
  for (int b : actuator->bodies) {
    if (b < 0 || b >= static_cast<int>(bodies.size())) {
      throw InputError(who + "moves an unknown body (index " + std::to_string(b) + ")");
    }
    if (bodies[b].fixed) {
      throw InputError(who + "moves body '" + bodies[b].name + "', which is fixed");
    }
  }
}

int FindActuator(const std::vector<Actuator>& actuators, const std::string& name) {
  for (size_t k = 0; k < actuators.size(); ++k) {
    if (actuators[k].name == name) return static_cast<int>(k);
  }
  return -1;
}

std::vector<char> ActuatedBodies(int num_bodies, const std::vector<Actuator>& actuators) {
  std::vector<char> actuated(num_bodies, 0);
  for (const Actuator& actuator : actuators) {
    for (int b : actuator.bodies) actuated[b] = 1;
  }
  return actuated;
}

Eigen::Vector3d ActuatedTranslation(const std::vector<Actuator>& actuators,
                                    const std::vector<double>& q, int body) {
  Eigen::Vector3d translation = Eigen::Vector3d::Zero();
  for (size_t a = 0; a < actuators.size(); ++a) {
    if (actuators[a].kind == ActuatorKind::Prismatic && actuators[a].Moves(body)) {
      translation += q[a] * actuators[a].axis;
    }
  }
  return translation;
}

RigidBodyState ActuatedPose(const std::vector<Actuator>& actuators, const std::vector<double>& q,
                            int body, const RigidBodyState& base) {
  const Eigen::Vector3d translation = ActuatedTranslation(actuators, q, body);
  Eigen::Vector3d p = base.position + translation;
  Eigen::Quaterniond R = base.orientation;
  for (size_t a = 0; a < actuators.size(); ++a) {
    const Actuator& act = actuators[a];
    if (act.kind != ActuatorKind::Revolute || !act.Moves(body)) continue;
    const Eigen::Quaterniond turn(Eigen::AngleAxisd(q[a], act.axis));
    const Eigen::Vector3d pivot = act.pivot + translation;
    p = pivot + turn * (p - pivot);
    R = turn * R;
  }
  RigidBodyState pose = base;
  pose.position = p;
  pose.orientation = R.normalized();
  return pose;
}

Vector6d ActuatorTwist(const Actuator& actuator, const Eigen::Vector3d& position,
                       const Eigen::Vector3d& translation) {
  Vector6d column = Vector6d::Zero();
  if (actuator.kind == ActuatorKind::Prismatic) {
    column.head<3>() = actuator.axis;
  } else {
    column.head<3>() = actuator.axis.cross(position - (actuator.pivot + translation));
    column.tail<3>() = actuator.axis;
  }
  return column;
}

}  // namespace ncpkit
