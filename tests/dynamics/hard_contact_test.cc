// The contact modelling notes' hard contact and impact maps on a rigid box resting on, or falling
// onto, three of its corners.
#include "dynamics/hard_contact.h"

#include <doctest/doctest.h>

#include <cmath>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// A box of mass m and half sizes (a, b, c) in generalized coordinates q_dot = (v, omega) (world
// frame, unrotated box), and the normal-velocity Jacobian of three bottom corners on the plane
// z = const: the rows n^T v + (r_i x n)^T omega with n = e_z.
struct RestingBox {
  double m = 2.0, a = 0.5, b = 0.3, c = 0.2, gravity = 9.81;
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(6, 6);
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3, 6);
  RestingBox() {
    M.topLeftCorner<3, 3>() = m * Eigen::Matrix3d::Identity();
    M(3, 3) = m * (b * b + c * c) / 3.0;
    M(4, 4) = m * (a * a + c * c) / 3.0;
    M(5, 5) = m * (a * a + b * b) / 3.0;
    const Eigen::Vector3d corners[3] = {{a, b, -c}, {-a, b, -c}, {a, -b, -c}};
    const Eigen::Vector3d n = Eigen::Vector3d::UnitZ();
    for (int i = 0; i < 3; ++i) {
      J.block<1, 3>(i, 0) = n.transpose();
      J.block<1, 3>(i, 3) = corners[i].cross(n).transpose();
    }
  }
  // g(q): gravity on the left of M q_ddot + C q_dot + g + J^T F_c = G^T u.
  Eigen::VectorXd GravityTerm() const {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(6);
    g[2] = m * gravity;
    return g;
  }
};

TEST_CASE("the hard contact force balances gravity on a box resting on three corners") {
  const RestingBox box;
  const Eigen::VectorXd F =
      HardContactForce(box.M, box.J, -box.GravityTerm(), Eigen::VectorXd::Zero(3));
  // The reactions -F hold the weight, and the box does not accelerate.
  CHECK(-F.sum() == doctest::Approx(box.m * box.gravity).epsilon(1e-12));
  const Eigen::VectorXd acceleration =
      box.M.llt().solve(-box.GravityTerm() - box.J.transpose() * F);
  CHECK(acceleration.norm() <= 1e-12);
  // Corners (a, b), (-a, b), (a, -b): the torque balance about the centre puts half the weight
  // on the corner shared by both pairs.
  CHECK(-F[0] == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(-F[1] == doctest::Approx(0.5 * box.m * box.gravity).epsilon(1e-12));
  CHECK(-F[2] == doctest::Approx(0.5 * box.m * box.gravity).epsilon(1e-12));
}

TEST_CASE("the support null-space projector projects onto the allowed motions") {
  const RestingBox box;
  const Eigen::MatrixXd N = SupportNullSpaceProjector(box.M, box.J);
  CHECK((box.J * N).norm() <= 1e-12);
  CHECK((N * N - N).norm() <= 1e-12);
  CHECK((box.M * N - N.transpose() * box.M).norm() <= 1e-12);  // dynamically consistent
  // A motion the contacts allow (sliding in x, spinning about z) passes unchanged.
  Eigen::VectorXd allowed = Eigen::VectorXd::Zero(6);
  allowed << 0.3, -0.2, 0.0, 0.0, 0.0, 0.7;
  CHECK((box.J * allowed).norm() <= 1e-15);
  CHECK((N * allowed - allowed).norm() <= 1e-12);
}

TEST_CASE("impact maps: Lagrangian and Hamiltonian forms agree, and the energy loss") {
  const RestingBox box;
  Eigen::VectorXd before(6);
  before << 0.4, -0.1, -2.0, 0.5, -0.3, 0.2;  // falling and tumbling onto the three corners
  const InelasticImpact impact = InelasticImpactMap(box.M, box.J, before);
  CHECK((box.J * impact.velocity_after).norm() <= 1e-12);  // the contacts come to rest
  const Eigen::MatrixXd N = SupportNullSpaceProjector(box.M, box.J);
  CHECK((impact.velocity_after - N * before).norm() <= 1e-12);
  // p+ = projection of p- = M q_dot-, and q_dot+ = M^-1 p+.
  const Eigen::VectorXd p_after = MomentumProjection(box.M, box.J, box.M * before);
  CHECK((box.M.llt().solve(p_after) - impact.velocity_after).norm() <= 1e-12);
  // Energy loss: 1/2 dq^T M dq = T- - T+ = the Hamiltonian expression.
  const double kinetic_before = 0.5 * before.dot(box.M * before);
  const double kinetic_after = 0.5 * impact.velocity_after.dot(box.M * impact.velocity_after);
  CHECK(impact.energy_loss > 0.0);
  CHECK(impact.energy_loss == doctest::Approx(kinetic_before - kinetic_after).epsilon(1e-12));
  CHECK(ImpactEnergyLossFromMomentum(box.M, box.J, box.M * before) ==
        doctest::Approx(impact.energy_loss).epsilon(1e-12));
  // The impulse is the end-effector inertia times the contact velocity.
  const Eigen::MatrixXd Lambda = (box.J * box.M.inverse() * box.J.transpose()).inverse();
  CHECK((impact.impulse - Lambda * box.J * before).norm() <= 1e-12);
}

TEST_CASE("hard contact: bad input is refused with the reason") {
  const RestingBox box;
  Eigen::MatrixXd redundant(4, 6);
  redundant << box.J, box.J.row(0) + box.J.row(1);
  CHECK_THROWS_WITH_AS(SupportNullSpaceProjector(box.M, redundant), doctest::Contains("redundant"),
                       InputError);
  CHECK_THROWS_WITH_AS(SupportNullSpaceProjector(-box.M, box.J),
                       doctest::Contains("positive definite"), InputError);
  CHECK_THROWS_AS(SupportNullSpaceProjector(box.M, Eigen::MatrixXd::Ones(3, 5)), InputError);
  Eigen::MatrixXd nan = box.M;
  nan(1, 1) = std::nan("");
  CHECK_THROWS_AS(SupportNullSpaceProjector(nan, box.J), InputError);
  CHECK_THROWS_AS(InelasticImpactMap(box.M, box.J, Eigen::VectorXd::Zero(5)), InputError);
  CHECK_THROWS_AS(HardContactForce(box.M, box.J, Eigen::VectorXd::Zero(6), Eigen::VectorXd(2)),
                  InputError);
}

}  // namespace
}  // namespace ncpkit
