// Convex shapes as intersections of C^2 convex inequalities f_i(xi) <= 0 in the body frame
// (Xie & Chakraborty 2016, sec. IV; docs/references.md). Each inequality is templated on the scalar
// so that the implicit contact residuals can be differentiated with Jets.
#ifndef NCPKIT_DYNAMICS_SHAPES_H_
#define NCPKIT_DYNAMICS_SHAPES_H_

#include <Eigen/Dense>
#include <memory>
#include <string>

#include "dynamics/shapes/box.h"
#include "dynamics/shapes/capsule.h"
#include "dynamics/shapes/cylinder.h"
#include "dynamics/shapes/ellipsoid.h"
#include "dynamics/shapes/half_space.h"
#include "dynamics/shapes/polyhedron.h"
#include "dynamics/shapes/sphere.h"

namespace ncpkit {

// The built-in kinds; RegisterShape (shape_registry.h) numbers further kinds after them.
enum class ShapeKind : int { HalfSpace, Box, Sphere, Ellipsoid, Cylinder, Capsule, Polyhedron };

// Largest size (m) a shape may have, as large as kMaxCoordinate (dynamics/body.h): a box 1e88 m
// long overflows the contact search's products of sizes.
constexpr double kMaxShapeSize = 1e6;

// A convex shape in its body frame (origin at the centre of mass; a half-space is z <= 0). Its
// kind's facts (size fields, support function, bounds, mass properties, viewer mesh) are a row
// of the shape registry, each built-in kind's in its file pair in dynamics/shapes/. Sizes in
// metres: box full side lengths, sphere radius (size[0]), ellipsoid semi-axes, cylinder radius
// (size[0]) and full length (size[1]) along the body x axis (Xie & Chakraborty 2016 VI-B),
// capsule radius (size[0]) and its segment's length (size[1]) along the body x axis; a convex
// polyhedron ("convex") has no size but its hull, shared by the shapes made from it.
struct Shape {
  ShapeKind kind = ShapeKind::Sphere;
  Eigen::Vector3d size = Eigen::Vector3d::Ones();
  std::shared_ptr<const ConvexPolyhedron> polyhedron;  // ShapeKind::Polyhedron only

  // Number of inequalities: half-space 1, box 6, sphere 1, ellipsoid 1, cylinder 3, capsule 1,
  // polyhedron 6 (up to 6 faces) or one a face (polyhedron.h); 0 for a registered kind (the
  // implicit stepper does not take it).
  int NumInequalities() const;
  // Every inequality is a plane (half-space, box, polyhedron): its gradient is a constant.
  bool PlaneInequalities() const {
    return kind == ShapeKind::HalfSpace || kind == ShapeKind::Box || kind == ShapeKind::Polyhedron;
  }
  // A kind the registry knows, and all sizes positive and at most kMaxShapeSize (those the kind
  // uses).
  bool IsValid(std::string* why) const;

  // f_i(xi), i < NumInequalities(); xi in the body frame. Inside: every f_i <= 0.
  template <class T>
  T Inequality(int i, const T* xi) const {
    switch (kind) {
      case ShapeKind::HalfSpace:
        return HalfSpaceInequality(i, size, xi);
      case ShapeKind::Box:
        return BoxInequality(i, size, xi);
      case ShapeKind::Sphere:
        return SphereInequality(i, size, xi);
      case ShapeKind::Ellipsoid:
        return EllipsoidInequality(i, size, xi);
      case ShapeKind::Cylinder:
        return CylinderInequality(i, size, xi);
      case ShapeKind::Capsule:
        return CapsuleInequality(i, size, xi);
      case ShapeKind::Polyhedron:
        return PolyhedronInequality(i, *polyhedron, xi);
    }
    return T(0);
  }

  // The body-frame gradient of f_i at xi (exact, so that the contact residuals need only one
  // level of Jets).
  template <class T>
  void Gradient(int i, const T* xi, T* g) const {
    g[0] = g[1] = g[2] = T(0);
    switch (kind) {
      case ShapeKind::HalfSpace:
        return HalfSpaceGradient(i, size, xi, g);
      case ShapeKind::Box:
        return BoxGradient(i, size, xi, g);
      case ShapeKind::Sphere:
        return SphereGradient(i, size, xi, g);
      case ShapeKind::Ellipsoid:
        return EllipsoidGradient(i, size, xi, g);
      case ShapeKind::Cylinder:
        return CylinderGradient(i, size, xi, g);
      case ShapeKind::Capsule:
        return CapsuleGradient(i, size, xi, g);
      case ShapeKind::Polyhedron:
        return PolyhedronGradient(i, *polyhedron, xi, g);
    }
  }

  // A point of the shape maximizing direction . x (body frame). Where the maximizer is not
  // unique (a face or an edge facing the direction, within `flat` of the direction's length)
  // the centre of that face or edge is returned. Half-space: the point of the plane z = 0
  // below the origin if the direction is +z; other directions are unbounded (throws).
  Eigen::Vector3d SupportPoint(const Eigen::Vector3d& direction, double flat = 1e-9) const;
  // Radius of a sphere about the origin containing the shape (infinite for a half-space).
  double BoundingRadius() const;
  // Half side lengths, along the world axes, of the smallest axis-aligned box about the origin
  // containing the shape turned by `rotation` (infinite for a half-space; exact for every
  // built-in kind: a box's |R| half, an ellipsoid's and a cylinder's support functions on the
  // axes).
  Eigen::Vector3d BoundingHalfExtents(const Eigen::Matrix3d& rotation) const;
  std::string Name() const;
};

// Shape kind from its name in scene files ("box", "sphere", ..., or a registered kind's); false
// if unknown.
bool ParseShapeKind(const std::string& name, ShapeKind* kind);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_H_
