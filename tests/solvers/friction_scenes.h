// Frictional contact problems in the global form for the solver tests: random ones, and boxes
// resting on the ground or on each other.
#ifndef NCPKIT_TESTS_SOLVERS_FRICTION_SCENES_H_
#define NCPKIT_TESTS_SOLVERS_FRICTION_SCENES_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "solvers/friction/global_friction_problem.h"

namespace ncpkit::test {

// `bodies` rigid bodies (random SPD 6 x 6 mass blocks) and `nc` contacts, each between two
// bodies (one of them a fixed one, not in M, in a third of the contacts), random H pieces, f
// pushing the bodies together, w random.
struct RandomScene {
  Eigen::SparseMatrix<double> M, H;
  Eigen::VectorXd f, w, mu;
};

inline RandomScene MakeScene(int nc, int bodies, double mu, unsigned seed, int block = 6) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> body(0, bodies - 1);
  const int n = block * bodies;
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < bodies; ++k) {
    Eigen::MatrixXd A(block, block);
    for (int i = 0; i < block; ++i)
      for (int j = 0; j < block; ++j) A(i, j) = normal(rng);
    M.block(block * k, block * k, block, block) =
        A * A.transpose() + block * Eigen::MatrixXd::Identity(block, block);
  }
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, 3 * nc);
  for (int a = 0; a < nc; ++a) {
    const int b1 = body(rng), b2 = (b1 + 1 + body(rng) % (bodies - 1)) % bodies;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < block; ++i) {
        H(block * b1 + i, 3 * a + j) = normal(rng);
        if (a % 3 != 0) H(block * b2 + i, 3 * a + j) = -normal(rng);
      }
  }
  RandomScene scene;
  scene.M = M.sparseView();
  scene.H = H.sparseView();
  scene.f = Eigen::VectorXd(n);
  for (int i = 0; i < n; ++i) scene.f[i] = normal(rng);
  scene.w = Eigen::VectorXd(3 * nc);
  for (int a = 0; a < nc; ++a) {
    scene.w[3 * a] = normal(rng) - 1.0;
    scene.w[3 * a + 1] = normal(rng);
    scene.w[3 * a + 2] = normal(rng);
  }
  scene.mu = Eigen::VectorXd::Constant(nc, mu);
  return scene;
}

inline GlobalFrictionContactProblem Make(const RandomScene& s) {
  return GlobalFrictionContactProblem(s.M, s.H, s.f, s.w, s.mu);
}

// Rows of a contact at p with normal +z (tangents x, y) on a body centred at `center` (sign +1
// above the contact, -1 below).
inline Eigen::Matrix<double, 6, 3> VerticalContactRows(const Eigen::Vector3d& center,
                                                       const Eigen::Vector3d& p, double sign) {
  Eigen::Matrix<double, 6, 3> H;
  const Eigen::Vector3d frame[3] = {Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitX(),
                                    Eigen::Vector3d::UnitY()};
  for (int j = 0; j < 3; ++j) H.col(j) << sign * frame[j], sign * (p - center).cross(frame[j]);
  return H;
}

