#include "contact/broad_phase.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace ncpkit {
namespace {

// Every pair a double loop accepts (centres at most r_i + r_j apart and boxes, cut to the
// spheres' cubes, overlapping on every axis, not both fixed; an unbounded or NaN sphere with
// everything), in the double loop's order.
std::vector<std::pair<int, int>> AllPairs(const std::vector<BoundingSphere>& spheres) {
  std::vector<std::pair<int, int>> pairs;
  const int n = static_cast<int>(spheres.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const BoundingSphere& a = spheres[i];
      const BoundingSphere& b = spheres[j];
      if (a.fixed && b.fixed) continue;
      const Eigen::Vector3d apart = (a.centre - b.centre).cwiseAbs();
      const Eigen::Vector3d reach_a = a.half_extents.cwiseMin(a.radius);
      const Eigen::Vector3d reach_b = b.half_extents.cwiseMin(b.radius);
      if (a.centre.allFinite() && b.centre.allFinite() && std::isfinite(a.radius) &&
          std::isfinite(b.radius) && !(apart.array() <= (reach_a + reach_b).array()).all()) {
        continue;
      }
      const double d = (a.centre - b.centre).norm();
      if (!(d <= a.radius + b.radius) && std::isfinite(d) && std::isfinite(a.radius) &&
          std::isfinite(b.radius)) {
        continue;
      }
      pairs.emplace_back(i, j);
    }
  }
  return pairs;
}

TEST_CASE("broad phase: the pairs of a double loop, in its order, on random scenes") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> position(-5.0, 5.0), radius(0.01, 1.0);
  BroadPhase broad_phase;  // reused: the workspace must not carry anything over
  std::vector<std::pair<int, int>> found;
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 1 + trial * 4;
    std::vector<BoundingSphere> spheres(n);
    for (int i = 0; i < n; ++i) {
      // Flattened along a random axis in half the trials (the sweep axis must adapt).
      spheres[i].centre = Eigen::Vector3d(position(rng), position(rng), position(rng));
      if (trial % 2) spheres[i].centre[trial % 3] *= 0.01;
      spheres[i].radius = radius(rng);
      // Boxes inside the sphere's cube, in two trials of three.
      if (trial % 3 != 0) {
        for (int k = 0; k < 3; ++k) {
          spheres[i].half_extents[k] =
              spheres[i].radius * std::uniform_real_distribution<double>(0.2, 1.0)(rng);
        }
      }
      spheres[i].fixed = (i % 5) == 0;
    }
    if (trial % 7 == 3) spheres[n / 2].radius = INFINITY;  // a half-space
    if (trial % 11 == 5) {
      spheres[0].radius = INFINITY;
      spheres[0].fixed = true;
      spheres[n - 1].radius = INFINITY;  // two unbounded bodies: their pair once
    }
    if (trial % 13 == 4) spheres[n / 3].centre.x() = NAN;
    broad_phase.Find(spheres, &found);
    CHECK(found == AllPairs(spheres));
  }
}

TEST_CASE(
    "broad phase: strips give the double loop's pairs on wide layers with walls, many seeds") {
  // From 256 bodies on, the space is cut into strips across a second axis: layers of small
  // bodies of mixed sizes, spread over a plane, with a few walls and slabs much wider than a
  // strip (swept against all), a few medium ones spanning two strips, half-spaces and, in some
  // seeds, more wide bodies than strips allow (the single sweep again).
  BroadPhase broad_phase;
  std::vector<std::pair<int, int>> found;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(100 + seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const int n = 256 + 13 * seed;
    const double side = 2.0 + 0.2 * seed;
    std::vector<BoundingSphere> spheres(n);
    const int num_wide = seed % 5 == 4 ? 80 : seed % 4;
    for (int i = 0; i < n; ++i) {
      BoundingSphere& s = spheres[i];
      s.centre = Eigen::Vector3d(side * unit(rng), side * unit(rng), 0.3 * unit(rng));
      if (seed % 3 == 1) std::swap(s.centre.x(), s.centre.z());  // a wall of bodies, upright
      s.radius = 0.05 + 0.05 * unit(rng);
      if (i % 17 == 0) s.radius *= 2.5;  // medium: across two strips
      for (int k = 0; k < 3; ++k) s.half_extents[k] = s.radius * (0.3 + 0.7 * unit(rng));
      if (i < num_wide) {
        s.radius = side * (0.2 + unit(rng));
        s.half_extents = Eigen::Vector3d(side, 0.05, 1.0) * (0.2 + unit(rng));
        s.fixed = i % 2 == 0;
      }
      if (seed % 6 == 0 && i % 9 == 0) s.half_extents.setConstant(INFINITY);  // sphere only
    }
    if (seed % 7 == 2) spheres[n / 2].radius = INFINITY;                // a half-space
    if (seed % 10 == 3) spheres[n - 1].centre = spheres[n - 2].centre;  // two on one spot
    broad_phase.Find(spheres, &found);
    CAPTURE(seed);
    CHECK(found == AllPairs(spheres));
  }
}

