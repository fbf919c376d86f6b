#include "contact/contact_frame.h"

namespace ncpkit {

void ContactTangentBasis(const Eigen::Vector3d& n, Eigen::Vector3d* t1, Eigen::Vector3d* t2) {
  TangentsAbout(TangentAxis(n), n, t1, t2);
}

Eigen::Matrix<double, 3, 6> ContactFrameRows(const Eigen::Vector3d& n, const Eigen::Vector3d& t1,
                                             const Eigen::Vector3d& t2, const Eigen::Vector3d& p,
                                             const Eigen::Vector3d& c) {
  Eigen::Matrix<double, 3, 6> rows;
  const Eigen::Vector3d arm = p - c;
  const Eigen::Vector3d directions[3] = {n, t1, t2};
  for (int k = 0; k < 3; ++k) {
    rows.block<1, 3>(k, 0) = directions[k].transpose();
    rows.block<1, 3>(k, 3) = arm.cross(directions[k]).transpose();
  }
  return rows;
}

}  // namespace ncpkit
