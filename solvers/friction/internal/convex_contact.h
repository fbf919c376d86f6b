// One contact of the convex contact model (convex_newton.h): the impulse, the cost and the
// curvature as functions of the contact velocity u = [u_N, u_T1, u_T2].
//
// With R = diag(R_N, R_T, R_T) > 0 and y = -R^-1 u, the impulse is the projection of y onto the
// friction cone K_mu = { ||g_T|| <= mu g_N } in the norm of R: g = argmin_{x in K} ||x - y||_R.
// In the scaled variables x~ = R^1/2 x that projection is the Euclidean one onto the cone of
// coefficient mu~ = mu sqrt(R_T / R_N), which has a closed form: y~ itself inside the cone
// (sticking), 0 in its polar cone (apart), else the nearest point of its boundary (sliding).
// The contact's cost is l(u) = 1/2 ||g||_R^2 = 1/2 ||g~||^2, whose gradient in u is -g
// (Moreau's decomposition: 1/2 ||P_K(y~)||^2 has gradient P_K(y~)) and whose Hessian is
// G = R^-1/2 dP(y~) R^-1/2, symmetric positive semidefinite: R^-1 sticking, 0 apart, and on the
// boundary the projection's derivative (a rank-one term along the cone's generator plus the
// tangential curvature mu~ g~_N / ||y~_T||).
#ifndef NCPKIT_SOLVERS_FRICTION_INTERNAL_CONVEX_CONTACT_H_
#define NCPKIT_SOLVERS_FRICTION_INTERNAL_CONVEX_CONTACT_H_

#include <Eigen/Dense>
#include <cmath>

#include "solvers/friction/friction_problem.h"

namespace ncpkit::internal {

enum class ConvexContactState { Apart, Sticking, Sliding };

struct ConvexContactPoint {
  Eigen::Vector3d impulse = Eigen::Vector3d::Zero();    // g
  Eigen::Matrix3d curvature = Eigen::Matrix3d::Zero();  // G = d(-g)/du
  double cost = 0.0;                                    // 1/2 ||g||_R^2
  ConvexContactState state = ConvexContactState::Apart;
};

// A contact's constants: the square roots of its compliances and the scaled coefficient.
struct ConvexContactScales {
  double normal_root = 1.0, tangent_root = 1.0, mu_scaled = 0.0;
  ConvexContactScales() = default;
  ConvexContactScales(double mu, double normal_compliance, double tangent_compliance)
      : normal_root(std::sqrt(normal_compliance)),
        tangent_root(std::sqrt(tangent_compliance)),
        mu_scaled(mu * tangent_root / normal_root) {}
};

// The line search's inner loop (convex_newton.cc): the impulse's product with a direction d of
// u and the curvature along it, d^T G d, without forming G.
inline double ConvexContactAlong(const ConvexContactScales& c, const Eigen::Vector3d& u,
                                 const Eigen::Vector3d& d, double* curvature) {
  const double yn = -u[0] / c.normal_root;
  const double yt1 = -u[1] / c.tangent_root, yt2 = -u[2] / c.tangent_root;
  const double s = TangentNorm(yt1, yt2);
  // d~ = R^-1/2 d.
  const double dn = d[0] / c.normal_root, dt1 = d[1] / c.tangent_root, dt2 = d[2] / c.tangent_root;
  if (s <= c.mu_scaled * yn) {  // sticking: g = R^-1/2 y~, G = R^-1
    *curvature = dn * dn + dt1 * dt1 + dt2 * dt2;
    return yn * dn + yt1 * dt1 + yt2 * dt2;
  }
  if (c.mu_scaled * s <= -yn) {
    *curvature = 0.0;
    return 0.0;
  }
  const double m = c.mu_scaled;
  const double gn = (yn + m * s) / (1.0 + m * m);
  const double t1 = yt1 / s, t2 = yt2 / s;
  const double along = dt1 * t1 + dt2 * t2;
  const double generator = dn + m * along;
  *curvature = generator * generator / (1.0 + m * m) +
               (m * gn / s) * (dt1 * dt1 + dt2 * dt2 - along * along);
  // g . d = g~ . d~ with g~ = (gn, m gn t).
  return gn * generator;
}

// The impulse alone, and the state it falls in.
inline Eigen::Vector3d ConvexContactImpulse(double mu, double normal_compliance,
                                            double tangent_compliance, const Eigen::Vector3d& u,
                                            ConvexContactState* state = nullptr) {
  const double sn = std::sqrt(normal_compliance), st = std::sqrt(tangent_compliance);
  const double mu_scaled = mu * st / sn;
  // y~ = R^1/2 y = -R^-1/2 u.
  const double yn = -u[0] / sn;
  const double yt1 = -u[1] / st, yt2 = -u[2] / st;
  const double s = TangentNorm(yt1, yt2);
  if (s <= mu_scaled * yn) {
    if (state != nullptr) *state = ConvexContactState::Sticking;
    return Eigen::Vector3d(yn / sn, yt1 / st, yt2 / st);
  }
  if (mu_scaled * s <= -yn) {
    if (state != nullptr) *state = ConvexContactState::Apart;
    return Eigen::Vector3d::Zero();
  }
  if (state != nullptr) *state = ConvexContactState::Sliding;
  const double gn = (yn + mu_scaled * s) / (1.0 + mu_scaled * mu_scaled);
  const double scale = mu_scaled * gn / s;  // s > 0 here: else one of the cases above holds
  return Eigen::Vector3d(gn / sn, scale * yt1 / st, scale * yt2 / st);
}

// The impulse with its cost and curvature.
inline ConvexContactPoint EvaluateConvexContact(double mu, double normal_compliance,
                                                double tangent_compliance,
                                                const Eigen::Vector3d& u) {
  ConvexContactPoint point;
  point.impulse = ConvexContactImpulse(mu, normal_compliance, tangent_compliance, u, &point.state);
  const Eigen::Vector3d compliance(normal_compliance, tangent_compliance, tangent_compliance);
  point.cost = 0.5 * point.impulse.dot(compliance.cwiseProduct(point.impulse));
  switch (point.state) {
    case ConvexContactState::Apart:
      break;
    case ConvexContactState::Sticking:
      point.curvature = compliance.cwiseInverse().asDiagonal();
      break;
    case ConvexContactState::Sliding: {
      const double sn = std::sqrt(normal_compliance), st = std::sqrt(tangent_compliance);
      const double mu_scaled = mu * st / sn;
      const Eigen::Vector2d yt(-u[1] / st, -u[2] / st);
      const double s = yt.norm();
      const Eigen::Vector2d t = yt / s;
      const double gn_scaled = point.impulse[0] * sn;
      // dP in the scaled variables: (1 / (1 + mu~^2)) [1; mu~ t] [1, mu~ t^T] on the cone's
      // generator plus mu~ g~_N / s (I - t t^T) across it.
      Eigen::Matrix3d dP = Eigen::Matrix3d::Zero();
      Eigen::Vector3d generator(1.0, mu_scaled * t.x(), mu_scaled * t.y());
      dP.noalias() += generator * generator.transpose() / (1.0 + mu_scaled * mu_scaled);
      dP.bottomRightCorner<2, 2>().noalias() +=
          (mu_scaled * gn_scaled / s) * (Eigen::Matrix2d::Identity() - t * t.transpose());
      const Eigen::Vector3d inverse_root(1.0 / sn, 1.0 / st, 1.0 / st);
      point.curvature = inverse_root.asDiagonal() * dP * inverse_root.asDiagonal();
      break;
    }
  }
  return point;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_FRICTION_INTERNAL_CONVEX_CONTACT_H_
