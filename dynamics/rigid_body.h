// Rigid bodies for the time-steppers: state, inertia, the exact rotation update inside a step
// and the Newton-Euler impulse residual (Xie & Chakraborty 2016, eqs. 7 and 18;
// docs/references.md).
#ifndef NCPKIT_DYNAMICS_RIGID_BODY_H_
#define NCPKIT_DYNAMICS_RIGID_BODY_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cmath>
#include <string>

namespace ncpkit {

// Mass properties: mass (kg) and the inertia tensor about the centre of mass in the body frame
// (kg m^2).
struct MassProperties {
  double mass = 1.0;
  Eigen::Matrix3d body_inertia = Eigen::Matrix3d::Identity();
  // Mass > 0 and finite; inertia symmetric positive definite and finite.
  bool IsValid(std::string* why) const;
  // A solid box with side lengths `size` (m) and the given mass.
  static MassProperties Box(double mass, const Eigen::Vector3d& size);
  // A solid cylinder of the given radius and length with its axis along body x.
  static MassProperties Cylinder(double mass, double radius, double length);
  // A solid ellipsoid with semi-axes `semi_axes` (a sphere when they are equal).
  static MassProperties Ellipsoid(double mass, const Eigen::Vector3d& semi_axes);
};

// Rotation matrix (row-major, R[3 * r + c]) of the unit quaternion q = [w, x, y, z].
template <class T>
void QuaternionToRotation(const T* q, T* R) {
  const T w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = T(1) - T(2) * (y * y + z * z);
  R[1] = T(2) * (x * y - w * z);
  R[2] = T(2) * (x * z + w * y);
  R[3] = T(2) * (x * y + w * z);
  R[4] = T(1) - T(2) * (x * x + z * z);
  R[5] = T(2) * (y * z - w * x);
  R[6] = T(2) * (x * z - w * y);
  R[7] = T(2) * (y * z + w * x);
  R[8] = T(1) - T(2) * (x * x + y * y);
}

// State as the papers use it: position p of the centre of mass, orientation as a unit
// quaternion [w, x, y, z], twist nu = [v; omega] with omega spatial (world frame).
struct RigidBodyState {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
  Eigen::Vector3d linear_velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // world frame
};

// World-frame inertia R I_body R^T.
Eigen::Matrix3d WorldInertia(const MassProperties& mass, const Eigen::Quaterniond& orientation);

// Kinetic plus gravitational potential energy (J): 1/2 m v.v + 1/2 w.I w - m g.x, with the
// potential zero at the world origin.
double MechanicalEnergy(const MassProperties& mass, const RigidBodyState& state,
                        const Eigen::Vector3d& gravity);

// The rotation of angle |theta| about theta / |theta| as a quaternion [w, x, y, z], smooth in
// theta (a Taylor series near 0), so that Jets carry exact derivatives through it.
template <class T>
void AxisAngleQuaternion(const T* theta, T* q) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const T squared = theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2];
  T real, scale;  // q = [cos(a/2), sin(a/2)/a * theta], a = |theta|
  if (squared < T(1e-12)) {
    real = T(1) - squared / T(8);
    scale = T(0.5) - squared / T(48);
  } else {
    const T angle = sqrt(squared);
    real = cos(angle / T(2));
    scale = sin(angle / T(2)) / angle;
  }
  q[0] = real;
  q[1] = scale * theta[0];
  q[2] = scale * theta[1];
  q[3] = scale * theta[2];
}

// Position and orientation at the end of a step of length h with the end-of-step twist
// nu_plus = [v; omega] from the start pose (position, quaternion [w, x, y, z]): p+ = p + h v,
// R+ = exp(h [omega]x) R (exact on SO(3), smooth in omega). pose_plus = [p (3), q (4, [w, x, y,
// z])]. The start pose and h are in the scalar S: double when a step is solved, Jets when it is
// differentiated with respect to them.
template <class T, class S>
void IntegratePose(const S* position, const S* quaternion, const S& h, const T* nu_plus,
                   T* pose_plus) {
  for (int k = 0; k < 3; ++k) pose_plus[k] = T(position[k]) + T(h) * nu_plus[k];
  const T theta[3] = {T(h) * nu_plus[3], T(h) * nu_plus[4], T(h) * nu_plus[5]};
  T dq[4];
  AxisAngleQuaternion(theta, dq);
  const T w(quaternion[0]), x(quaternion[1]), y(quaternion[2]), z(quaternion[3]);
  // dq * q (Hamilton product): rotate by q first, then by dq in the world frame.
  pose_plus[3] = dq[0] * w - dq[1] * x - dq[2] * y - dq[3] * z;
  pose_plus[4] = dq[0] * x + dq[1] * w + dq[2] * z - dq[3] * y;
  pose_plus[5] = dq[0] * y - dq[1] * z + dq[2] * w + dq[3] * x;
  pose_plus[6] = dq[0] * z + dq[1] * y - dq[2] * x + dq[3] * w;
}

