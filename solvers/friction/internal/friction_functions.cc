#include "solvers/friction/internal/friction_functions.h"

#include <algorithm>

namespace ncpkit::internal {

void AlartCurnierContact(double mu, double rho, const Eigen::Vector3d& r, const Eigen::Vector3d& u,
                         Eigen::Vector3d* phi, Eigen::Matrix3d* A, Eigen::Matrix3d* B) {
  A->setZero();
  B->setZero();
  const double x_normal = r[0] - rho * u[0];
  if (x_normal > 0.0) {
    (*phi)[0] = rho * u[0];
    (*B)(0, 0) = rho;
  } else {
    (*phi)[0] = r[0];
    (*A)(0, 0) = 1.0;
  }
  const double radius = mu * std::max(0.0, x_normal);
  const Eigen::Vector2d y = r.tail<2>() - rho * u.tail<2>();
  const double norm = y.norm();
  if (norm <= radius) {
    phi->tail<2>() = rho * u.tail<2>();
    B->block<2, 2>(1, 1) = rho * Eigen::Matrix2d::Identity();
    return;
  }
  const Eigen::Vector2d direction = y / norm;
  phi->tail<2>() = r.tail<2>() - radius * direction;
  const Eigen::Matrix2d P =
      (Eigen::Matrix2d::Identity() - direction * direction.transpose()) / norm;
  A->block<2, 2>(1, 1) = Eigen::Matrix2d::Identity() - radius * P;
  B->block<2, 2>(1, 1) = radius * rho * P;
  if (x_normal > 0.0) {
    A->block<2, 1>(1, 0) = -mu * direction;
    B->block<2, 1>(1, 0) = mu * rho * direction;
  }
}

void FischerBurmeisterContact(double mu, double rho, const Eigen::Vector3d& r,
                              const Eigen::Vector3d& u, double relative_smoothing,
                              Eigen::Vector3d* phi, Eigen::Matrix3d* A, Eigen::Matrix3d* B) {
  *phi = FischerBurmeisterSoc<double>(mu, rho, r, u, 0.0);
  using Jet = ceres::Jet<double, 6>;
  Eigen::Matrix<Jet, 3, 1> rj, uj;
  for (int i = 0; i < 3; ++i) {
    rj[i] = Jet(r[i], i);
    uj[i] = Jet(u[i], 3 + i);
  }
  // Near 1e-8 of the scale, 2 s^2 sinks under the rounding of z's spectral values (rounding took
  // the smaller one to zero, whose square root has no derivative, on RockPile_tob1); where the
  // requested smoothing leaves a non-finite derivative, 1e-6 and then 1e-4.
  const double scale = 1.0 + r.norm() + rho * u.norm();
  for (const double smoothing : {relative_smoothing * scale, 1e-6 * scale, 1e-4 * scale}) {
    const Eigen::Matrix<Jet, 3, 1> value = FischerBurmeisterSoc<Jet>(mu, rho, rj, uj, smoothing);
    for (int i = 0; i < 3; ++i) {
      A->row(i) = value[i].v.head<3>().transpose();
      B->row(i) = value[i].v.tail<3>().transpose();
    }
    if (A->allFinite() && B->allFinite()) return;
  }
}

}  // namespace ncpkit::internal
