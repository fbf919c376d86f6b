// The gradient of a scalar loss of a trajectory by a reverse (adjoint) pass through its steps
// (docs/derivatives.md "Trajectories"): with s_k the state after step k (s_0 the start) and
// L = L(s_0, ..., s_N),
//   lambda_N = dL/ds_N,  lambda_{k-1} = dL/ds_{k-1} + (ds_k/ds_{k-1})^T lambda_k,
// the parameters' gradient the sum of (ds_k/dp)^T lambda_k over the steps and the commands' of
// step k (ds_k/du_k)^T lambda_k, each product one Vjp of the step's derivative
// (integrators/step_derivative.h).
//
// Memory: the steps' derivatives are kept for the reverse pass. With a checkpoint interval K,
// the forward pass keeps a snapshot of the stepper every K steps instead, and the reverse pass
// runs each stretch of K steps again from its snapshot, keeping K derivatives at a time: memory
// N / K snapshots plus K derivatives, for a second forward pass.
#ifndef NCPKIT_INTEGRATORS_TRAJECTORY_GRADIENT_H_
#define NCPKIT_INTEGRATORS_TRAJECTORY_GRADIENT_H_

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "integrators/stepper.h"

namespace ncpkit {

struct TrajectoryGradientOptions {
  int steps = 0;  // N, >= 1
  // Steps between snapshots; 0: none, every step's derivative kept. >= 0.
  int checkpoint_interval = 0;
  // The impulses applied at step k (0-based; per body, as Stepper::Step takes them), or null:
  // none.
  std::function<std::vector<Vector6d>(int step)> impulses;
};

// dL/ds_k for the stepper as it is after step k (k = 0: before the first), in the step
// derivatives' state layout; an empty vector for a loss that does not read s_k.
using LossGradient = std::function<Eigen::VectorXd(int step, const Stepper& stepper)>;

struct TrajectoryGradientResult {
  Eigen::VectorXd initial_state;  // dL/ds_0
  Eigen::VectorXd parameters;     // dL/dp, named by parameter_names
  std::vector<std::string> parameter_names;
  std::vector<Eigen::VectorXd> commands;  // dL/du_k per step
  // Steps whose end state the data do not determine (StepDerivative::determined()) and the
  // degenerate contacts of every step, as "step k: <contact>".
  std::vector<int> undetermined_steps;
  std::vector<std::string> degenerate_contacts;
  // The most step derivatives held at once, and the snapshots taken.
  int derivatives_held = 0, snapshots = 0;
};

// Runs `options.steps` steps of `stepper` from where it is and returns the gradient of the loss.
// The stepper is left after the last step. Throws InputError for options out of range, a stepper
// without snapshots when checkpoints are asked for, or a step without a derivative (its reason).
TrajectoryGradientResult ReverseGradient(Stepper* stepper, const LossGradient& loss,
                                         const TrajectoryGradientOptions& options);

// The reverse pass alone, through derivatives already taken: steps[k] the derivative of step k
// (k = 0 .. N-1), losses[k] = dL/ds_k (k = 0 .. N; empty where the loss does not read s_k).
// Throws InputError if there are not N + 1 losses.
TrajectoryGradientResult ReverseThrough(const std::vector<const StepDerivative*>& steps,
                                        const std::vector<Eigen::VectorXd>& losses);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_TRAJECTORY_GRADIENT_H_
