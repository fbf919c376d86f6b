// Geometrically explicit contact: signed distances, normals and contact points between
// primitive shapes at a given configuration (Trinkle, Berard & Pang 2005 eq. 20, Pang & Tedrake's
// (2021) phi and A(q, eps)). The quasistatic steppers linearize these about the configuration at
// the start of the step.
#ifndef NCPKIT_CONTACT_DISTANCE_H_
#define NCPKIT_CONTACT_DISTANCE_H_

#include <Eigen/Dense>
#include <vector>

#include "contact/contact_feature.h"
#include "dynamics/shapes.h"

namespace ncpkit {

// A shape placed in the world: its body frame's origin and rotation.
struct ShapePose {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
};

// One contact point between shapes A and B.
struct ContactPoint {
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();  // on A's surface (world)
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();  // on B's surface (world)
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // unit, from A towards B
  double distance = 0.0;  // signed: > 0 apart, < 0 overlapping; point_b - point_a = distance n
  // The surface features that made the point, in the bodies' frames (contact_feature.h;
  // FeatureId::Expand with the two shapes gives them in full).
  FeatureId feature;
};

// Where contact points come from. The explicit source below measures distances at the current
// configuration; other formulations (the implicit one of Xie & Chakraborty 2016) can be put behind
// the same interface.
class ContactGeometry {
 public:
  virtual ~ContactGeometry() = default;
  // True if FindContacts() handles this pair of kinds (in either order).
  virtual bool Supports(ShapeKind a, ShapeKind b) const = 0;
  // Appends to *contacts the contact points of A and B whose signed distance is below
  // `threshold` (Pang & Tedrake's (2021) A(q, eps)).
  virtual void FindContacts(const Shape& a, const ShapePose& pose_a, const Shape& b,
                            const ShapePose& pose_b, double threshold,
                            std::vector<ContactPoint>* contacts) const = 0;
};

// The points of a face-on-face patch of two boxes: four that span it, or every vertex of it (two
// rectangles clip to at most eight), which holds the whole patch out to first order where a box
// rocking about the four's hull could sink a vertex left out into the other box within a step.
enum class BoxPatch { kFourPoints, kEveryVertex };

// Distances for every pair of shapes but two half-spaces, no collision library. Closed forms:
// half-space-sphere, half-space-box, sphere-sphere, sphere-box and box-box; against a
// half-space, the ellipsoid (its exact support point) and the cylinder (support points: the
// exact lowest point of each cap's rim and the rim at 45-degree steps from it). A sphere of radius
// 0 is a point. Box-box uses the separating-axis test over the 15 axes; a face axis clips the
// incident face to the reference face (Sutherland-Hodgman) and keeps the points of the patch that
// `box_patch` names, and an edge axis gives the closest points of the two edges. Distances of
// separated boxes are the separating-axis value, exact when faces face each
// other. The other pairs (cylinders and ellipsoids against boxes, spheres, cylinders and
// ellipsoids) by support points: the signed distance and its direction by GJK/EPA (gjk.h),
// then the facing features along that direction (a box face, a flat cap)
// clipped against each other, or a curved body's support point. FindContacts dispatches through
// a table indexed by the two shape kinds (CollisionTable in distance.cc: one function per
// ordered pair, a swapped pair's points flipped back), so a new pair function is one cell.
class ExplicitContactGeometry : public ContactGeometry {
 public:
  explicit ExplicitContactGeometry(BoxPatch box_patch = BoxPatch::kFourPoints)
      : box_patch_(box_patch) {}
  bool Supports(ShapeKind a, ShapeKind b) const override;
  void FindContacts(const Shape& a, const ShapePose& pose_a, const Shape& b,
                    const ShapePose& pose_b, double threshold,
                    std::vector<ContactPoint>* contacts) const override;

 private:
  BoxPatch box_patch_;
};

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_DISTANCE_H_
