#include "integrators/step_derivative.h"

#include <cmath>

namespace ncpkit {

Eigen::MatrixXd StepDerivative::StateJacobian() const {
  Eigen::MatrixXd out(state_size(), state_size());
  for (int k = 0; k < state_size(); ++k) {
    out.col(k) = Jvp(Eigen::VectorXd::Unit(state_size(), k), Eigen::VectorXd(), Eigen::VectorXd());
  }
  return out;
}

Eigen::MatrixXd StepDerivative::ParameterJacobian() const {
  Eigen::MatrixXd out(state_size(), parameter_size());
  for (int k = 0; k < parameter_size(); ++k) {
    out.col(k) =
        Jvp(Eigen::VectorXd(), Eigen::VectorXd::Unit(parameter_size(), k), Eigen::VectorXd());
  }
  return out;
}

Eigen::MatrixXd StepDerivative::CommandJacobian() const {
  Eigen::MatrixXd out(state_size(), command_size());
  for (int k = 0; k < command_size(); ++k) {
    out.col(k) =
        Jvp(Eigen::VectorXd(), Eigen::VectorXd(), Eigen::VectorXd::Unit(command_size(), k));
  }
  return out;
}

namespace internal {

Eigen::Matrix3d So3LeftJacobian(const Eigen::Vector3d& phi) {
  const double a = phi.norm();
  Eigen::Matrix3d K;
  K << 0.0, -phi.z(), phi.y(), phi.z(), 0.0, -phi.x(), -phi.y(), phi.x(), 0.0;
  if (a < 1e-6) return Eigen::Matrix3d::Identity() + 0.5 * K + K * K / 6.0;
  return Eigen::Matrix3d::Identity() + (1.0 - std::cos(a)) / (a * a) * K +
         (a - std::sin(a)) / (a * a * a) * K * K;
}

}  // namespace internal

}  // namespace ncpkit
