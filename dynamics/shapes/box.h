// A box: full side lengths size = [x, y, z] along the body axes, centred on the body origin.
#ifndef NCPKIT_DYNAMICS_SHAPES_BOX_H_
#define NCPKIT_DYNAMICS_SHAPES_BOX_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;

// The box's row of the shape registry (dynamics/shape_registry.h).
ShapeType BoxShapeType();

// As intersected inequalities for the implicit contact formulation (Xie & Chakraborty 2016,
// sec. IV): six, the faces +x, -x, +y, -y, +z, -z, each +-xi_k - half_k <= 0.
constexpr int kBoxInequalities = 6;

template <class T>
T BoxInequality(int i, const Eigen::Vector3d& size, const T* xi) {
  const int axis = i / 2;
  const T sign = (i % 2 == 0) ? T(1) : T(-1);
  return sign * xi[axis] - T(0.5 * size[axis]);
}

template <class T>
void BoxGradient(int i, const Eigen::Vector3d& /*size*/, const T* /*xi*/, T* g) {
  g[0] = g[1] = g[2] = T(0);
  g[i / 2] = (i % 2 == 0) ? T(1) : T(-1);
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_BOX_H_
