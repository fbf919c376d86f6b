#include "dynamics/quasistatic_balance.h"

#include <cmath>
#include <sstream>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using internal::NumberText;

}  // namespace

QuasistaticBalance::QuasistaticBalance(const std::vector<Body>& bodies,
                                       const std::vector<char>& actuated,
                                       const std::vector<Actuator>& actuators) {
  const size_t nb = bodies.size();
  body_columns_.assign(nb, {-1, -1, -1, -1, -1, -1});
  unactuated_.assign(nb, 0);
  int n = 0;
  std::string why;
  for (size_t b = 0; b < nb; ++b) {
    if (bodies[b].fixed || actuated[b]) continue;
    if (bodies[b].shape.kind == ShapeKind::HalfSpace) {
      throw InputError("body '" + bodies[b].name +
                       "' is a plane: it must be fixed or moved by actuators");
    }
    if (!bodies[b].mass.IsValid(&why)) {
      throw InputError("body '" + bodies[b].name + "' is unactuated: " + why);
    }
    unactuated_[b] = 1;
    for (int k = 0; k < 6; ++k) {
      if (bodies[b].free_dofs[k]) body_columns_[b][k] = n++;
    }
  }
  actuator_columns_.assign(actuators.size(), -1);
  for (size_t a = 0; a < actuators.size(); ++a) {
    if (!actuators[a].prescribed) actuator_columns_[a] = n++;
  }
  size_ = n;
  motion_.resize(nb);
  drift_.assign(nb, Vector6d::Zero());
  force_ = Eigen::VectorXd::Zero(n);
}

void QuasistaticBalance::Assemble(const std::vector<Body>& bodies,
                                  const std::vector<Actuator>& actuators,
                                  const std::vector<double>& q, double t1, double h,
                                  const Eigen::Vector3d& gravity, double regularization) {
  const int nb = static_cast<int>(bodies.size());
  for (int b = 0; b < nb; ++b) {
    motion_[b].clear();
    drift_[b].setZero();
  }
  force_.setZero(size_);
  stiffness_.clear();
  const double reg = regularization / (h * h);
  for (int b = 0; b < nb; ++b) {
    if (!unactuated_[b]) continue;
    const Body& body = bodies[b];
    Eigen::Matrix<double, 6, 6> inertia = Eigen::Matrix<double, 6, 6>::Zero();
    inertia.topLeftCorner<3, 3>() = body.mass.mass * Eigen::Matrix3d::Identity();
    inertia.bottomRightCorner<3, 3>() = WorldInertia(body.mass, body.state.orientation);
    for (int k = 0; k < 6; ++k) {
      const int col = body_columns_[b][k];
      if (col < 0) continue;
      motion_[b].push_back({col, Vector6d::Unit(k)});
      if (k < 3) force_[col] += body.mass.mass * gravity[k];
      if (reg == 0.0) continue;
      for (int l = 0; l < 6; ++l) {
        const int other = body_columns_[b][l];
        if (other >= 0 && inertia(k, l) != 0.0) {
          stiffness_.emplace_back(col, other, reg * inertia(k, l));
        }
      }
    }
  }
  for (size_t a = 0; a < actuators.size(); ++a) {
    const Actuator& act = actuators[a];
    const int col = actuator_columns_[a];
    const double target = act.command(t1);
    for (int b : act.bodies) {
      const Vector6d column =
          ActuatorTwist(act, bodies[b].state.position, ActuatedTranslation(actuators, q, b));
      if (col < 0) {
        drift_[b] += column * (target - q[a]);
      } else {
        motion_[b].push_back({col, column});
        force_[col] += bodies[b].mass.mass * gravity.dot(column.head<3>());
      }
    }
    if (col >= 0) {
      stiffness_.emplace_back(col, col, act.stiffness);
      force_[col] += act.stiffness * (target - q[a]);
    }
  }
}

std::string QuasistaticBalance::LeavesRange(const std::vector<Body>& bodies,
                                            const std::vector<Actuator>& actuators,
                                            const std::vector<double>& q,
                                            const Eigen::VectorXd& delta, double t1) const {
  for (size_t b = 0; b < bodies.size(); ++b) {
    if (!unactuated_[b]) continue;
    Eigen::Vector3d position = bodies[b].state.position;
    for (int k = 0; k < 3; ++k) {
      if (body_columns_[b][k] >= 0) position[k] += delta[body_columns_[b][k]];
    }
    if (!(position.cwiseAbs().maxCoeff() <= kMaxCoordinate)) {
      return "body '" + bodies[b].name +
             "' would leave the coordinate range |x| <= " + NumberText(kMaxCoordinate) + " m (to " +
             NumberText(position.cwiseAbs().maxCoeff()) + ")";
    }
  }
  for (size_t a = 0; a < actuators.size(); ++a) {
    const double next =
        actuator_columns_[a] < 0 ? actuators[a].command(t1) : q[a] + delta[actuator_columns_[a]];
    if (!(std::abs(next) <= kMaxCoordinate)) {
      return "actuator '" + actuators[a].name + "' would leave the coordinate range (to " +
             NumberText(next) + ")";
    }
  }
  return "";
}

void QuasistaticBalance::Advance(const Eigen::VectorXd& delta,
                                 const std::vector<Actuator>& actuators, double t1,
                                 std::vector<Body>* bodies, std::vector<double>* q) const {
  for (size_t b = 0; b < bodies->size(); ++b) {
    if (!unactuated_[b]) continue;
    RigidBodyState& state = (*bodies)[b].state;
    Eigen::Vector3d dp = Eigen::Vector3d::Zero(), dtheta = Eigen::Vector3d::Zero();
    for (int k = 0; k < 6; ++k) {
      const int col = body_columns_[b][k];
      if (col < 0) continue;
      (k < 3 ? dp[k] : dtheta[k - 3]) = delta[col];
    }
    state.position += dp;
    const double angle = dtheta.norm();
    if (angle > 0.0) {
      state.orientation =
          (Eigen::Quaterniond(Eigen::AngleAxisd(angle, dtheta / angle)) * state.orientation)
              .normalized();
    }
  }
  for (size_t a = 0; a < actuators.size(); ++a) {
    (*q)[a] =
        actuator_columns_[a] < 0 ? actuators[a].command(t1) : (*q)[a] + delta[actuator_columns_[a]];
  }
}

}  // namespace ncpkit
