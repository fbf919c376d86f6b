#include "integrators/scene_runner.h"

#include <cmath>

namespace ncpkit {

SceneRunner::SceneRunner(const Scene& scene)
    : scene_(scene),
      stepper_(MakeStepper(scene)),
      armed_(scene.impulses.size(), 1),
      done_(scene.impulses.size(), 0),
      previous_(scene.impulses.size(), std::nan("")),
      impulses_(scene.bodies.size(), Vector6d::Zero()) {
  num_steps_ = CountSteps(scene.duration, scene.h(), scene.max_steps);
  fired_.reserve(scene.impulses.size());
}

// Whether impulse k acts in the step starting at t (and its trigger's bookkeeping).
bool SceneRunner::Fires(size_t k, double t) {
  const ImpulseEvent& e = scene_.impulses[k];
  const double h = stepper_->h();
  if (e.timed) {
    const bool fire = !done_[k] && t >= e.at - 0.5 * h;
    if (fire) done_[k] = 1;
    return fire;
  }
  const double value = StateQuantity(stepper_->bodies()[e.watch].state, e.quantity) - e.value;
  const double before = previous_[k];
  const bool reached =
      std::abs(value) <= e.tolerance ||
      (std::isfinite(before) && std::abs(before) > e.tolerance && (before > 0.0) != (value > 0.0));
  previous_[k] = value;
  if (reached && armed_[k] && !done_[k] && t >= e.after - 0.5 * h) {
    armed_[k] = 0;
    if (!e.repeat) done_[k] = 1;
    return true;
  }
  if (!reached) armed_[k] = 1;
  return false;
}

const StepRecord& SceneRunner::Step() {
  const double t = stepper_->time();
  bool any = false;
  fired_.clear();
  for (size_t k = 0; k < scene_.impulses.size(); ++k) {
    if (!Fires(k, t)) continue;
    const ImpulseEvent& e = scene_.impulses[k];
    if (!any) std::fill(impulses_.begin(), impulses_.end(), Vector6d::Zero());
    impulses_[e.body] += e.impulse;
    fired_.push_back({t, static_cast<int>(k)});
    any = true;
  }
  ++step_;
  return any ? stepper_->Step(impulses_) : stepper_->Step();
}

}  // namespace ncpkit