// One box, or two one on the other, of random sizes, masses and yaws on a fixed ground,
// h = 0.01 s: the bottom box's four corners on the ground and the top box's four corners on the
// bottom box (highest first, as the explicit stepper orders them), with gravity and a
// horizontal push on the top box, `push` times what friction can hold.
inline GlobalFrictionContactProblem BoxColumn(int count, unsigned seed, double push) {
  if (count < 1 || count > 2) throw std::invalid_argument("BoxColumn: count must be 1 or 2");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double h = 0.01, g = 9.81, mu = 0.5;
  struct Box {
    Eigen::Vector3d center, half;
    Eigen::Matrix3d rotation;
    double mass;
  };
  Box boxes[2];
  double base = 0.0;
  for (int k = 0; k < count; ++k) {
    Box& box = boxes[k];
    box.half = Eigen::Vector3d(0.2 + 0.3 * uniform(rng), 0.2 + 0.3 * uniform(rng),
                               0.1 + 0.3 * uniform(rng));
    if (k == 1) box.half.head<2>() *= 0.5;  // on the bottom box's top face
    box.mass = 0.5 + 3.0 * uniform(rng);
    box.rotation =
        Eigen::AngleAxisd(0.8 * (uniform(rng) - 0.5), Eigen::Vector3d::UnitZ()).toRotationMatrix();
    box.center = Eigen::Vector3d(0.05 * (uniform(rng) - 0.5), 0.05 * (uniform(rng) - 0.5),
                                 base + box.half.z());
    base += 2.0 * box.half.z();
  }
  GlobalFrictionContactProblem problem;
  for (int k = 0; k < count; ++k) {
    const Box& box = boxes[k];
    const Eigen::Vector3d d = box.half.cwiseAbs2();
    const Eigen::Vector3d inertia =
        box.mass / 3.0 * Eigen::Vector3d(d.y() + d.z(), d.x() + d.z(), d.x() + d.y());
    Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Zero();
    M.topLeftCorner<3, 3>() = box.mass * Eigen::Matrix3d::Identity();
    M.bottomRightCorner<3, 3>() = box.rotation * inertia.asDiagonal() * box.rotation.transpose();
    Eigen::Matrix<double, 6, 1> f = Eigen::Matrix<double, 6, 1>::Zero();
    f.z() = -box.mass * g * h;
    if (k == count - 1) f.x() = push * mu * box.mass * g * h;
    problem.AddBlock(M, f);
  }
  const auto rows = [&](int k, const Eigen::Vector3d& p, double sign) {
    return VerticalContactRows(boxes[k].center, p, sign);
  };
  const double corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int k = count - 1; k >= 0; --k) {
    for (const auto& c : corners) {
      const Eigen::Vector3d p =
          boxes[k].center + boxes[k].rotation * Eigen::Vector3d(c[0] * boxes[k].half.x(),
                                                                c[1] * boxes[k].half.y(),
                                                                -boxes[k].half.z());
      problem.AddContact(mu, Eigen::Vector3d::Zero());
      if (k == 1) problem.AddContactBlock(0, rows(0, p, -1.0));
      problem.AddContactBlock(k, rows(k, p, 1.0));
    }
  }
  problem.Finalize();
  return problem;
}

// Columns of two cubes on the ground (random sizes, masses, yaws and pushes on the top cube),
// each body's M^-1 = diag(I / m, I / J) exactly, as the explicit stepper poses spheres and
// cubes: the top cube's four corners on the bottom one, then the bottom one's on the ground.
// Column j's cubes are blocks 2 (j - first) and 2 (j - first) + 1 of the problem built.
inline GlobalFrictionContactProblem CubeColumns(int first, int count) {
  const double h = 0.01, g = 9.81, mu = 0.5;
  struct Cube {
    Eigen::Vector3d center;
    Eigen::Matrix3d rotation;
    double half, mass;
  };
  std::vector<Cube> cubes;
  std::vector<double> pushes;
  for (int j = first; j < first + count; ++j) {
    std::mt19937 rng(static_cast<unsigned>(j + 1));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    double base = 0.0;
    for (int k = 0; k < 2; ++k) {
      Cube cube;
      cube.half = (0.1 + 0.2 * uniform(rng)) * (k == 0 ? 1.0 : 0.5);
      cube.mass = 0.5 + 3.0 * uniform(rng);
      cube.rotation = Eigen::AngleAxisd(0.8 * (uniform(rng) - 0.5), Eigen::Vector3d::UnitZ())
                          .toRotationMatrix();
      cube.center = Eigen::Vector3d(0.02 * (uniform(rng) - 0.5), 0.02 * (uniform(rng) - 0.5),
                                    base + cube.half);
      base += 2.0 * cube.half;
      cubes.push_back(cube);
    }
    pushes.push_back(1.5 * (j % 3));
  }
  GlobalFrictionContactProblem problem;
  for (size_t k = 0; k < cubes.size(); ++k) {
    const Cube& cube = cubes[k];
    const double inertia = cube.mass * 2.0 / 3.0 * cube.half * cube.half;
    Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Zero(), inverse = M;
    M.diagonal() << Eigen::Vector3d::Constant(cube.mass), Eigen::Vector3d::Constant(inertia);
    inverse.diagonal() = M.diagonal().cwiseInverse();
    Eigen::Matrix<double, 6, 1> f = Eigen::Matrix<double, 6, 1>::Zero();
    f.z() = -cube.mass * g * h;
    if (k % 2 == 1) f.x() = pushes[k / 2] * mu * cube.mass * g * h;
    problem.AddBlock(M, inverse, f);
  }
  const auto rows = [&](size_t k, const Eigen::Vector3d& p, double sign) {
    return VerticalContactRows(cubes[k].center, p, sign);
  };
  const double corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (size_t column = 0; column < pushes.size(); ++column) {
    for (size_t k = 2 * column + 1; k + 1 >= 2 * column + 1; --k) {
      const Cube& cube = cubes[k];
      for (const auto& c : corners) {
        const Eigen::Vector3d p =
            cube.center + cube.rotation * cube.half * Eigen::Vector3d(c[0], c[1], -1.0);
        problem.AddContact(mu, Eigen::Vector3d::Zero());
        if (k % 2 == 1) problem.AddContactBlock(static_cast<int>(k - 1), rows(k - 1, p, -1.0));
        problem.AddContactBlock(static_cast<int>(k), rows(k, p, 1.0));
      }
    }
  }
  problem.Finalize();
  return problem;
}

