// A sphere: radius size[0], centred on the body origin. Radius 0 is a point (explicit contact
// only).
#ifndef NCPKIT_DYNAMICS_SHAPES_SPHERE_H_
#define NCPKIT_DYNAMICS_SHAPES_SPHERE_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;

// The sphere's row of the shape registry (dynamics/shape_registry.h).
ShapeType SphereShapeType();

// One inequality for the implicit contact formulation (Xie & Chakraborty 2016, sec. IV):
// |xi|^2 / r - r <= 0, scaled so that its gradient has length 2 on the surface.
constexpr int kSphereInequalities = 1;

template <class T>
T SphereInequality(int /*i*/, const Eigen::Vector3d& size, const T* xi) {
  return (xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]) / T(size[0]) - T(size[0]);
}

template <class T>
void SphereGradient(int /*i*/, const Eigen::Vector3d& size, const T* xi, T* g) {
  for (int k = 0; k < 3; ++k) g[k] = T(2.0 / size[0]) * xi[k];
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_SPHERE_H_
