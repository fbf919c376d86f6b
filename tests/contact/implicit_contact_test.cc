#include "contact/implicit_contact.h"

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "contact/implicit_pair.h"
#include "solvers/base/constants.h"
#include "solvers/mcp/jacobian_check.h"
#include "solvers/mcp/problem_builder.h"
#include "tests/contact/convex_pairs.h"

namespace ncpkit {
namespace {

using testing::MakeShape;

// One pair's residual in a builder of its own: blocks nu_f, [nu_g], geometry, forces.
template <int M, int N, bool kMovingG, bool kCompliant>
struct PairProblem {
  using Residual = ImplicitContactResidual<M, N, kMovingG, kCompliant>;
  ContactPairStep step;
  ProblemBuilder builder;
  int nu_f = -1, nu_g = -1, geometry = -1, forces = -1;

  explicit PairProblem(const ContactPairStep& s) : step(s) {
    nu_f = builder.AddVariableBlock(6, -kInf, kInf);
    if (kMovingG) nu_g = builder.AddVariableBlock(6, -kInf, kInf);
    geometry = builder.AddVariableBlock(Residual::kGeometrySize, -kInf, kInf);
    forces = builder.AddVariableBlock(Residual::kForceSize, -kInf, kInf);
    constexpr int G = Residual::kGeometrySize, P = Residual::kForceSize,
                  R = Residual::kNumResiduals;
    if constexpr (kMovingG) {
      builder.AddResidualBlock<R, 6, 6, G, P>(Residual{&step}, {geometry, forces, nu_f, nu_g},
                                              {nu_f, nu_g, geometry, forces});
    } else {
      builder.AddResidualBlock<R, 6, G, P>(Residual{&step}, {geometry, forces, nu_f},
                                           {nu_f, geometry, forces});
    }
  }
};

ContactPairStep BaseStep(ShapeKind f, const Eigen::Vector3d& size_f, ShapeKind g,
                         const Eigen::Vector3d& size_g) {
  ContactPairStep s;
  s.h = 0.01;
  s.shape_f = MakeShape(f, size_f);
  s.shape_g = MakeShape(g, size_g);
  s.state_f.position = Eigen::Vector3d(0.1, -0.2, 0.55);
  s.state_f.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 0.5).normalized()));
  s.state_f.linear_velocity = Eigen::Vector3d(0.5, -0.3, -0.2);
  s.state_f.angular_velocity = Eigen::Vector3d(0.4, 0.1, -0.7);
  s.state_g.position = Eigen::Vector3d(0.0, 0.0, -0.1);
  s.helper = Eigen::Vector3d::UnitX();
  s.law.mu = 0.4;
  s.law.e_t = 1.1;
  s.law.e_o = 0.9;
  s.law.e_r = 0.3;
  return s;
}

template <class Problem>
void CheckAtRandomPoints(Problem& problem, const char* what) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const int n = problem.builder.size();
  for (int trial = 0; trial < 5; ++trial) {
    Eigen::VectorXd z(n);
    for (int k = 0; k < n; ++k) z[k] = uniform(rng);
    // Multipliers and sigma positive, as near a solution; points near the bodies.
    const int g0 = problem.builder.block_offset(problem.geometry);
    const int p0 = problem.builder.block_offset(problem.forces);
    for (int k = g0 + 6; k < p0; ++k) z[k] = std::abs(z[k]) + 0.1;
    z[p0] = std::abs(z[p0]) + 0.1;
    z[p0 + 4] = std::abs(z[p0 + 4]) + 0.1;
    const JacobianCheckResult check = CheckJacobian(problem.builder, z, 1e-6);
    INFO(what << ", trial " << trial << ": " << check.report);
    CHECK(check.ok);
  }
}

