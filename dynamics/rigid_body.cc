#include "dynamics/rigid_body.h"

#include <sstream>

namespace ncpkit {

bool MassProperties::IsValid(std::string* why) const {
  // The message is formatted only when a check fails (a stream costs more than the checks).
  const bool mass_ok = std::isfinite(mass) && mass > 0.0;
  const char* problem = nullptr;
  if (!mass_ok) {
    problem = "mass";
  } else if (!body_inertia.allFinite()) {
    problem = "inertia has a non-finite entry";
  } else if ((body_inertia - body_inertia.transpose()).cwiseAbs().maxCoeff() >
             1e-12 * body_inertia.cwiseAbs().maxCoeff()) {
    problem = "inertia is not symmetric";
  } else if (Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(body_inertia)
                 .eigenvalues()
                 .minCoeff() <= 0.0) {
    problem = "inertia is not positive definite";
  }
  if (why != nullptr && problem == nullptr) {
    why->clear();
  } else if (why != nullptr && !mass_ok) {
    std::ostringstream os;
    os << "mass = " << mass << " must be positive and finite";
    *why = os.str();
  } else if (why != nullptr) {
    *why = problem;
  }
  return problem == nullptr;
}

MassProperties MassProperties::Box(double mass, const Eigen::Vector3d& size) {
  MassProperties m;
  m.mass = mass;
  const Eigen::Vector3d s2 = size.cwiseProduct(size);
  m.body_inertia =
      (mass / 12.0) * Eigen::Vector3d(s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]).asDiagonal();
  return m;
}

MassProperties MassProperties::Cylinder(double mass, double radius, double length) {
  MassProperties m;
  m.mass = mass;
  const double axial = 0.5 * mass * radius * radius;
  const double transverse = mass * (3.0 * radius * radius + length * length) / 12.0;
  m.body_inertia = Eigen::Vector3d(axial, transverse, transverse).asDiagonal();
  return m;
}

MassProperties MassProperties::Ellipsoid(double mass, const Eigen::Vector3d& semi_axes) {
  MassProperties m;
  m.mass = mass;
  const Eigen::Vector3d s2 = semi_axes.cwiseProduct(semi_axes);
  m.body_inertia =
      (mass / 5.0) * Eigen::Vector3d(s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]).asDiagonal();
  return m;
}

Eigen::Matrix3d WorldInertia(const MassProperties& mass, const Eigen::Quaterniond& orientation) {
  const Eigen::Matrix3d R = orientation.normalized().toRotationMatrix();
  return R * mass.body_inertia * R.transpose();
}

double MechanicalEnergy(const MassProperties& mass, const RigidBodyState& state,
                        const Eigen::Vector3d& gravity) {
  const Eigen::Vector3d& w = state.angular_velocity;
  return 0.5 * mass.mass * state.linear_velocity.squaredNorm() +
         0.5 * w.dot(WorldInertia(mass, state.orientation) * w) -
         mass.mass * gravity.dot(state.position);
}

void AdvanceState(double h, const Eigen::Matrix<double, 6, 1>& nu_plus, RigidBodyState* state) {
  double pose[7];
  IntegratePose(*state, h, nu_plus.data(), pose);
  state->position = Eigen::Vector3d(pose[0], pose[1], pose[2]);
  state->orientation = Eigen::Quaterniond(pose[3], pose[4], pose[5], pose[6]).normalized();
  state->linear_velocity = nu_plus.head<3>();
  state->angular_velocity = nu_plus.tail<3>();
}

RigidBodyState PredictedState(const RigidBodyState& state, double h) {
  RigidBodyState predicted = state;
  Eigen::Matrix<double, 6, 1> nu;
  nu << state.linear_velocity, state.angular_velocity;
  AdvanceState(h, nu, &predicted);
  return predicted;
}

}  // namespace ncpkit
