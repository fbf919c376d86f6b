#include "integrators/step_derivative.h"

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

}  // namespace ncpkit
