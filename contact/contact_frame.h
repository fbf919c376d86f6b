// The contact frame of an explicit contact point and the rows that map a body's twist to the
// frame's velocity of its material point there: the Jacobian J of the explicit stepper's
// u = J nu (normal first, then the two tangents).
#ifndef NCPKIT_CONTACT_CONTACT_FRAME_H_
#define NCPKIT_CONTACT_CONTACT_FRAME_H_

#include <Eigen/Dense>
#include <cmath>

namespace ncpkit {

// The world axis ContactTangentBasis crosses the normal n with: x, or y when n is within about
// 25 degrees of x.
inline Eigen::Vector3d TangentAxis(const Eigen::Vector3d& n) {
  return std::abs(n.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
}

// Unit tangents completing the unit normal n to a right-handed frame (n, t1, t2): t1 is n
// crossed with `axis` (normalized), t2 = n x t1. On any scalar, so that a step's derivative
// follows the frame as the normal turns (with the axis the step's own normal picked).
template <class T>
void TangentsAbout(const Eigen::Vector3d& axis, const Eigen::Matrix<T, 3, 1>& n,
                   Eigen::Matrix<T, 3, 1>* t1, Eigen::Matrix<T, 3, 1>* t2) {
  using std::sqrt;
  const Eigen::Matrix<T, 3, 1> c = n.cross(axis.cast<T>());
  *t1 = c / sqrt(c.squaredNorm());
  *t2 = n.cross(*t1);
}

// The tangents of TangentsAbout(TangentAxis(n), n).
void ContactTangentBasis(const Eigen::Vector3d& n, Eigen::Vector3d* t1, Eigen::Vector3d* t2);

// The rows [d^T, ((p - c) x d)^T] for d = n, t1, t2: row k times a twist [v; omega] of the
// body whose centre is c is d_k . (v + omega x (p - c)), the velocity along d_k of its material
// point at p. A contact's relative velocity (B's point against A's) is
// rows(p_b, c_b) nu_b - rows(p_a, c_a) nu_a.
Eigen::Matrix<double, 3, 6> ContactFrameRows(const Eigen::Vector3d& n, const Eigen::Vector3d& t1,
                                             const Eigen::Vector3d& t2, const Eigen::Vector3d& p,
                                             const Eigen::Vector3d& c);

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_CONTACT_FRAME_H_
