// A capsule: the points within radius size[0] of a segment of length size[1] along the body x
// axis, centred on the body origin (a cylinder of that length capped by two hemispheres). Robot
// links and FCLib's Capsules problems are made of them; MuJoCo's MJCF gives a capsule's radius
// and half the segment's length.
#ifndef NCPKIT_DYNAMICS_SHAPES_CAPSULE_H_
#define NCPKIT_DYNAMICS_SHAPES_CAPSULE_H_

#include <Eigen/Dense>

namespace ncpkit {

struct ShapeType;

// The capsule's row of the shape registry (dynamics/shape_registry.h).
ShapeType CapsuleShapeType();

// One inequality for the implicit contact formulation (Xie & Chakraborty 2016, sec. IV):
// |xi - p(xi)|^2 / r - r <= 0, p(xi) the point of the segment nearest xi, scaled like the
// sphere's (gradient 2 (xi - p) / r, of length 2 on the surface). The function is convex and
// continuously differentiable; its second derivative jumps where the caps meet the side
// (|x| = l/2), which the semismooth Newton methods of the implicit stepper accept.
constexpr int kCapsuleInequalities = 1;

// xi - p(xi) along the axis: the distance beyond the nearer end, 0 between them.
template <class T>
T CapsuleBeyondEnd(const Eigen::Vector3d& size, const T& x) {
  const double half = 0.5 * size[1];
  if (x > T(half)) return x - T(half);
  if (x < T(-half)) return x + T(half);
  return T(0);
}

template <class T>
T CapsuleInequality(int /*i*/, const Eigen::Vector3d& size, const T* xi) {
  const T beyond = CapsuleBeyondEnd(size, xi[0]);
  return (beyond * beyond + xi[1] * xi[1] + xi[2] * xi[2]) / T(size[0]) - T(size[0]);
}

template <class T>
void CapsuleGradient(int /*i*/, const Eigen::Vector3d& size, const T* xi, T* g) {
  g[0] = T(2.0 / size[0]) * CapsuleBeyondEnd(size, xi[0]);
  g[1] = T(2.0 / size[0]) * xi[1];
  g[2] = T(2.0 / size[0]) * xi[2];
}

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_SHAPES_CAPSULE_H_
