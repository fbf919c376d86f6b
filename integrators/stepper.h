// The one interface of every time-stepper: Step() advances the scene's bodies by one step and
// returns a record whose common part (StepRecord) every run loop, report and table reads.
#ifndef NCPKIT_INTEGRATORS_STEPPER_H_
#define NCPKIT_INTEGRATORS_STEPPER_H_

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "dynamics/actuators.h"
#include "dynamics/body.h"
#include "integrators/step_derivative.h"
#include "solvers/base/input_error.h"
#include "solvers/base/status.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {

// Gravity when a scene names none, for every stepper (m/s^2, world frame): 9.8 m/s^2 down z, the
// value of the papers the scenes come from (docs/references.md).
inline Eigen::Vector3d DefaultGravity() { return Eigen::Vector3d(0.0, 0.0, -9.8); }

// The settings every stepper shares. Each stepper's options derive from it, give `solver` and
// `max_iterations` their defaults and add the stepper's own fields; a scene file spells them the
// same way for every stepper (docs/steppers.md).
struct StepperSettings {
  // Time step (s). Default 0.01; > 0, finite.
  double h = 0.01;
  // Gravity (m/s^2, world frame). Default DefaultGravity(); finite.
  Eigen::Vector3d gravity = DefaultGravity();
  // A registry solver (solvers/registry/solver_registry.h) taking the problem kind of the
  // stepper's model.
  std::string solver;
  // The solver's tolerance on each step's problem: its natural residual, or the FCLib error for
  // a frictional contact problem. Default 1e-10; > 0, finite.
  double tolerance = 1e-10;
  // The solver's iteration cap; 0: the solver's own default. >= 0.
  int max_iterations = 0;
  // Start each step from the previous step's solution. Default true.
  bool warm_start = true;
  // Pose and solve one problem per island of the step (integrators/islands.h: bodies joined by
  // contacts); false: one problem for the whole scene, as a reference. Default true.
  bool islands = true;
  // Threads that solve a step's islands, the calling one included (integrators/worker_pool.h):
  // the trajectory is bitwise the same for any number. Default 1; in [1, kMaxThreads].
  int threads = 1;
  static constexpr int kMaxThreads = 256;  // (Check() names it in its message)
  // The checks of these fields, first failure first, for a stepper's IsValid to continue with
  // its own.
  internal::OptionChecks Check() const;
};

// What every step reports. Steppers derive their own records with their contact quantities.
struct StepRecord {
  StepRecord() = default;
  StepRecord(const StepRecord&) = default;
  StepRecord(StepRecord&&) = default;
  StepRecord& operator=(const StepRecord&) = default;
  StepRecord& operator=(StepRecord&&) = default;
  virtual ~StepRecord() = default;

  double time = 0.0;      // at the end of the step (s)
  SolverSummary summary;  // the step's problem as solved (iterations summed over attempts)
  int problem_size = 0;   // unknowns of the step's problem
  // Starts the step needed: 1 solved from the first; more when restarts were needed.
  int attempts = 0;
  int num_contacts = 0;  // contacts in the step's problem (pairs or points)
  // The step's islands (integrators/islands.h) that posed a problem, and those whose problem was
  // not solved. The summary aggregates the islands': the largest iteration count and residual,
  // the first unsolved island's status and message.
  int islands = 0, failed_islands = 0;
  double max_penetration = 0.0;  // m, over the step's contacts (0 without contact)
  double step_seconds = 0.0;     // the whole step: contact search, assembly, solve, update
  std::string solver_report;     // the solver's FullReport(), when the stepper keeps them
  // Actuator positions and commands at the end of the step (empty without actuators).
  std::vector<double> actuator_positions, actuator_commands;
};

// A pair's figures in one step, for trajectory tables (Stepper::PairColumns() names them).
struct PairRow {
  int body_a = -1, body_b = -1;
  double values[12] = {};
};

// A contact point to draw (the trajectory viewer): where, the normal, and the normal impulse or
// force it carries (the stepper's unit: N s implicit, N quasistatic).
struct ContactMarker {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();
  double magnitude = 0.0;
};

// A stepper's state as Stepper::Save() took it, for Restore(): what the steps that follow
// depend on (the bodies' states, the time, the warm start).
class StepperSnapshot {
 public:
  virtual ~StepperSnapshot() = default;
};

class Stepper {
 public:
  virtual ~Stepper() = default;
  // Advances one step from time() to time() + h(). `applied_impulses`: one per body (N s and
  // N m s, world frame) or empty; steppers without velocities take none (InputError). The
  // record stays valid until the next Step(). A step whose problem was not solved says so in
  // its summary; what it did to the bodies is the stepper's documented policy.
  virtual const StepRecord& Step(const std::vector<Vector6d>& applied_impulses) = 0;
  const StepRecord& Step() { return Step(kNoImpulses); }

  virtual double time() const = 0;
  virtual double h() const = 0;
  virtual const std::vector<Body>& bodies() const = 0;
  virtual const std::vector<Actuator>& actuators() const { return kNoActuators; }
  // The solver every step uses (kept for the stepper's life).
  virtual const ComplementaritySolver& solver() const = 0;
  // The variant this stepper runs, as the command line names it (ParseSolverVariant()).
  virtual std::string variant() const = 0;
  // Steppers with velocities (dynamics) report them and the mechanical energy in tables.
  virtual bool has_velocities() const = 0;
  virtual Eigen::Vector3d gravity() const = 0;
  // Per-pair table columns, and the pairs of a record of this stepper's.
  virtual const std::vector<const char*>& PairColumns() const = 0;
  virtual void TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const = 0;
  // The contact points of a record of this stepper's.
  virtual void ContactMarkers(const StepRecord& record,
                              std::vector<ContactMarker>* markers) const = 0;
  // The derivative of the step just taken (integrators/step_derivative.h), valid after later
  // steps too. Throws InputError before the first step, after a step whose problem was not
  // solved, and for a stepper or model without step derivatives (docs/derivatives.md).
  virtual std::unique_ptr<StepDerivative> LastStepDerivative() const;
  // A snapshot of the stepper, and the stepper put back to one of its own snapshots: the steps
  // after Restore() are those that followed Save(), bit for bit. LastStepDerivative() needs a step
  // after Restore(). Both throw InputError for a stepper without snapshots.
  virtual std::unique_ptr<StepperSnapshot> Save() const;
  virtual void Restore(const StepperSnapshot& snapshot);

 protected:
  static const std::vector<Vector6d> kNoImpulses;
  static const std::vector<Actuator> kNoActuators;
};

namespace internal {
// The checks of a stepper's SetBodyState(i, state): InputError ("<stepper> stepper:
// SetBodyState(i)...") unless body i moves and the state is finite with a unit quaternion.
void RequireSettableBodyState(const char* stepper, const std::vector<Body>& bodies, int i,
                              const RigidBodyState& state);
}  // namespace internal

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_STEPPER_H_
