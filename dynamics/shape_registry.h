// What ncpkit knows of each kind of shape, one row per kind: its scene-file name and fields, its
// support function, bounds, solid mass properties, candidate contact points and the viewer's
// mesh. The built-in kinds (half-space, box, sphere, ellipsoid, cylinder, capsule, convex
// polyhedron) each have a file pair in dynamics/shapes/ holding their row; RegisterShape adds a
// kind from outside the library (docs/architecture.md, "Adding a shape"), which then loads from
// scene files, is placed by the broad phase, gets explicit contacts against every other kind
// through its support function (GJK/EPA, contact/gjk.h) and is drawn by the viewer. The implicit
// stepper's contact formulation needs each shape as smooth inequalities (shapes.h), which only the
// built-in kinds have: it refuses the others by name.
#ifndef NCPKIT_DYNAMICS_SHAPE_REGISTRY_H_
#define NCPKIT_DYNAMICS_SHAPE_REGISTRY_H_

#include <Eigen/Dense>
#include <array>
#include <string>
#include <vector>

#include "dynamics/rigid_body.h"
#include "dynamics/shapes.h"

namespace ncpkit {

// A triangle mesh in the body frame, for the viewer. Vertices shared by triangles are shaded
// smooth; a shape with sharp edges lists a face's vertices apart from its neighbours'.
struct ShapeMesh {
  std::vector<Eigen::Vector3d> vertices;
  std::vector<std::array<int, 3>> triangles;
};

// At most this many candidate points (ShapeType::candidates).
constexpr int kMaxSupportCandidates = 40;

struct ShapeType {
  std::string name;  // in scene files ("shape": "box") and messages; lower case, '-' allowed
  // Scene files' "size": how many numbers (0: none) and what they are, for messages.
  int size_count = 0;
  std::string size_meaning;
  // Every function takes the shape (its size: the first size_count entries are the scene file's;
  // a kind with more data, a polyhedron's vertices, reads them from the shape too).
  // A point of the shape maximizing d . x in the body frame; where several do (a face or an edge
  // facing d, within `flat` of |d|) the centre of that feature. Unbounded kinds throw.
  Eigen::Vector3d (*support)(const Shape& shape, const Eigen::Vector3d& d, double flat) = nullptr;
  double (*bounding_radius)(const Shape& shape) = nullptr;  // about the body origin
  // Half sides, along the world axes, of the smallest axis-aligned box about the origin holding
  // the shape turned by R.
  Eigen::Vector3d (*bounding_half_extents)(const Shape& shape, const Eigen::Matrix3d& R) = nullptr;
  // A solid of the shape with the given mass (> 0), centre of mass at the body origin.
  MassProperties (*solid_mass)(const Shape& shape, double mass) = nullptr;
  // Body-frame points that may lie on the shape's support plane along the unit d, where contact
  // points are made: a box's corners, points of a cylinder's rims. Against a plane each one near
  // enough is a contact; against another shape, where the pair touches at one point, each of the
  // others within the threshold's band is one too, at its own distance. Writes at most
  // kMaxSupportCandidates and returns how many. nullptr: the support point alone.
  int (*candidates)(const Shape& shape, const Eigen::Vector3d& d, double flat,
                    Eigen::Vector3d* points) = nullptr;
  // True for kinds with flat faces (box, cylinder): the candidates within `flat` of the
  // support plane then form a polygon, which contact clips against the other shape's points.
  bool has_faces = false;
  // Body-frame directions normal to a face of the shape (and their negatives): axes a contact
  // normal is snapped to when one does as well as the computed one.
  std::vector<Eigen::Vector3d> face_normals;
  // For kinds whose faces differ from shape to shape (a polyhedron's): the body-frame outward
  // normal of the face most nearly facing the unit d, snapped to like face_normals. nullptr: none.
  Eigen::Vector3d (*facing_normal)(const Shape& shape, const Eigen::Vector3d& d) = nullptr;
  ShapeMesh (*mesh)(const Shape& shape) = nullptr;

  // A name, the support function, the bounds and the mass properties are required.
  bool IsValid(std::string* why) const;
};

// Adds a kind; returns its ShapeKind (after the built-in ones). Throws InputError for a taken or
// malformed name or an incomplete row.
ShapeKind RegisterShape(const ShapeType& type);
// Removes a kind added by RegisterShape (false if there is none of that name). Shapes of the
// kind must no longer be used.
bool UnregisterShape(const std::string& name);
// The row of a kind, nullptr for none.
const ShapeType* FindShapeType(ShapeKind kind);
// The row of a scene-file name, nullptr for none.
const ShapeType* FindShapeType(const std::string& name);
// Every kind's name, built-in ones first ("plane, box, sphere, ellipsoid, cylinder, capsule,
// convex").
std::vector<std::string> ShapeNames();

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPE_REGISTRY_H_
