// A convex polyhedron: the convex hull of a set of points (a vertex list in a scene file, or a
// mesh file's vertices), computed by Qhull. Its vertices are kept about the solid's centroid, so
// that a body's position is its centre of mass as for every other kind; its faces are the hull's
// facets with coplanar triangles merged, each an intersection inequality n . x <= offset for the
// implicit stepper (Xie & Chakraborty 2016, sec. IV: a polyhedron is an intersection of
// half-spaces, like the box).
#ifndef NCPKIT_DYNAMICS_SHAPES_POLYHEDRON_H_
#define NCPKIT_DYNAMICS_SHAPES_POLYHEDRON_H_

#include <Eigen/Dense>
#include <memory>
#include <vector>

namespace ncpkit {

struct ShapeType;

struct ConvexPolyhedron {
  struct Face {
    Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // outward, unit
    double offset = 0.0;                                // n . x <= offset inside
    std::vector<int> vertices;                          // counter-clockwise about the normal
  };
  std::vector<Eigen::Vector3d> vertices;  // the hull's, about the centroid
  std::vector<Face> faces;
  // Where the centroid lies in the frame the points were given in (their coordinates minus it
  // are the vertices).
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  double volume = 0.0;
  Eigen::Matrix3d unit_inertia = Eigen::Matrix3d::Identity();  // of unit mass, about the centroid
  double radius = 0.0;  // the farthest vertex from the centroid
};

// At most this many points go to the hull, and a hull may have at most kMaxHullVertices
// vertices (every support point of a contact search scans them).
constexpr int kMaxHullPoints = 2000000;
constexpr int kMaxHullVertices = 5000;

// The convex hull of the points. Throws InputError, saying why, for fewer than 4 points, a
// coordinate that is not finite, too many points or hull vertices, and points that span no
// volume (all on one plane, line or point, to 1e-9 of their extent).
std::shared_ptr<const ConvexPolyhedron> MakeConvexHull(const std::vector<Eigen::Vector3d>& points);

// The polyhedron's row of the shape registry (dynamics/shape_registry.h), named "convex".
ShapeType PolyhedronShapeType();

// The implicit stepper's contact residuals are compiled for shapes of 1, 3 or 6 inequalities: a
// polyhedron of at most kPolyhedronInequalities faces is given that many, the missing ones
// planes far outside it (along the body axes, never active, their multipliers zero); one of
// more faces has one a face, which the implicit stepper refuses.
constexpr int kPolyhedronInequalities = 6;

inline int PolyhedronInequalityCount(const ConvexPolyhedron& p) {
  const int faces = static_cast<int>(p.faces.size());
  return faces <= kPolyhedronInequalities ? kPolyhedronInequalities : faces;
}

// Inequality i: n_i . xi <= offset_i (a face, or a far plane beyond the faces).
inline void PolyhedronPlane(const ConvexPolyhedron& p, int i, Eigen::Vector3d* normal,
                            double* offset) {
  if (i < static_cast<int>(p.faces.size())) {
    *normal = p.faces[i].normal;
    *offset = p.faces[i].offset;
    return;
  }
  *normal = (i % 2 == 0 ? 1.0 : -1.0) * Eigen::Vector3d::Unit((i / 2) % 3);
  *offset = 10.0 * p.radius + 1.0;
}

template <class T>
T PolyhedronInequality(int i, const ConvexPolyhedron& p, const T* xi) {
  Eigen::Vector3d n;
  double offset;
  PolyhedronPlane(p, i, &n, &offset);
  return T(n[0]) * xi[0] + T(n[1]) * xi[1] + T(n[2]) * xi[2] - T(offset);
}

template <class T>
void PolyhedronGradient(int i, const ConvexPolyhedron& p, const T* /*xi*/, T* g) {
  Eigen::Vector3d n;
  double offset;
  PolyhedronPlane(p, i, &n, &offset);
  for (int k = 0; k < 3; ++k) g[k] = T(n[k]);
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_POLYHEDRON_H_
