// A cylinder: radius size[0] and full length size[1] along the body x axis, centred on the body
// origin (Xie & Chakraborty 2016, sec. VI-B).
#ifndef NCPKIT_DYNAMICS_SHAPES_CYLINDER_H_
#define NCPKIT_DYNAMICS_SHAPES_CYLINDER_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;

// The cylinder's row of the shape registry (dynamics/shape_registry.h).
ShapeType CylinderShapeType();

// Three inequalities for the implicit contact formulation (Xie & Chakraborty 2016, sec. IV):
// the side (y^2 + z^2) / r - r <= 0, then the caps +x - l/2 <= 0 and -x - l/2 <= 0.
constexpr int kCylinderInequalities = 3;

template <class T>
T CylinderInequality(int i, const Eigen::Vector3d& size, const T* xi) {
  if (i == 0) return (xi[1] * xi[1] + xi[2] * xi[2]) / T(size[0]) - T(size[0]);
  const T sign = (i == 1) ? T(1) : T(-1);
  return sign * xi[0] - T(0.5 * size[1]);
}

template <class T>
void CylinderGradient(int i, const Eigen::Vector3d& size, const T* xi, T* g) {
  g[0] = g[1] = g[2] = T(0);
  if (i == 0) {
    g[1] = T(2.0 / size[0]) * xi[1];
    g[2] = T(2.0 / size[0]) * xi[2];
  } else {
    g[0] = (i == 1) ? T(1) : T(-1);
  }
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_CYLINDER_H_
