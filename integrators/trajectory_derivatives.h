// Gradients of a run's table columns (integrators/trajectory_table.h) with respect to the run's
// start state, the scene's parameters and the applied impulses, by one reverse pass through the
// steps' derivatives kept during the run (integrators/trajectory_gradient.h, ReverseThrough):
// the `simulate --gradient` option and the Python package's Trajectory.gradient
// (docs/derivatives.md "Gradients of a run"). Memory: every step's derivative.
#ifndef NCPKIT_INTEGRATORS_TRAJECTORY_DERIVATIVES_H_
#define NCPKIT_INTEGRATORS_TRAJECTORY_DERIVATIVES_H_

#include <Eigen/Dense>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "integrators/stepper.h"

namespace ncpkit {

class TrajectoryDerivatives {
 public:
  // After each step of the run: keeps the step's derivative (Stepper::LastStepDerivative(),
  // whose InputError says why a step has none) and the moving bodies' orientations.
  void Add(const Stepper& stepper);
  int steps() const { return static_cast<int>(steps_.size()); }

  // The names Gradient() takes in `wrt`: the step derivatives' parameters ("h", "mu",
  // "restitution", "mu(a,b)", "restitution(a,b)", "<body>.mass"), then per moving body the
  // start state's "<body>.position", "<body>.rotation" (a world-frame turn, rad), "<body>.velocity"
  // and "<body>.angular_velocity" (steppers with velocities), and "<body>.impulse" (the impulse
  // applied at each step); for the quasistatic stepper per actuator its start position
  // "<actuator>.q" and "<actuator>.q_cmd" (its command at each step).
  std::vector<std::string> WrtNames() const;
  // The columns a loss may read: per moving body x, y, z, qw, qx, qy, qz, and vx, vy, vz, wx,
  // wy, wz with velocities, as "<body>.x"; per actuator "<actuator>.q".
  std::vector<std::string> StateColumns() const;

  struct Result {
    // In the order of `wrt`: a parameter's gradient as a 1 x 1 matrix, a start-state vector's as
    // 3 x 1 (an actuator's position 1 x 1), "<body>.impulse" as steps x 6 (row k: the impulse of
    // step k, [N s, N m s]), "<actuator>.q_cmd" as steps x 1.
    std::vector<std::pair<std::string, Eigen::MatrixXd>> values;
    std::vector<int> undetermined_steps;           // TrajectoryGradientResult's
    std::vector<std::string> degenerate_contacts;  // "step k: <contact>"
  };
  // The gradient of L = sum over columns c and rows k of weights[c](k) * (column c at row k),
  // row k being the state after step k + 1: weights is dL/d(columns) of any loss of the state
  // columns. Throws InputError naming an unknown column or `wrt` name, or a weight vector whose
  // length is not steps().
  Result Gradient(const std::map<std::string, Eigen::VectorXd>& weights,
                  const std::vector<std::string>& wrt) const;

  // Forward: each state column's derivative at every row with respect to each name of `wrt`
  // (parameters and start-state vectors; not impulses or commands), one chain of Jacobian-vector
  // products per scalar: values[i] is steps() x (1 or 3) for wrt[i], in the order of `columns`.
  // Throws InputError naming an unknown column or name.
  std::vector<std::vector<Eigen::MatrixXd>> ColumnJacobians(
      const std::vector<std::string>& columns, const std::vector<std::string>& wrt) const;

  // The derivative of step k (0-based).
  const StepDerivative& step(int k) const { return *steps_[k]; }

 private:
  // The row of the state column `name` (checked) at step k: d(column)/ds.
  Eigen::RowVectorXd ColumnRow(const std::string& name, int k) const;
  // The index of an actuator's "<actuator>.q" in the state, or -1.
  int ExtraEntry(const std::string& name) const;
  int state_size() const {
    return entries_per_body_ * static_cast<int>(bodies_.size()) + static_cast<int>(extras_.size());
  }
  void CheckNames(const std::vector<std::string>& columns,
                  const std::vector<std::string>& wrt) const;

  // dL/ds after row k's step from the weights' row k.
  Eigen::VectorXd StateGradient(const std::map<std::string, Eigen::VectorXd>& weights, int k) const;

  std::vector<std::unique_ptr<StepDerivative>> steps_;
  std::vector<std::string> bodies_;  // the moving bodies' names, in the derivatives' order
  int entries_per_body_ = 12;
  // The state's entries after the bodies' ("<actuator>.q") and the commands' names
  // ("<actuator>.q_cmd"; empty for the impulses of steppers with velocities).
  std::vector<std::string> extras_, commands_;
  // Per step, per moving body: the orientation at the step's end (the quaternion columns'
  // derivatives with respect to the turn depend on it).
  std::vector<std::vector<Eigen::Quaterniond>> orientations_;
};

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_TRAJECTORY_DERIVATIVES_H_
