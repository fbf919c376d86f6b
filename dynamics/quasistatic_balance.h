// The quasistatic force balance of bodies driven by actuators (Trinkle, Berard & Pang 2005 eq. 19,
// Pang & Tedrake 2021 eqs. 3-6 and 9): the step's generalized displacement delta (the free degrees
// of freedom of every unactuated body, then every actuator that is not prescribed), how each body
// moves with it, and
//   K~ delta - J^T lambda - r = 0,   r = f_gravity + K (q_cmd(t + h) - q_a),
// with K~ = diag(K on actuated coordinates, (eps / h^2) M on unactuated ones). eps is the
// regularization 1/2 eps v_u^T M_u v_u (docs/steppers.md): it makes an unactuated body out of
// contact well posed (it then moves h^2 g / eps per step under gravity) and otherwise adds the
// force eps M v / h; eps = 0 gives the papers' models exactly.
#ifndef NCPKIT_DYNAMICS_QUASISTATIC_BALANCE_H_
#define NCPKIT_DYNAMICS_QUASISTATIC_BALANCE_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "dynamics/actuators.h"
#include "dynamics/body.h"

namespace ncpkit {

class QuasistaticBalance {
 public:
  // One displacement twist [dp; dtheta] per unit of a coordinate.
  using Motion = std::vector<std::pair<int, Vector6d>>;

  QuasistaticBalance() = default;
  // The coordinate layout of the bodies and actuators (`actuated`: per body, moved by an
  // actuator).
  QuasistaticBalance(const std::vector<Body>& bodies, const std::vector<char>& actuated,
                     const std::vector<Actuator>& actuators);

  int size() const { return size_; }
  // Per body its columns in delta, [x, y, z, rx, ry, rz] (-1: not a coordinate); per actuator
  // its column (-1: prescribed).
  const std::array<int, 6>& body_columns(int body) const { return body_columns_[body]; }
  int actuator_column(int actuator) const { return actuator_columns_[actuator]; }
  bool unactuated(int body) const { return unactuated_[body]; }

  // The step from the current poses (bodies, actuator positions q) to time t1 = t + h:
  // stiffness, force and each body's motion. Allocates nothing once sized.
  void Assemble(const std::vector<Body>& bodies, const std::vector<Actuator>& actuators,
                const std::vector<double>& q, double t1, double h, const Eigen::Vector3d& gravity,
                double regularization);

  // The body's displacement twist in the step: sum over motion(b) of twist * delta[column],
  // plus drift(b) (the prescribed actuators' motion).
  const Motion& motion(int body) const { return motion_[body]; }
  const Vector6d& drift(int body) const { return drift_[body]; }
  bool HasUnknowns(int body) const { return !motion_[body].empty(); }
  const std::vector<Eigen::Triplet<double>>& stiffness() const { return stiffness_; }
  const Eigen::VectorXd& force() const { return force_; }

  // Empty, or which unactuated body or actuator the displacement delta (ending at t1) would
  // take beyond |x| = kMaxCoordinate.
  std::string LeavesRange(const std::vector<Body>& bodies, const std::vector<Actuator>& actuators,
                          const std::vector<double>& q, const Eigen::VectorXd& delta,
                          double t1) const;
  // Moves the unactuated bodies by delta and sets the actuator positions at t1 (the poses of
  // actuated bodies follow from them: ActuatedPose()).
  void Advance(const Eigen::VectorXd& delta, const std::vector<Actuator>& actuators, double t1,
               std::vector<Body>* bodies, std::vector<double>* q) const;

 private:
  std::vector<std::array<int, 6>> body_columns_;
  std::vector<int> actuator_columns_;
  std::vector<char> unactuated_;
  int size_ = 0;
  std::vector<Motion> motion_;
  std::vector<Vector6d> drift_;
  std::vector<Eigen::Triplet<double>> stiffness_;
  Eigen::VectorXd force_;
};

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_QUASISTATIC_BALANCE_H_
