#include "integrators/step_derivative.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <string>

#include "solvers/base/input_error.h"

namespace ncpkit {

Eigen::MatrixXd StepDerivative::JvpColumns(const Eigen::MatrixXd& ds, const Eigen::MatrixXd& dp,
                                           const Eigen::MatrixXd& du) const {
  const Eigen::Index k = internal::ChangeCount(ds, dp, du, "step derivative: ds, dp and du");
  Eigen::MatrixXd out(output_size(), k);
  for (Eigen::Index j = 0; j < k; ++j) {
    out.col(j) = Jvp(internal::ChangeColumn(ds, j), internal::ChangeColumn(dp, j),
                     internal::ChangeColumn(du, j));
  }
  return out;
}

Eigen::MatrixXd StepDerivative::StateJacobian() const {
  return JvpColumns(Eigen::MatrixXd::Identity(input_size(), input_size()), Eigen::MatrixXd(),
                    Eigen::MatrixXd());
}

Eigen::MatrixXd StepDerivative::ParameterJacobian() const {
  return JvpColumns(Eigen::MatrixXd(),
                    Eigen::MatrixXd::Identity(parameter_size(), parameter_size()),
                    Eigen::MatrixXd());
}

Eigen::MatrixXd StepDerivative::CommandJacobian() const {
  return JvpColumns(Eigen::MatrixXd(), Eigen::MatrixXd(),
                    Eigen::MatrixXd::Identity(command_size(), command_size()));
}

namespace internal {

Eigen::Index ChangeCount(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                         const Eigen::MatrixXd& c, const char* what) {
  const Eigen::Index k = std::max({a.cols(), b.cols(), c.cols()});
  for (const Eigen::MatrixXd* m : {&a, &b, &c}) {
    if (m->rows() != 0 && m->cols() != k) {
      throw InputError(std::string(what) + ": changes in " + std::to_string(a.cols()) + ", " +
                       std::to_string(b.cols()) + " and " + std::to_string(c.cols()) +
                       " columns (each matrix with rows needs " + std::to_string(k) + ")");
    }
  }
  return k;
}

Eigen::VectorXd ChangeColumn(const Eigen::MatrixXd& m, Eigen::Index j) {
  Eigen::VectorXd out;
  ChangeColumn(m, j, &out);
  return out;
}

void ChangeColumn(const Eigen::MatrixXd& m, Eigen::Index j, Eigen::VectorXd* out) {
  if (m.rows() == 0) {
    out->resize(0);
  } else {
    *out = m.col(j);
  }
}

Eigen::Matrix3d So3LeftJacobian(const Eigen::Vector3d& phi) {
  const double a = phi.norm();
  Eigen::Matrix3d K;
  K << 0.0, -phi.z(), phi.y(), phi.z(), 0.0, -phi.x(), -phi.y(), phi.x(), 0.0;
  if (a < 1e-6) return Eigen::Matrix3d::Identity() + 0.5 * K + K * K / 6.0;
  return Eigen::Matrix3d::Identity() + (1.0 - std::cos(a)) / (a * a) * K +
         (a - std::sin(a)) / (a * a * a) * K * K;
}

void PoseUpdateTerms::Linearize(const Eigen::Matrix<double, 6, 1>& nu_plus, double h) {
  v_plus = nu_plus.head<3>();
  omega_plus = nu_plus.tail<3>();
  const Eigen::Vector3d phi = h * omega_plus;
  turn = phi.norm() > 0.0 ? Eigen::Matrix3d(Eigen::AngleAxisd(phi.norm(), phi.normalized()))
                          : Eigen::Matrix3d::Identity();
  left_jacobian = So3LeftJacobian(phi);
}

Eigen::Matrix<double, 12, 1> PoseUpdateTerms::Jvp(
    const Eigen::Vector3d& dx, const Eigen::Vector3d& dtheta, double dh, double h,
    const Eigen::Matrix<double, 6, 1>& dnu_plus) const {
  const Eigen::Vector3d dv = dnu_plus.head<3>(), domega = dnu_plus.tail<3>();
  Eigen::Matrix<double, 12, 1> out;
  out << dx + dh * v_plus + h * dv, turn * dtheta + left_jacobian * (dh * omega_plus + h * domega),
      dv, domega;
  return out;
}

PoseUpdateTerms::Adjoint PoseUpdateTerms::Vjp(const Eigen::Matrix<double, 12, 1>& g, double h,
                                              double* h_gradient) const {
  const Eigen::Vector3d g_x = g.head<3>(), g_theta = g.segment<3>(3);
  const Eigen::Vector3d through_exp = left_jacobian.transpose() * g_theta;
  Adjoint out;
  out.x = g_x;
  out.theta = turn.transpose() * g_theta;
  *h_gradient += g_x.dot(v_plus) + through_exp.dot(omega_plus);
  out.nu_plus << h * g_x + g.segment<3>(6), h * through_exp + g.segment<3>(9);
  return out;
}

}  // namespace internal

}  // namespace ncpkit