// The convex contact model's conditions at r (solvers/friction/convex_newton.h), computed here
// from W and q and the compliances R (rows (R_N, R_T)): r in K_mu, s = W r + q + R r in the dual
// cone, r . s = 0, each as the largest violation over the contacts divided by (1 + ||q||) (and
// by (1 + ||r||) for the product).
struct ConvexModelViolations {
  double cone = 0.0, dual = 0.0, complementarity = 0.0;
  double Largest() const { return std::max({cone, dual, complementarity}); }
};

template <class Matrix>
ConvexModelViolations ConvexModelViolationsOf(const Matrix& W, const Eigen::VectorXd& q,
                                              const Eigen::VectorXd& mu, const Eigen::MatrixX2d& R,
                                              const Eigen::VectorXd& r) {
  Eigen::VectorXd s = W * r + q;
  for (int a = 0; a < mu.size(); ++a) {
    s.segment<3>(3 * a) +=
        Eigen::Vector3d(R(a, 0), R(a, 1), R(a, 1)).cwiseProduct(r.segment<3>(3 * a));
  }
  ConvexModelViolations v;
  const double scale = 1.0 + q.norm();
  for (int a = 0; a < mu.size(); ++a) {
    const Eigen::Vector3d ra = r.segment<3>(3 * a), sa = s.segment<3>(3 * a);
    v.cone = std::max({v.cone, ra.tail<2>().norm() - mu[a] * ra[0], -ra[0]});
    v.dual = std::max(v.dual, mu[a] * sa.tail<2>().norm() - sa[0]);
    v.complementarity = std::max(v.complementarity, std::abs(ra.dot(sa)) / (1.0 + r.norm()));
  }
  v.cone /= scale;
  v.dual /= scale;
  v.complementarity /= scale;
  return v;
}

// A unit cube of mass 1 turned 45 degrees about the vertical, resting on a fixed cube of the
// same size and spinning at 2 rad/s about the vertical, h = 0.01 s, mu = 0.5: its bottom face
// meets the fixed cube's top face on an octagon, whose eight vertices are the contacts (every
// vertex of the patch), in order round it. The friction impulses that stop the spin chase each
// other round the octagon. `copies` such cubes, side by side (block k and contacts 8k to
// 8k + 7 the k-th's).
inline GlobalFrictionContactProblem SpinningOctagon(int copies = 1) {
  const double h = 0.01, g = 9.81, mu = 0.5, spin = 2.0;
  const double pi = std::acos(-1.0);
  GlobalFrictionContactProblem problem;
  Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Identity();
  M.bottomRightCorner<3, 3>() /= 6.0;  // a unit cube's inertia, the same in every direction
  Eigen::Matrix<double, 6, 1> f =
      M * (Eigen::Matrix<double, 6, 1>() << 0, 0, 0, 0, 0, spin).finished();
  f.z() -= g * h;
  for (int copy = 0; copy < copies; ++copy) problem.AddBlock(M, f);
  const Eigen::Vector3d center(0.0, 0.0, 0.5);
  const double radius = 0.5 / std::cos(pi / 8.0);
  for (int copy = 0; copy < copies; ++copy) {
    for (int k = 0; k < 8; ++k) {
      const double angle = pi / 8.0 + k * pi / 4.0;
      const Eigen::Vector3d p(radius * std::cos(angle), radius * std::sin(angle), 0.0);
      problem.AddContact(mu, Eigen::Vector3d::Zero());
      problem.AddContactBlock(copy, VerticalContactRows(center, p, 1.0));
    }
  }
  problem.Finalize();
  return problem;
}

}  // namespace ncpkit::test

#endif  // NCPKIT_TESTS_SOLVERS_FRICTION_SCENES_H_
