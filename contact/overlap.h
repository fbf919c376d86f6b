// Penetration depth of two convex shapes at given poses, for checking a scene's initial
// configuration (bodies that overlap at the start).
#ifndef NCPKIT_CONTACT_OVERLAP_H_
#define NCPKIT_CONTACT_OVERLAP_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {

struct Overlap {
  // By the separating-axis theorem for convex sets: the largest separation
  // s(d) = min_{x in A} d.x - max_{y in B} d.y over unit directions d. depth = -s: > 0 when the
  // shapes overlap (the distance A must move along `direction` to clear B), <= 0 when apart.
  double depth = 0.0;
  Eigen::Vector3d direction = Eigen::Vector3d::UnitZ();  // unit, from B towards A
};

// Separation of A and B: exact for a half-space (its normal), for box-box (the 15 axes) and
// sphere pairs (the line of centres); otherwise the best of GJK/EPA's normal (contact/gjk.h),
// the line of centres and the boxes' and cylinders' face normals, so `depth` is never below
// the true depth and exceeds it by at most GJK/EPA's tolerance (about 1e-10 of the larger
// bounding radius). A half-space must be B.
Overlap MeasureOverlap(const Shape& a, const ShapePose& pose_a, const Shape& b,
                       const ShapePose& pose_b);

// A body as the initial-overlap check sees it.
struct PlacedShape {
  std::string name;
  Shape shape;
  ShapePose pose;
  double inverse_mass = 0.0;  // 0: does not move (fixed, actuated, a half-space)
};

struct OverlappingPair {
  int a = -1, b = -1;  // indices into the list; b is the half-space if there is one
  Overlap overlap;
};

// Depth above which bodies count as overlapping at the start (m).
constexpr double kInitialOverlapTolerance = 1e-6;

// Pairs of `bodies` (at least one of each pair movable) overlapping by more than `tolerance`.
std::vector<OverlappingPair> FindOverlaps(const std::vector<PlacedShape>& bodies,
                                          double tolerance = kInitialOverlapTolerance);

// "bodies 'a' and 'b' overlap by 0.5 m at the start" for the first pair, with a count of the
// others.
std::string DescribeOverlaps(const std::vector<PlacedShape>& bodies,
                             const std::vector<OverlappingPair>& pairs);

// Moves the movable bodies apart, without any velocity: each overlapping pair is pushed apart
// along its separating direction by its depth (split by inverse mass), repeated while some
// pair still overlaps, at most 100 passes. Throws std::invalid_argument (DescribeOverlaps) if
// overlaps remain.
void SeparateOverlaps(std::vector<PlacedShape>* bodies,
                      double tolerance = kInitialOverlapTolerance);

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_OVERLAP_H_