TEST_CASE("contact residual Jacobians match finite differences away from contact") {
  {
    PairProblem<6, 1, false, false> p(BaseStep(ShapeKind::Box, Eigen::Vector3d(1, 0.8, 0.6),
                                               ShapeKind::HalfSpace, Eigen::Vector3d::Ones()));
    CheckAtRandomPoints(p, "box on a plane");
  }
  {
    PairProblem<3, 1, false, false> p(BaseStep(ShapeKind::Cylinder, Eigen::Vector3d(0.5, 2.0, 0),
                                               ShapeKind::HalfSpace, Eigen::Vector3d::Ones()));
    CheckAtRandomPoints(p, "cylinder on a plane");
  }
  {
    ContactPairStep s = BaseStep(ShapeKind::Sphere, Eigen::Vector3d(0.4, 0, 0), ShapeKind::Box,
                                 Eigen::Vector3d(1, 1, 0.2));
    s.g_moves = true;
    s.state_g.angular_velocity = Eigen::Vector3d(-0.2, 0.3, 0.1);
    s.state_g.linear_velocity = Eigen::Vector3d(0.1, 0.0, 0.3);
    PairProblem<1, 6, true, false> p(s);
    CheckAtRandomPoints(p, "sphere on a moving box");
  }
  {
    ContactPairStep s = BaseStep(ShapeKind::Ellipsoid, Eigen::Vector3d(0.5, 0.3, 0.2),
                                 ShapeKind::Cylinder, Eigen::Vector3d(0.3, 1.0, 0));
    s.law.torsion = false;
    PairProblem<1, 3, false, false> p(s);
    CheckAtRandomPoints(p, "ellipsoid on a cylinder, no torsion");
  }
  {
    ContactPairStep s = BaseStep(ShapeKind::Box, Eigen::Vector3d(1, 1, 1), ShapeKind::Box,
                                 Eigen::Vector3d(2, 2, 0.2));
    s.g_moves = true;
    s.law.thickness = 0.01;
    s.law.stiffness = 1e4;
    s.law.damping = 20;
    s.previous_deflection = 0.003;
    PairProblem<6, 6, true, true> p(s);
    CheckAtRandomPoints(p, "compliant box on a moving box");
  }
  {
    ContactPairStep s = BaseStep(ShapeKind::Box, Eigen::Vector3d(1, 1, 1), ShapeKind::HalfSpace,
                                 Eigen::Vector3d::Ones());
    s.law.thickness = 0.01;
    s.law.stiffness = 1e4;
    s.law.tangential_stiffness = 5e3;
    s.law.tangential_damping = 10;
    s.elastic = Eigen::Vector3d(1e-3, -2e-3, 0.01);
    PairProblem<6, 1, false, true> p(s);
    CheckAtRandomPoints(p, "compliant box with Kelvin-Voigt friction");
  }
}

TEST_CASE("contact residual Jacobians match finite differences at a face contact") {
  // A unit cube resting on z = 0 at the end of the step, sliding along x; a1 = a2 on the bottom
  // face (k1 = -z face, index 5), l_G = 1, the solution's friction.
  ContactPairStep s = BaseStep(ShapeKind::Box, Eigen::Vector3d(1, 1, 1), ShapeKind::HalfSpace,
                               Eigen::Vector3d::Ones());
  s.state_f.orientation = Eigen::Quaterniond::Identity();
  s.state_f.position = Eigen::Vector3d(0, 0, 0.5);
  s.state_g.position.setZero();
  s.k1 = 5;
  s.law.e_t = s.law.e_o = 1.0;
  PairProblem<6, 1, false, false> p(s);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(p.builder.size());
  z.head<6>() << 2.0, 0.0, 0.0, 0.0, 0.0, 0.0;  // sliding along x, no rotation
  const int g0 = p.builder.block_offset(p.geometry), p0 = p.builder.block_offset(p.forces);
  z.segment<3>(g0) = Eigen::Vector3d(0.02 + 0.06, 0.0, 0.0);  // ECP ahead of the centre
  z.segment<3>(g0 + 3) = z.segment<3>(g0);
  z[g0 + 6 + 6] = 1.0;                                     // l_G
  z.segment<5>(p0) << 0.098, -0.4 * 0.098, 0.0, 0.0, 2.0;  // p_n, p_t (= -mu p_n), sigma
  const JacobianCheckResult check = CheckJacobian(p.builder, z, 1e-6);
  INFO(check.report);
  CHECK(check.ok);
  // At this point eqs. 13, 14, 17 and the friction rows hold.
  Eigen::VectorXd F;
  REQUIRE(p.builder.Evaluate(z, &F, nullptr));
  CHECK(F.segment<6>(g0).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(std::abs(F[p0]) < 1e-12);
}

TEST_CASE("contact law validation names the bad field") {
  ContactLaw law;
  std::string why;
  CHECK(law.IsValid(&why));
  law.mu = -0.1;
  CHECK_FALSE(law.IsValid(&why));
  CHECK(why.find("mu") != std::string::npos);
  law.mu = 0.5;
  law.thickness = 0.01;
  CHECK_FALSE(law.IsValid(&why));
  CHECK(why.find("stiffness") != std::string::npos);
  law.e_r = std::nan("");
  CHECK_FALSE(law.IsValid(&why));
}

TEST_CASE("shape gradients agree with Jet derivatives of the inequalities") {
  using Jet3 = ceres::Jet<double, 3>;
  const Shape shapes[] = {MakeShape(ShapeKind::Box, Eigen::Vector3d(1, 2, 3)),
                          MakeShape(ShapeKind::Sphere, Eigen::Vector3d(0.7, 0, 0)),
                          MakeShape(ShapeKind::Ellipsoid, Eigen::Vector3d(0.5, 1, 2)),
                          MakeShape(ShapeKind::Cylinder, Eigen::Vector3d(0.4, 2, 0)),
                          MakeShape(ShapeKind::Capsule, Eigen::Vector3d(0.4, 0.4, 0)),
                          MakeShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones())};
  const double xi[3] = {0.3, -0.7, 0.45};  // beyond the capsule's segment end: on its cap
  for (const Shape& shape : shapes) {
    for (int i = 0; i < shape.NumInequalities(); ++i) {
      const Jet3 x[3] = {Jet3(xi[0], 0), Jet3(xi[1], 1), Jet3(xi[2], 2)};
      const Jet3 value = shape.Inequality(i, x);
      double g[3];
      shape.Gradient(i, xi, g);
      for (int k = 0; k < 3; ++k) CHECK(g[k] == doctest::Approx(value.v[k]).epsilon(1e-14));
    }
  }
}

