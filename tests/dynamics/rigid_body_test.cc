#include "dynamics/rigid_body.h"

#include <doctest/doctest.h>

#include <limits>

#include "solvers/base/constants.h"
#include "solvers/mcp/jacobian_check.h"
#include "solvers/mcp/problem_builder.h"
#include "solvers/mcp/semismooth_newton.h"

namespace ncpkit {
namespace {

TEST_CASE("the pose update is the exact rotation exp(h [omega]x) R") {
  RigidBodyState state;
  state.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()));
  const Eigen::Matrix<double, 6, 1> nu =
      (Eigen::Matrix<double, 6, 1>() << 1, 2, 3, 0.4, -1.1, 2.5).finished();
  const double h = 0.05;
  double pose[7];
  IntegratePose(state, h, nu.data(), pose);
  const Eigen::Vector3d omega = nu.tail<3>();
  const Eigen::Matrix3d expected =
      Eigen::AngleAxisd(h * omega.norm(), omega.normalized()).toRotationMatrix() *
      state.orientation.toRotationMatrix();
  const Eigen::Quaterniond q(pose[3], pose[4], pose[5], pose[6]);
  CHECK(std::abs(q.norm() - 1.0) < 1e-15);
  CHECK((q.toRotationMatrix() - expected).cwiseAbs().maxCoeff() < 1e-14);
  CHECK(pose[0] == doctest::Approx(h * 1));
  CHECK(pose[2] == doctest::Approx(h * 3));
}

TEST_CASE("the axis-angle quaternion is smooth through zero: Jets against finite differences") {
  using Jet3 = ceres::Jet<double, 3>;
  for (double scale : {0.0, 1e-8, 1e-3, 0.5, 2.0}) {
    const Eigen::Vector3d theta = scale * Eigen::Vector3d(0.3, -0.5, 0.8);
    Jet3 t[3] = {Jet3(theta[0], 0), Jet3(theta[1], 1), Jet3(theta[2], 2)};
    Jet3 q[4];
    AxisAngleQuaternion(t, q);
    for (int j = 0; j < 3; ++j) {
      const double step = 1e-6;
      Eigen::Vector3d plus = theta, minus = theta;
      plus[j] += step;
      minus[j] -= step;
      double qp[4], qm[4];
      AxisAngleQuaternion(plus.data(), qp);
      AxisAngleQuaternion(minus.data(), qm);
      for (int i = 0; i < 4; ++i) {
        CAPTURE(scale);
        CHECK(q[i].v[j] == doctest::Approx((qp[i] - qm[i]) / (2 * step)).epsilon(1e-7));
      }
    }
  }
}

// The Newton-Euler residual as a builder functor of nu+ (no contact wrench).
struct FreeBody {
  const NewtonEulerStep* step;
  Eigen::Matrix3d inertia;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T zero[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};
    NewtonEulerResidual(*step, inertia, x[0], zero, r);
    return true;
  }
};

NewtonEulerStep SpinningBrick() {
  NewtonEulerStep step;
  step.h = 0.01;
  step.mass = MassProperties::Box(2.0, Eigen::Vector3d(1.0, 0.4, 0.2));
  step.state.orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitY()));
  step.state.linear_velocity = Eigen::Vector3d(1, 0, 2);
  step.state.angular_velocity = Eigen::Vector3d(0.2, 5.0, 0.1);  // near the unstable axis
  step.force = Eigen::Vector3d(0, 0, -9.8 * 2.0);
  return step;
}

TEST_CASE("the Newton-Euler residual: Jacobian against finite differences, and free flight") {
  const NewtonEulerStep step = SpinningBrick();
  ProblemBuilder problem;
  Eigen::Matrix<double, 6, 1> start;
  start << step.state.linear_velocity, step.state.angular_velocity;
  const int nu = problem.AddVariableBlock(Eigen::VectorXd::Constant(6, -kInf),
                                          Eigen::VectorXd::Constant(6, kInf), start);
  problem.AddResidualBlock<6, 6>(FreeBody{&step, WorldInertia(step.mass, step.state.orientation)},
                                 nu, {nu});
  for (double shift : {0.0, 0.7}) {
    const JacobianCheckResult check =
        CheckJacobian(problem, start + Eigen::VectorXd::Constant(6, shift));
    CAPTURE(check.report);
    CHECK(check.ok);
  }
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z = start;
  const auto summary = newton.Solve(problem, &z);
  REQUIRE(summary.IsSolved());
  // Linear part: v+ = v + h g exactly.
  CHECK(z[2] == doctest::Approx(2.0 - 0.01 * 9.8));
  CHECK(z[0] == doctest::Approx(1.0));
  // Backward Euler on the gyroscopic term does not create energy: w+^T I w+ <= w^T I w.
  const Eigen::Matrix3d I = WorldInertia(step.mass, step.state.orientation);
  const Eigen::Vector3d w0 = step.state.angular_velocity, w1 = z.tail<3>();
  CHECK(w1.dot(I * w1) <= w0.dot(I * w0) + 1e-12);
  CHECK(w1.dot(I * w1) > 0.9 * w0.dot(I * w0));
}

TEST_CASE("mass properties are validated") {
  std::string why;
  MassProperties m = MassProperties::Box(1.0, Eigen::Vector3d::Ones());
  CHECK(m.IsValid(&why));
  CHECK(m.body_inertia(0, 0) == doctest::Approx(1.0 / 6.0));
  m.mass = -1.0;
  CHECK_FALSE(m.IsValid(&why));
  CHECK(why.find("mass = -1") != std::string::npos);
  m.mass = 1.0;
  m.body_inertia(0, 1) = 0.5;
  CHECK_FALSE(m.IsValid(&why));
  CHECK(why.find("not symmetric") != std::string::npos);
  m.body_inertia = -Eigen::Matrix3d::Identity();
  CHECK_FALSE(m.IsValid(&why));
  CHECK(why.find("positive definite") != std::string::npos);
}

TEST_CASE("advancing the state keeps a unit quaternion") {
  RigidBodyState state;
  Eigen::Matrix<double, 6, 1> nu;
  nu << 0, 0, 0, 3.0, -2.0, 1.0;
  for (int k = 0; k < 1000; ++k) AdvanceState(0.01, nu, &state);
  CHECK(std::abs(state.orientation.norm() - 1.0) < 1e-14);
  // 10 s of constant spin: the rotation is exp(10 [omega]x).
  const Eigen::Vector3d omega = nu.tail<3>();
  const Eigen::Matrix3d expected =
      Eigen::AngleAxisd(10.0 * omega.norm(), omega.normalized()).toRotationMatrix();
  CHECK((state.orientation.toRotationMatrix() - expected).cwiseAbs().maxCoeff() < 1e-10);
}

}  // namespace
}  // namespace ncpkit
