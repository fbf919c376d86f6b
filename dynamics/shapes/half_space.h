// A half-space ("plane" in scene files): the solid z <= 0 of its body frame, outward normal +z.
// Only fixed bodies are planes.
#ifndef NCPKIT_DYNAMICS_SHAPES_HALF_SPACE_H_
#define NCPKIT_DYNAMICS_SHAPES_HALF_SPACE_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;

// The half-space's row of the shape registry (dynamics/shape_registry.h).
ShapeType HalfSpaceShapeType();

// One inequality for the implicit contact formulation (Xie & Chakraborty 2016, sec. IV): z <= 0.
constexpr int kHalfSpaceInequalities = 1;

template <class T>
T HalfSpaceInequality(int /*i*/, const Eigen::Vector3d& /*size*/, const T* xi) {
  return xi[2];
}

template <class T>
void HalfSpaceGradient(int /*i*/, const Eigen::Vector3d& /*size*/, const T* /*xi*/, T* g) {
  g[0] = g[1] = T(0);
  g[2] = T(1);
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_HALF_SPACE_H_