TEST_CASE("broad phase: FindAround adds what the grown spheres now meet, as Find would") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> position(-3.0, 3.0), radius(0.05, 0.6);
  BroadPhase broad_phase;
  int num_tested = 0;  // trials where FindGrown tested the grown against all
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 5 + 3 * trial;
    std::vector<BoundingSphere> spheres(n);
    for (int i = 0; i < n; ++i) {
      spheres[i].centre = Eigen::Vector3d(position(rng), position(rng), position(rng));
      spheres[i].radius = radius(rng);
      spheres[i].half_extents = Eigen::Vector3d::Constant(0.8 * spheres[i].radius);
      spheres[i].fixed = i % 7 == 0;
    }
    if (trial % 5 == 2) spheres[0].radius = INFINITY;  // a half-space
    std::vector<std::pair<int, int>> around;
    broad_phase.Find(spheres, &around);
    const std::vector<std::pair<int, int>> before = around;
    std::vector<char> grown(n, 0);
    // Few grown (tested against all), or many (a new sweep) in every fourth trial.
    for (int i = 0; i < n; i += trial % 4 == 3 ? 3 : 17) {
      grown[i] = 1;
      spheres[i].radius *= 1.5;
      spheres[i].half_extents *= 1.5;
    }
    std::vector<std::pair<int, int>> of_grown;
    const bool tested = broad_phase.FindGrown(spheres, grown, &of_grown);
    broad_phase.FindAround(spheres, grown, &around);
    std::vector<std::pair<int, int>> fresh;
    broad_phase.Find(spheres, &fresh);
    CAPTURE(trial);
    num_tested += tested ? 1 : 0;
    if (tested) {
      // The grown spheres' pairs of the new Find, sorted, each once, and nothing without a grown
      // sphere; the added pairs of FindAround among them.
      CHECK(std::is_sorted(of_grown.begin(), of_grown.end()));
      CHECK(std::adjacent_find(of_grown.begin(), of_grown.end()) == of_grown.end());
      std::vector<std::pair<int, int>> fresh_of_grown;
      for (const auto& [i, j] : fresh) {
        if (grown[i] || grown[j]) fresh_of_grown.emplace_back(i, j);
      }
      CHECK(std::includes(of_grown.begin(), of_grown.end(), fresh_of_grown.begin(),
                          fresh_of_grown.end()));
      for (const auto& [i, j] : of_grown) CHECK((grown[i] || grown[j]));
      for (const auto& pair : around) {
        CHECK((std::binary_search(before.begin(), before.end(), pair) ||
               std::binary_search(of_grown.begin(), of_grown.end(), pair)));
      }
    } else {
      CHECK(of_grown.empty());
      CHECK(trial % 4 == 3);  // only where many grew
    }
    CHECK(std::is_sorted(around.begin(), around.end()));
    CHECK(std::adjacent_find(around.begin(), around.end()) == around.end());
    // Everything Find reports now, and nothing but the old pairs and the double loop's.
    CHECK(std::includes(around.begin(), around.end(), fresh.begin(), fresh.end()));
    const std::vector<std::pair<int, int>> all = AllPairs(spheres);
    for (const auto& pair : around) {
      const bool old = std::binary_search(before.begin(), before.end(), pair);
      CHECK((old || std::binary_search(all.begin(), all.end(), pair)));
    }
  }
  CHECK(num_tested >= 30);
}

TEST_CASE("broad phase: touching spheres are paired (no rounding loss at the boundary)") {
  std::vector<BoundingSphere> spheres(2);
  spheres[0].centre = Eigen::Vector3d(1e6 + 0.1, 0.3, 0.7);
  spheres[0].radius = 0.1;
  spheres[1].centre = spheres[0].centre + Eigen::Vector3d(0.3, 0.0, 0.0);
  spheres[1].radius = (spheres[1].centre - spheres[0].centre).norm() - 0.1;
  std::vector<std::pair<int, int>> found;
  BroadPhase().Find(spheres, &found);
  REQUIRE(found.size() == 1);
  spheres[1].centre.x() += 1e-3;
  BroadPhase().Find(spheres, &found);
  CHECK(found.empty());
}

TEST_CASE("broad phase: boxes side by side 5 mm apart are not paired, touching ones are") {
  // Unit cubes: their spheres (radius 0.87) overlap, their boxes do not.
  std::vector<BoundingSphere> spheres(2);
  for (BoundingSphere& s : spheres) {
    s.radius = std::sqrt(0.75);
    s.half_extents = Eigen::Vector3d::Constant(0.5);
  }
  spheres[1].centre.x() = 1.005;
  std::vector<std::pair<int, int>> found;
  BroadPhase().Find(spheres, &found);
  CHECK(found.empty());
  spheres[1].centre.x() = 1.0;
  BroadPhase().Find(spheres, &found);
  CHECK(found.size() == 1);
  spheres[1].centre = Eigen::Vector3d(1e6 + 1.0, 0.0, 0.0);  // rounding at 1e6 m
  spheres[0].centre = Eigen::Vector3d(1e6, 0.0, 0.0);
  BroadPhase().Find(spheres, &found);
  CHECK(found.size() == 1);
}

TEST_CASE("broad phase: 10,000 spheres on a grid find their neighbours only") {
  // A 100 x 100 layer of unit spheres 2.001 apart on a plane: each touches only the plane.
  std::vector<BoundingSphere> spheres;
  BoundingSphere plane;
  plane.radius = INFINITY;
  plane.fixed = true;
  spheres.push_back(plane);
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 100; ++j) {
      BoundingSphere s;
      s.centre = Eigen::Vector3d(2.001 * i, 2.001 * j, 1.0);
      s.radius = 1.0;
      spheres.push_back(s);
    }
  }
  std::vector<std::pair<int, int>> found;
  BroadPhase broad_phase;
  broad_phase.Find(spheres, &found);
  CHECK(found.size() == 10000);
  // In strips, each sphere meets a few others along the sweep axis (13,200 candidates in all,
  // measured); with one sweep axis it meets much of its column (495,000, measured with the
  // strips disabled).
  CHECK(broad_phase.last_candidates() <= 5 * 10000);
  spheres[1].centre.y() = 1.0;  // now touching its neighbour along y
  BroadPhase().Find(spheres, &found);
  CHECK(found.size() == 10001);
}

}  // namespace
}  // namespace ncpkit
