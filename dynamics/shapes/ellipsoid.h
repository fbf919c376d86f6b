// An ellipsoid: semi-axes size = [a, b, c] along the body axes, centred on the body origin.
#ifndef NCPKIT_DYNAMICS_SHAPES_ELLIPSOID_H_
#define NCPKIT_DYNAMICS_SHAPES_ELLIPSOID_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;
struct ShapeMesh;

// The ellipsoid's row of the shape registry (dynamics/shape_registry.h).
ShapeType EllipsoidShapeType();
// Its viewer mesh (24 x 12 facets), also the sphere's.
ShapeMesh EllipsoidMesh(const Eigen::Vector3d& semi_axes);

// One inequality for the implicit contact formulation (Xie & Chakraborty 2016, sec. IV):
// (m / 2) ((x/a)^2 + (y/b)^2 + (z/c)^2 - 1) <= 0 with m the mean semi-axis, scaled so that the
// gradient has length about 1 near the surface of a sphere-like one.
constexpr int kEllipsoidInequalities = 1;

template <class T>
T EllipsoidInequality(int /*i*/, const Eigen::Vector3d& size, const T* xi) {
  const T u = xi[0] / T(size[0]), v = xi[1] / T(size[1]), w = xi[2] / T(size[2]);
  const double mean = (size[0] + size[1] + size[2]) / 3.0;
  return T(0.5 * mean) * (u * u + v * v + w * w - T(1));
}

template <class T>
void EllipsoidGradient(int /*i*/, const Eigen::Vector3d& size, const T* xi, T* g) {
  const double mean = (size[0] + size[1] + size[2]) / 3.0;
  for (int k = 0; k < 3; ++k) g[k] = T(mean / (size[k] * size[k])) * xi[k];
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_ELLIPSOID_H_
