// The narrow phase's cost per pair of shapes: ExplicitContactGeometry::FindContacts on 512
// random placements of one pair of kinds (sizes 0.1-0.8 m, centres within 0.8 m, so that about
// two in three are within the 5 cm threshold or overlapping). The pairs without a closed form
// (cylinders and ellipsoids against boxes, spheres and each other) go through GJK/EPA; box-box
// (the separating-axis test) is the closed-form reference. Counter `contacts`: points found
// per pair, on average.
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <random>
#include <vector>

#include "contact/distance.h"

namespace ncpkit {
namespace {

struct Placement {
  Shape a, b;
  ShapePose pose_a, pose_b;
};

std::vector<Placement> RandomPlacements(ShapeKind a, ShapeKind b) {
  std::mt19937 random(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0), size(0.1, 0.8);
  const auto rotation = [&] {
    return Eigen::Quaterniond(u(random), u(random), u(random), u(random))
        .normalized()
        .toRotationMatrix();
  };
  std::vector<Placement> placements(512);
  for (Placement& p : placements) {
    p.a.kind = a;
    p.b.kind = b;
    p.a.size = Eigen::Vector3d(size(random), size(random), size(random));
    p.b.size = Eigen::Vector3d(size(random), size(random), size(random));
    p.pose_a.rotation = rotation();
    p.pose_b.rotation = rotation();
    p.pose_b.position = 0.8 * Eigen::Vector3d(u(random), u(random), u(random));
  }
  return placements;
}

void BM_FindContacts(benchmark::State& state, ShapeKind a, ShapeKind b) {
  const std::vector<Placement> placements = RandomPlacements(a, b);
  const ExplicitContactGeometry geometry;
  std::vector<ContactPoint> contacts;
  contacts.reserve(64);
  size_t found = 0, pairs = 0;
  for (auto _ : state) {
    for (const Placement& p : placements) {
      contacts.clear();
      geometry.FindContacts(p.a, p.pose_a, p.b, p.pose_b, 0.05, &contacts);
      found += contacts.size();
    }
    pairs += placements.size();
    benchmark::DoNotOptimize(contacts.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(pairs));
  state.counters["contacts"] = static_cast<double>(found) / static_cast<double>(pairs);
}

BENCHMARK_CAPTURE(BM_FindContacts, box_box, ShapeKind::Box, ShapeKind::Box);
BENCHMARK_CAPTURE(BM_FindContacts, box_cylinder, ShapeKind::Box, ShapeKind::Cylinder);
BENCHMARK_CAPTURE(BM_FindContacts, box_ellipsoid, ShapeKind::Box, ShapeKind::Ellipsoid);
BENCHMARK_CAPTURE(BM_FindContacts, sphere_cylinder, ShapeKind::Sphere, ShapeKind::Cylinder);
BENCHMARK_CAPTURE(BM_FindContacts, cylinder_cylinder, ShapeKind::Cylinder, ShapeKind::Cylinder);
BENCHMARK_CAPTURE(BM_FindContacts, ellipsoid_cylinder, ShapeKind::Ellipsoid, ShapeKind::Cylinder);
BENCHMARK_CAPTURE(BM_FindContacts, ellipsoid_ellipsoid, ShapeKind::Ellipsoid, ShapeKind::Ellipsoid);

}  // namespace
}  // namespace ncpkit
