// The signed distance of two convex shapes from their support functions alone: GJK (Gilbert,
// Johnson & Keerthi 1988) while they are apart, EPA (van den Bergen 2001) once they overlap
// (docs/references.md). The pairs without a closed form in distance.cc take their contact
// normal from it.
//
// Why not libccd (Debian's libccd-dev, 2.1): it answers whether two shapes intersect and, if
// they do, how deep (GJK + EPA, or MPR), but it has no distance for shapes apart, which the
// steppers need for every pair within their contact margin or threshold; and its EPA stops at
// a fixed absolute tolerance (1e-4 by default) where the contact normal here must hold to the
// shapes' scale.
#ifndef NCPKIT_CONTACT_GJK_H_
#define NCPKIT_CONTACT_GJK_H_

#include <Eigen/Dense>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {

struct ConvexSeparation {
  // Unit, from A towards B: the direction along which B must move to part from A (overlap),
  // or the direction of the shortest segment from A to B (apart).
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  // > 0: the distance between the shapes; < 0: minus the depth of the overlap (how far B must
  // move along the normal to touch A); the separating-axis value max over unit n of
  // (min over B of n . y - max over A of n . x).
  double distance = 0.0;
  // Points of A and of B with point_b - point_a = distance * normal (within the tolerance).
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero(), point_b = Eigen::Vector3d::Zero();
  // Support-function evaluations of the Minkowski difference, GJK's and EPA's together.
  int iterations = 0;
  // Apart: GJK's upper bound |v| and the separation s at the normal agree to 1e3 times the
  // tolerance (also when GJK's iteration cap ended it). Overlapping: EPA reached its tolerance
  // and the local search ended within its step cap; refined: the local search did. False otherwise
  // (the best normal found is returned). Always true when `beyond` stopped it.
  bool converged = false;
  // The shapes are at least `stop_beyond` apart (GetSeparation's argument): the search stopped
  // early and `distance` is only a lower bound.
  bool beyond = false;
};

// The separation of A and B (neither a half-space). `stop_beyond`: stop as soon as the shapes
// are known to be at least this far apart (infinity: never). Tolerances are relative to the
// shapes' size (the larger bounding radius): GJK stops at 1e-14 of it. Overlapping shapes, and
// shapes all but touching along flat features where GJK's v / |v| is mostly rounding, take the
// normal from a local search on the sphere of directions that ends at 1e-10 rad: where s has a
// kink there (a line or face on a face) the distance holds to about 1e-10 of the size.
ConvexSeparation GetSeparation(const Shape& a, const ShapePose& pose_a, const Shape& b,
                               const ShapePose& pose_b, double stop_beyond);

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_GJK_H_