TEST_CASE("support points: face and edge centres where the maximizer is not unique") {
  const Shape box = MakeShape(ShapeKind::Box, Eigen::Vector3d(1, 2, 3));
  CHECK(box.SupportPoint(Eigen::Vector3d(0, 0, -1)).isApprox(Eigen::Vector3d(0, 0, -1.5)));
  CHECK(box.SupportPoint(Eigen::Vector3d(1, 0, -1)).isApprox(Eigen::Vector3d(0.5, 0, -1.5)));
  CHECK(box.SupportPoint(Eigen::Vector3d(1, 1, 1)).isApprox(Eigen::Vector3d(0.5, 1, 1.5)));
  const Shape cylinder = MakeShape(ShapeKind::Cylinder, Eigen::Vector3d(0.5, 4, 0));
  CHECK(cylinder.SupportPoint(Eigen::Vector3d(0, 0, -1)).isApprox(Eigen::Vector3d(0, 0, -0.5)));
  CHECK(cylinder.SupportPoint(Eigen::Vector3d(1, 0, 0)).isApprox(Eigen::Vector3d(2, 0, 0)));
  const Shape ellipsoid = MakeShape(ShapeKind::Ellipsoid, Eigen::Vector3d(1, 2, 3));
  const Eigen::Vector3d d(0.3, -0.5, 0.8);
  const Eigen::Vector3d x = ellipsoid.SupportPoint(d);
  CHECK(std::abs(ellipsoid.Inequality(0, x.data())) < 1e-12);  // on the surface
  double g[3];
  ellipsoid.Gradient(0, x.data(), g);
  CHECK(Eigen::Vector3d(g[0], g[1], g[2]).normalized().isApprox(d.normalized(), 1e-12));
}

TEST_CASE("start values: a box on a turned, offset box starts with the lower face's normal") {
  // The line of the centres tilts with the offset (here by about 0.15 rad); the contact normal of
  // a face on a face is the face's, along which the boxes are farthest apart.
  ContactPairStep s;
  s.shape_f = MakeShape(ShapeKind::Box, Eigen::Vector3d(0.4, 0.4, 0.2));
  s.shape_g = MakeShape(ShapeKind::Box, Eigen::Vector3d(0.6, 0.5, 0.3));
  const Eigen::Vector3d up = Eigen::Vector3d(0.1, -0.2, 1.0).normalized();  // G's top face
  s.state_g.orientation = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), up);
  s.state_f.orientation =
      s.state_g.orientation * Eigen::Quaterniond(Eigen::AngleAxisd(0.35, Eigen::Vector3d::UnitZ()));
  const Eigen::Vector3d offset = s.state_g.orientation * Eigen::Vector3d(0.03, 0.02, 0.0);
  s.state_f.position = s.state_g.position + offset + (0.15 + 0.1 + 1e-3) * up;
  const ImplicitPairState start = StartValues(s, 1.0, Eigen::Vector3d(0, 0, -9.81));
  CHECK(start.normal.isApprox(up, 1e-12));
  // The separation along it is the gap the boxes were placed with.
  CHECK(up.dot(start.geometry.head<3>() - start.geometry.segment<3>(3)) ==
        doctest::Approx(1e-3).epsilon(1e-9));
}

}  // namespace
}  // namespace ncpkit
