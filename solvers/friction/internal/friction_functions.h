// The per-contact functions whose zeros are the solutions of a frictional contact problem, with
// elements of their generalized Jacobians: the Alart-Curnier function and the Fischer-Burmeister
// function of the second-order cone. Used by FrictionNewton (friction_newton.h).
#ifndef NCPKIT_SOLVERS_FRICTION_INTERNAL_FRICTION_FUNCTIONS_H_
#define NCPKIT_SOLVERS_FRICTION_INTERNAL_FRICTION_FUNCTIONS_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <cmath>

namespace ncpkit::internal {

// Alart & Curnier (1991), per contact with u = W r + q:
//   Phi_N = r_N - max(0, r_N - rho u_N),
//   Phi_T = r_T - P_D(mu max(0, r_N - rho u_N)) (r_T - rho u_T),
// and A = dPhi/dr, B = dPhi/du (hand-written; an element of the generalized Jacobian at kinks).
void AlartCurnierContact(double mu, double rho, const Eigen::Vector3d& r, const Eigen::Vector3d& u,
                         Eigen::Vector3d* phi, Eigen::Matrix3d* A, Eigen::Matrix3d* B);

// The Fischer-Burmeister function of the Lorentz cone L = { x_0 >= ||(x_1, x_2)|| } (Fukushima,
// Luo & Tseng 2002), phi(x, y) = x + y - (x o x + y o y)^(1/2) in its Jordan algebra, which
// vanishes exactly when L ∋ x ⊥ y ∈ L. With mu > 0, x = (mu r_N, r_T) is in L when r is in the
// Coulomb cone K_mu, and y = rho (v_N, mu v_T), v = u + mu ||u_T|| e_N De Saxcé's modified
// velocity, is in L when v is in the dual cone; x.y = rho mu r.v. mu = 0: the scalar FB function
// on (r_N, rho u_N) and r_T = 0. `smoothing` s > 0 adds 2 s^2 to the identity part under the
// square root and smooths ||u_T|| (Chen & Tseng's smoothing), which keeps the derivatives finite
// at kinks; s = 0 is the exact function.
template <class T>
Eigen::Matrix<T, 3, 1> FischerBurmeisterSoc(double mu, double rho, const Eigen::Matrix<T, 3, 1>& r,
                                            const Eigen::Matrix<T, 3, 1>& u, double smoothing) {
  using ceres::sqrt;
  using std::sqrt;
  const double s2 = smoothing * smoothing;
  Eigen::Matrix<T, 3, 1> phi;
  if (mu == 0.0) {
    const T a = r[0], b = T(rho) * u[0];
    phi[0] = a + b - sqrt(a * a + b * b + T(2.0 * s2));
    phi[1] = r[1];
    phi[2] = r[2];
    return phi;
  }
  const T slip = sqrt(u[1] * u[1] + u[2] * u[2] + T(s2 * s2));
  const Eigen::Matrix<T, 3, 1> x(T(mu) * r[0], r[1], r[2]);
  const Eigen::Matrix<T, 3, 1> y(T(rho) * (u[0] + T(mu) * slip), T(rho * mu) * u[1],
                                 T(rho * mu) * u[2]);
  // z = x o x + y o y = (|x|^2 + |y|^2, 2 (x_0 x_bar + y_0 y_bar)), plus 2 s^2 e.
  const T z0 = x.squaredNorm() + y.squaredNorm() + T(2.0 * s2);
  const T z1 = T(2.0) * (x[0] * x[1] + y[0] * y[1]);
  const T z2 = T(2.0) * (x[0] * x[2] + y[0] * y[2]);
  const T norm = sqrt(z1 * z1 + z2 * z2 + T(s2 * s2));
  // Spectral values z0 -+ |z_bar|. The smaller one is (z0^2 - |z_bar|^2) / (z0 + |z_bar|), its
  // numerator summed from nonnegative terms instead of z0 - |z_bar|, which cancels to rounding
  // (1e-16 of z0, so 1e-8 in its square root) at contacts on the stick-slip edge: with
  // P = |x|^2 + |y|^2, z0^2 - |z_bar|^2 = det(x)^2 + det(y)^2 + 2 B + 4 s^2 P + 3 s^4, where
  // det(x) = x_0^2 - |x_bar|^2 and B = |x|^2 |y|^2 - 4 x_0 y_0 x_bar.y_bar
  //   = |x_0 y_bar - y_0 x_bar|^2 + (x_0 y_0 - x_bar.y_bar)^2 + (x_bar x y_bar)^2.
  const T det_x = (x[0] - x[1]) * (x[0] + x[1]) - x[2] * x[2];
  const T det_y = (y[0] - y[1]) * (y[0] + y[1]) - y[2] * y[2];
  const T c1 = x[0] * y[1] - y[0] * x[1], c2 = x[0] * y[2] - y[0] * x[2];
  const T dot = x[0] * y[0] - x[1] * y[1] - x[2] * y[2];
  const T cross = x[1] * y[2] - x[2] * y[1];
  const T p = x.squaredNorm() + y.squaredNorm();
  const T numerator = det_x * det_x + det_y * det_y +
                      T(2.0) * (c1 * c1 + c2 * c2 + dot * dot + cross * cross) + T(4.0 * s2) * p +
                      T(3.0 * s2 * s2);
  const T sum = z0 + norm;
  T small = sum > T(0.0) ? numerator / sum : T(0.0) * numerator;
  if (small < T(0.0)) small = T(0.0) * small;
  const T root_small = sqrt(small), root_large = sqrt(z0 + norm);
  const T half_sum = T(0.5) * (root_large + root_small);
  T half_difference = T(0.5) * (root_large - root_small);
  Eigen::Matrix<T, 3, 1> root;
  root[0] = half_sum;
  if (norm > T(0.0)) {
    root[1] = half_difference * z1 / norm;
    root[2] = half_difference * z2 / norm;
  } else {
    root[1] = root[2] = T(0.0);
  }
  phi = x + y - root;
  return phi;
}

// The exact FB value and, through 6-wide Jets of the smoothed function, A = dPhi/dr and
// B = dPhi/du: smoothing `relative_smoothing` times the scale of r and u (1e-7 to 1e-6: a Newton
// iteration sets it from its error, friction_newton.cc), or 1e-6 and then 1e-4 of it where rounding
// leaves the function without finite derivatives.
void FischerBurmeisterContact(double mu, double rho, const Eigen::Vector3d& r,
                              const Eigen::Vector3d& u, double relative_smoothing,
                              Eigen::Vector3d* phi, Eigen::Matrix3d* A, Eigen::Matrix3d* B);

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_FRICTION_INTERNAL_FRICTION_FUNCTIONS_H_
