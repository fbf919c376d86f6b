#include "integrators/trajectory_gradient.h"

#include <algorithm>
#include <memory>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// The reverse pass's running state.
struct Reverse {
  TrajectoryGradientResult* result;
  Eigen::VectorXd lambda;                            // dL/ds_k, accumulated
  std::vector<std::vector<std::string>> degenerate;  // per step
  // The state's size and the names of the entries the step after s_k carries in
  // (StepDerivative::carried_in_names()), once a step has been through.
  int state = -1;
  std::vector<std::string> carried;

  // lambda += g (the loss's own gradient at a step, over the state; empty: none).
  void Add(const Eigen::VectorXd& g) {
    if (g.size() == 0) return;
    if (lambda.size() == 0) lambda = Eigen::VectorXd::Zero(g.size());
    if (state >= 0 ? g.size() != state : g.size() != lambda.size()) {
      throw InputError("trajectory gradient: the loss's gradient has " + std::to_string(g.size()) +
                       " entries for a state of " +
                       std::to_string(state >= 0 ? state : lambda.size()));
    }
    lambda.head(g.size()) += g;
  }

  // Step k's derivative, lambda = dL/ds_{k+1} -> dL/ds_k. The entries step k + 1 carried in are
  // those step k left (checked by name).
  void Back(int k, const StepDerivative& d) {
    if (lambda.size() == 0) lambda = Eigen::VectorXd::Zero(d.state_size());
    if (lambda.size() > d.state_size() && d.carried_out_names() != carried) {
      throw InputError("trajectory gradient: step " + std::to_string(k + 1) +
                       " does not start from the entries step " + std::to_string(k) +
                       " carries (was the stepper restored between them?)");
    }
    if (lambda.size() != d.state_size() && lambda.size() != d.output_size()) {
      throw InputError("trajectory gradient: a gradient of " + std::to_string(lambda.size()) +
                       " entries for step " + std::to_string(k) + "'s state of " +
                       std::to_string(d.state_size()));
    }
    const StepDerivative::Gradient g = d.Vjp(lambda);
    lambda = g.state;
    state = d.state_size();
    carried = d.carried_in_names();
    if (result->parameters.size() == 0) {
      result->parameters = Eigen::VectorXd::Zero(d.parameter_size());
      result->parameter_names = d.parameter_names();
    }
    result->parameters += g.parameters;
    result->commands[k] = g.commands;
    if (!d.determined()) result->undetermined_steps.push_back(k);
    for (const std::string& c : d.degenerate_contacts()) {
      degenerate[k].push_back("step " + std::to_string(k) + ": " + c);
    }
  }

  // Adds the loss's gradient at s_0 and writes the result's state gradient (the entries carried
  // into the first step from before it are held) and lists, in step order.
  void Finish(const Eigen::VectorXd& initial_loss) {
    Add(initial_loss);
    result->initial_state = lambda.head(state);
    std::reverse(result->undetermined_steps.begin(), result->undetermined_steps.end());
    for (const std::vector<std::string>& step : degenerate) {
      result->degenerate_contacts.insert(result->degenerate_contacts.end(), step.begin(),
                                         step.end());
    }
  }
};

const StepRecord& TakeStep(Stepper* stepper, const TrajectoryGradientOptions& options, int k) {
  if (!options.impulses) return stepper->Step();
  return stepper->Step(options.impulses(k));
}

// Steps [first, end) from where the stepper is, their derivatives into *derivatives (in order)
// and, for each step, the loss's gradient after it, kept for the reverse pass.
void Forward(Stepper* stepper, const LossGradient& loss, const TrajectoryGradientOptions& options,
             int first, int end, std::vector<std::unique_ptr<StepDerivative>>* derivatives,
             std::vector<Eigen::VectorXd>* losses) {
  derivatives->clear();
  losses->clear();
  for (int k = first; k < end; ++k) {
    TakeStep(stepper, options, k);
    derivatives->push_back(stepper->LastStepDerivative());
    losses->push_back(loss(k + 1, *stepper));
  }
}

}  // namespace

TrajectoryGradientResult ReverseGradient(Stepper* stepper, const LossGradient& loss,
                                         const TrajectoryGradientOptions& options) {
  const int n = options.steps;
  if (n < 1 || options.checkpoint_interval < 0) {
    throw InputError("trajectory gradient: steps = " + std::to_string(n) +
                     " must be >= 1 and checkpoint_interval = " +
                     std::to_string(options.checkpoint_interval) + " >= 0");
  }
  const int interval =
      options.checkpoint_interval == 0 ? n : std::min(options.checkpoint_interval, n);
  TrajectoryGradientResult result;
  result.commands.resize(n);
  Reverse reverse{&result, Eigen::VectorXd(), std::vector<std::vector<std::string>>(n), -1, {}};
  const Eigen::VectorXd initial_loss = loss(0, *stepper);
  // Forward: snapshots at the start of each stretch but the last, whose derivatives are kept.
  std::vector<std::unique_ptr<StepperSnapshot>> snapshots;
  const int last_first = ((n - 1) / interval) * interval;
  for (int k = 0; k < last_first; ++k) {
    if (k % interval == 0) snapshots.push_back(stepper->Save());
    TakeStep(stepper, options, k);
  }
  std::vector<std::unique_ptr<StepDerivative>> derivatives;
  std::vector<Eigen::VectorXd> losses;
  Forward(stepper, loss, options, last_first, n, &derivatives, &losses);
  std::unique_ptr<StepperSnapshot> end = snapshots.empty() ? nullptr : stepper->Save();
  result.snapshots = static_cast<int>(snapshots.size());
  // Reverse, stretch by stretch from the last.
  for (int first = last_first;; first -= interval) {
    const int stretch_end = std::min(first + interval, n);
    if (first != last_first) {
      stepper->Restore(*snapshots[first / interval]);
      Forward(stepper, loss, options, first, stretch_end, &derivatives, &losses);
    }
    result.derivatives_held =
        std::max(result.derivatives_held, static_cast<int>(derivatives.size()));
    for (int k = stretch_end - 1; k >= first; --k) {
      reverse.Add(losses[k - first]);
      reverse.Back(k, *derivatives[k - first]);
      derivatives[k - first].reset();
    }
    if (first == 0) break;
  }
  if (end != nullptr) stepper->Restore(*end);
  reverse.Finish(initial_loss);
  return result;
}

TrajectoryGradientResult ReverseThrough(const std::vector<const StepDerivative*>& steps,
                                        const std::vector<Eigen::VectorXd>& losses) {
  const int n = static_cast<int>(steps.size());
  if (n < 1 || static_cast<int>(losses.size()) != n + 1) {
    throw InputError("trajectory gradient: " + std::to_string(n) + " steps need " +
                     std::to_string(n + 1) + " loss gradients, not " +
                     std::to_string(losses.size()));
  }
  TrajectoryGradientResult result;
  result.commands.resize(n);
  result.derivatives_held = n;
  Reverse reverse{&result, Eigen::VectorXd(), std::vector<std::vector<std::string>>(n), -1, {}};
  for (int k = n - 1; k >= 0; --k) {
    reverse.Add(losses[k + 1]);
    reverse.Back(k, *steps[k]);
  }
  reverse.Finish(losses[0]);
  return result;
}

}  // namespace ncpkit
