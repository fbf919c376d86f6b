// How good a trajectory of a scene is, measured from the bodies' states alone, so that every
// stepper, and another engine stepping the same scene, is judged by one measure: the deepest
// overlap of any pair (explicit distances, contact/distance.h), the largest rise of the
// mechanical energy in a step, the drift of bodies that should be at rest, and the largest
// rotation of any body.
#ifndef NCPKIT_INTEGRATORS_TRAJECTORY_QUALITY_H_
#define NCPKIT_INTEGRATORS_TRAJECTORY_QUALITY_H_

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "contact/broad_phase.h"
#include "contact/distance.h"
#include "dynamics/body.h"

namespace ncpkit {

struct TrajectoryQuality {
  int steps = 0;
  // Deepest overlap of any pair of bodies after any step (m; 0 when nothing overlaps), from
  // the explicit distances of contact/distance.h. Pairs without an explicit distance are not
  // measured (`unmeasured_pairs` counts them, once per step).
  double max_penetration = 0.0;
  int64_t unmeasured_pairs = 0;
  // Largest increase of the total mechanical energy (kinetic + gravitational) from one step to
  // the next (J; 0 when it never rises), and end minus start (J).
  double max_energy_rise = 0.0;
  double energy_change = 0.0;
  // Largest displacement of any moving body's centre from where it was at the settle step
  // (TrajectoryQualityMeter::SetSettleStart) to any later step (m): how far bodies that should
  // rest still move. 0 when no settle step was set.
  double settled_drift = 0.0;
  // Largest rotation angle of any moving body from its starting orientation (rad).
  double max_rotation = 0.0;
};

// Feed it the bodies after every step (the same bodies, in the same order, with their states).
class TrajectoryQualityMeter {
 public:
  // `bodies`: the scene's bodies at the start (fixed ones included).
  TrajectoryQualityMeter(const std::vector<Body>& bodies, const Eigen::Vector3d& gravity);
  // The states of every body (fixed ones are ignored) after one step.
  void Add(const std::vector<RigidBodyState>& states);
  const TrajectoryQuality& Result() const { return quality_; }

  // The deepest overlap among the bodies at these states (m, >= 0); counts pairs without an
  // explicit distance in *unmeasured.
  double Penetration(const std::vector<RigidBodyState>& states, int64_t* unmeasured);

  // The step (counted from 1, as Add() is called) whose positions are the reference for
  // settled_drift. Set before the run; default none.
  void SetSettleStart(int step) { settle_start_ = step; }

 private:
  std::vector<Body> bodies_;
  Eigen::Vector3d gravity_;
  ExplicitContactGeometry geometry_;
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<ContactPoint> points_;
  std::vector<Eigen::Vector3d> settle_positions_;
  double last_energy_ = 0.0, first_energy_ = 0.0;
  int settle_start_ = -1;
  TrajectoryQuality quality_;
};

// Largest relative error of a body's horizontal position against the analytic slide of a body
// on a horizontal plane under Coulomb friction (Xie & Chakraborty 2016 VI-A: uniform deceleration
// mu g along the initial velocity until it stops): max over the sampled times of |p - p_exact| /
// |p_exact - p_0|. `times` and `positions` are samples after the start.
double SlideError(const Eigen::Vector3d& start_position, const Eigen::Vector3d& start_velocity,
                  double mu, double g, const std::vector<double>& times,
                  const std::vector<Eigen::Vector3d>& positions);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_TRAJECTORY_QUALITY_H_
