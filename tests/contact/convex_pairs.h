// Helpers of the convex-pair tests (GJK/EPA, the initial-overlap check): shapes, random poses
// and the separating-axis value of a direction, evaluated from the shapes' support points.
#ifndef NCPKIT_TESTS_CONTACT_CONVEX_PAIRS_H_
#define NCPKIT_TESTS_CONTACT_CONVEX_PAIRS_H_

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {
namespace testing {

inline Shape MakeShape(ShapeKind kind, const Eigen::Vector3d& size) {
  Shape s;
  s.kind = kind;
  s.size = size;
  return s;
}

// Centre uniform in the cube [-spread, spread]^3, orientation from a normalized random
// quaternion.
inline ShapePose RandomPose(std::mt19937* rng, double spread) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ShapePose pose;
  pose.position = spread * Eigen::Vector3d(u(*rng), u(*rng), u(*rng));
  pose.rotation =
      Eigen::Quaterniond(u(*rng), u(*rng), u(*rng), u(*rng)).normalized().toRotationMatrix();
  return pose;
}

// s(n) = min over B of n . y - max over A of n . x: the separating-axis value of a unit n
// (B's side along n).
inline double Separation(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                         const Eigen::Vector3d& n) {
  const auto world = [](const Shape& s, const ShapePose& p, const Eigen::Vector3d& d) {
    return Eigen::Vector3d(p.position +
                           p.rotation * s.SupportPoint(p.rotation.transpose() * d, 0.0));
  };
  return n.dot(world(b, pb, -n)) - n.dot(world(a, pa, n));
}

// The largest s(n) over `count` directions spread evenly over the sphere (a Fibonacci lattice):
// a lower bound of the signed distance that no exact method may beat.
inline double LargestSeparationOverDirections(const Shape& a, const ShapePose& pa, const Shape& b,
                                              const ShapePose& pb, int count = 4000) {
  const double golden = M_PI * (3.0 - std::sqrt(5.0));
  double best = -1e300;
  for (int k = 0; k < count; ++k) {
    const double z = 1.0 - 2.0 * (k + 0.5) / count;
    const double r = std::sqrt(1.0 - z * z);
    const Eigen::Vector3d n(r * std::cos(golden * k), r * std::sin(golden * k), z);
    best = std::max(best, Separation(a, pa, b, pb, n));
  }
  return best;
}

}  // namespace testing
}  // namespace ncpkit

#endif  // NCPKIT_TESTS_CONTACT_CONVEX_PAIRS_H_
