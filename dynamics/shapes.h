// Convex shapes as intersections of C^2 convex inequalities f_i(xi) <= 0 in the body frame
// (Xie & Chakraborty 2016, sec. IV; docs/references.md). Each inequality is templated on the scalar
// so that the implicit contact residuals can be differentiated with Jets.
#ifndef NCPKIT_DYNAMICS_SHAPES_H_
#define NCPKIT_DYNAMICS_SHAPES_H_

#include <Eigen/Dense>
#include <string>

namespace ncpkit {

enum class ShapeKind { HalfSpace, Box, Sphere, Ellipsoid, Cylinder };

// A convex shape in its body frame (origin at the centre of mass; a half-space is z <= 0).
// Sizes in metres: box full side lengths, sphere radius (size[0]), ellipsoid semi-axes,
// cylinder radius (size[0]) and full length (size[1]) along the body x axis (Xie & Chakraborty 2016
// VI-B).
struct Shape {
  ShapeKind kind = ShapeKind::Sphere;
  Eigen::Vector3d size = Eigen::Vector3d::Ones();

  // Number of inequalities: half-space 1, box 6, sphere 1, ellipsoid 1, cylinder 3.
  int NumInequalities() const;
  // All sizes positive and finite (those the kind uses).
  bool IsValid(std::string* why) const;

  // f_i(xi), i < NumInequalities(); xi in the body frame. Inside: every f_i <= 0.
  template <class T>
  T Inequality(int i, const T* xi) const {
    switch (kind) {
      case ShapeKind::HalfSpace:
        return xi[2];
      case ShapeKind::Box: {
        // Faces +x, -x, +y, -y, +z, -z: +-xi_k - half_k.
        const int axis = i / 2;
        const T sign = (i % 2 == 0) ? T(1) : T(-1);
        return sign * xi[axis] - T(0.5 * size[axis]);
      }
      case ShapeKind::Sphere:
        return (xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]) / T(size[0]) - T(size[0]);
      case ShapeKind::Ellipsoid: {
        // Scaled so that the gradient has length about 1 near the surface of a sphere-like one.
        const T u = xi[0] / T(size[0]), v = xi[1] / T(size[1]), w = xi[2] / T(size[2]);
        const double mean = (size[0] + size[1] + size[2]) / 3.0;
        return T(0.5 * mean) * (u * u + v * v + w * w - T(1));
      }
      case ShapeKind::Cylinder: {
        // Side: (y^2 + z^2) / r - r <= 0; caps: +-x - l/2 <= 0.
        if (i == 0) return (xi[1] * xi[1] + xi[2] * xi[2]) / T(size[0]) - T(size[0]);
        const T sign = (i == 1) ? T(1) : T(-1);
        return sign * xi[0] - T(0.5 * size[1]);
      }
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
        g[2] = T(1);
        return;
      case ShapeKind::Box:
        g[i / 2] = (i % 2 == 0) ? T(1) : T(-1);
        return;
      case ShapeKind::Sphere:
        for (int k = 0; k < 3; ++k) g[k] = T(2.0 / size[0]) * xi[k];
        return;
      case ShapeKind::Ellipsoid: {
        const double mean = (size[0] + size[1] + size[2]) / 3.0;
        for (int k = 0; k < 3; ++k) g[k] = T(mean / (size[k] * size[k])) * xi[k];
        return;
      }
      case ShapeKind::Cylinder:
        if (i == 0) {
          g[1] = T(2.0 / size[0]) * xi[1];
          g[2] = T(2.0 / size[0]) * xi[2];
        } else {
          g[0] = (i == 1) ? T(1) : T(-1);
        }
        return;
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
  // kind: a box's |R| half, an ellipsoid's and a cylinder's support functions on the axes).
  Eigen::Vector3d BoundingHalfExtents(const Eigen::Matrix3d& rotation) const;
  std::string Name() const;
};

// Shape kind from its name in scene files ("box", "sphere", ...); false if unknown.
bool ParseShapeKind(const std::string& name, ShapeKind* kind);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_H_
