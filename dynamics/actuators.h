// Actuators of the quasistatic systems (Pang & Tedrake 2021 eqs. 3-6): commanded positions and the
// impedance between the commanded and the actual position; Trinkle, Berard & Pang's (2005) fence is
// a prescribed one.
#ifndef NCPKIT_DYNAMICS_ACTUATORS_H_
#define NCPKIT_DYNAMICS_ACTUATORS_H_

#include <Eigen/Dense>
#include <string>
#include <utility>
#include <vector>

#include "dynamics/body.h"

namespace ncpkit {

// A commanded position q_cmd(t): piecewise-linear waypoints (t, q), held constant outside
// them, or, without waypoints, offset + rate t + amplitude sin(omega t + phase).
struct ActuatorCommand {
  std::vector<std::pair<double, double>> waypoints;
  double offset = 0.0, rate = 0.0, amplitude = 0.0, omega = 0.0, phase = 0.0;
  double operator()(double t) const;
  // Finite numbers within the coordinate limit, waypoint times strictly increasing.
  bool IsValid(std::string* why) const;
};

enum class ActuatorKind { Prismatic, Revolute };

// One actuated degree of freedom moving one or more bodies. A body's pose is its scene pose
// moved by its prismatic actuators (translation q axis), then turned by its revolute ones
// (angle q about `axis` through `pivot`, the pivot carried along by the translations).
struct Actuator {
  std::string name;
  ActuatorKind kind = ActuatorKind::Prismatic;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitX();  // world frame, normalized by Validate
  Eigen::Vector3d pivot = Eigen::Vector3d::Zero();  // revolute: a point on the axis (m)
  std::vector<int> bodies;                          // indices into the scene's bodies
  double stiffness = 1000.0;                        // N/m (prismatic), N m/rad (revolute); > 0
  bool prescribed = false;  // moves exactly as commanded; no stiffness, no unknown
  ActuatorCommand command;
  bool Moves(int body) const;
};

// Checks an actuator against the bodies and the actuators before it (unique name, stiffness,
// axis, bodies that exist and are not fixed, command) and normalizes its axis. Throws
// InputError naming the actuator.
void ValidateActuator(const std::vector<Body>& bodies, const std::vector<Actuator>& before,
                      Actuator* actuator);
int FindActuator(const std::vector<Actuator>& actuators, const std::string& name);
// True for the bodies some actuator moves.
std::vector<char> ActuatedBodies(int num_bodies, const std::vector<Actuator>& actuators);

// Where the actuators at positions q put the body whose pose at q = 0 is `base`.
RigidBodyState ActuatedPose(const std::vector<Actuator>& actuators, const std::vector<double>& q,
                            int body, const RigidBodyState& base);
// The body's translation by its prismatic actuators at positions q.
Eigen::Vector3d ActuatedTranslation(const std::vector<Actuator>& actuators,
                                    const std::vector<double>& q, int body);
// The displacement twist [dp; dtheta] of a body at `position` per unit of the actuator's q
// (`translation`: the body's current translation by the prismatic actuators, which carries a
// revolute pivot along).
Vector6d ActuatorTwist(const Actuator& actuator, const Eigen::Vector3d& position,
                       const Eigen::Vector3d& translation);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_ACTUATORS_H_
