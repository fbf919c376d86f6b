// The contact frame of an explicit contact point and the rows that map a body's twist to the
// frame's velocity of its material point there: the Jacobian J of the explicit stepper's
// u = J nu (normal first, then the two tangents).
#ifndef NCPKIT_CONTACT_CONTACT_FRAME_H_
#define NCPKIT_CONTACT_CONTACT_FRAME_H_

#include <Eigen/Dense>

namespace ncpkit {

// Unit tangents completing the unit normal n to a right-handed frame (n, t1, t2); t1 is n
// crossed with the world x axis, or with y when n is within about 25 degrees of x.
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