template <class T>
void IntegratePose(const RigidBodyState& state, double h, const T* nu_plus, T* pose_plus) {
  const Eigen::Quaterniond& q = state.orientation;
  const double quaternion[4] = {q.w(), q.x(), q.y(), q.z()};
  IntegratePose(state.position.data(), quaternion, h, nu_plus, pose_plus);
}

// The step's fixed data of the Newton-Euler residual for one body.
struct NewtonEulerStep {
  double h = 0.01;  // time step (s)
  MassProperties mass;
  RigidBodyState state;                              // at the start of the step
  Eigen::Vector3d force = Eigen::Vector3d::Zero();   // applied force incl. gravity (N)
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();  // applied torque, world frame (N m)
  Eigen::Matrix<double, 6, 1> applied_impulse = Eigen::Matrix<double, 6, 1>::Zero();  // N s
};

// Residual of the impulse-momentum balance (Xie & Chakraborty 2016 eq. 7/18, backward Euler):
//   M (nu+ - nu) - h f_app - p_app - w_contact + h [0; omega+ x (I omega+)] = 0,
// with M = diag(m I3, I), I the world-frame inertia at the start of the step, and w_contact
// the sum of the contact impulses' wrenches (sum_c W_c p_c) on this body. nu_plus = [v; omega],
// contact_wrench and residual have 6 entries.
template <class T>
void NewtonEulerResidual(const NewtonEulerStep& step, const Eigen::Matrix3d& world_inertia,
                         const T* nu_plus, const T* contact_wrench, T* residual) {
  const double m = step.mass.mass;
  const RigidBodyState& s = step.state;
  for (int k = 0; k < 3; ++k) {
    residual[k] = T(m) * (nu_plus[k] - T(s.linear_velocity[k])) - T(step.h * step.force[k]) -
                  T(step.applied_impulse[k]) - contact_wrench[k];
  }
  T I_omega[3], I_domega[3];
  for (int r = 0; r < 3; ++r) {
    I_omega[r] = T(0);
    I_domega[r] = T(0);
    for (int c = 0; c < 3; ++c) {
      I_omega[r] += T(world_inertia(r, c)) * nu_plus[3 + c];
      I_domega[r] += T(world_inertia(r, c)) * (nu_plus[3 + c] - T(s.angular_velocity[c]));
    }
  }
  const T* w = nu_plus + 3;
  const T gyroscopic[3] = {w[1] * I_omega[2] - w[2] * I_omega[1],
                           w[2] * I_omega[0] - w[0] * I_omega[2],
                           w[0] * I_omega[1] - w[1] * I_omega[0]};
  for (int k = 0; k < 3; ++k) {
    residual[3 + k] = I_domega[k] - T(step.h * step.torque[k]) - T(step.applied_impulse[3 + k]) -
                      contact_wrench[3 + k] + T(step.h) * gyroscopic[k];
  }
}

// The Newton-Euler residual of one body as a residual functor for ProblemBuilder, with no
// contact term: contact wrench residuals add into the same rows. Variable block: nu.
struct NewtonEulerBlock {
  NewtonEulerStep step;
  Eigen::Matrix3d world_inertia;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T zero[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};
    NewtonEulerResidual(step, world_inertia, x[0], zero, r);
    return true;
  }
};

// Updates the state to the end of the step for the twist nu_plus (renormalizing the
// quaternion).
void AdvanceState(double h, const Eigen::Matrix<double, 6, 1>& nu_plus, RigidBodyState* state);

// The state after one step of length h with the current twist (a guess of the end-of-step
// pose: free flight without forces).
RigidBodyState PredictedState(const RigidBodyState& state, double h);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_RIGID_BODY_H_
