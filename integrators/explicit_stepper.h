// The explicit velocity-level time-stepper (Stewart & Trinkle; Anitescu & Potra): contact points,
// normals and gaps from the explicit distances at the start of the step, then one frictional
// contact problem with Coulomb cones in the impulses, solved by any registry solver that takes
// it (nsgs, fc-newton, fc-proximal, auto, ...). The formulation ODE, Bullet, MuJoCo and Siconos
// use for dynamic scenes, beside the implicit ECP stepper of seed 000.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "contact/broad_phase.h"
#include "contact/contact_law.h"
#include "contact/distance.h"
#include "dynamics/body.h"
#include "integrators/stepper.h"
#include "solvers/friction_problem.h"
#include "solvers/solver_registry.h"

namespace ncpkit {

struct ExplicitStepperOptions {
  double h = 0.01;                                             // time step (s); > 0
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);  // m/s^2
  // Contacts whose gap at the start of the step is below this enter its problem (m); > 0. The
  // phi / h term lets a contact inside the margin close but not overshoot.
  double contact_margin = 0.01;
  // A registry solver taking ProblemKind::Friction, and its options (tolerance: FCLib error).
  std::string solver = "auto";
  SolverOptions solver_options;
  // Start each step's solve from the previous step's impulses, matched by pair and contact
  // point (within the margin). Default true.
  bool warm_start = true;
  bool IsValid(std::string* why) const;
};

// One contact of a step, in the world frame: B's reaction impulse is r_N n + r_T (A gets the
// opposite), the gap is the start-of-step signed distance.
struct ExplicitContact {
  int body_a = -1, body_b = -1;
  ContactPoint point;
  Eigen::Vector3d tangent1 = Eigen::Vector3d::UnitX(), tangent2 = Eigen::Vector3d::UnitY();
  Eigen::Vector3d impulse = Eigen::Vector3d::Zero();  // [r_N, r_T1, r_T2] (N s)
};

struct ExplicitStepRecord : StepRecord {
  std::vector<ExplicitContact> contacts;
};

// Steps the bodies: free velocities nu_f = nu + h M^-1 (m g, -omega x I omega); W = J M^-1 J^T,
// q = J nu_f + [phi / h, 0, 0] per contact; r solves FC(W, q, mu); nu+ = nu_f + M^-1 J^T r;
// poses by the exact rotation update. max_penetration is the deepest start-of-step overlap. A
// step whose problem is not solved applies the best impulses found and says so in its summary.
// Bodies are validated as for the implicit stepper (ValidateBodies, dynamic).
class ExplicitStepper : public Stepper {
 public:
  // Each pair's Coulomb coefficient is laws.Get(a, b).mu (the other fields of the law are the
  // implicit stepper's).
  ExplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                  const ExplicitStepperOptions& options);

  const StepRecord& Step(const std::vector<Vector6d>& applied_impulses) override;
  using Stepper::Step;
  double time() const override { return time_; }
  double h() const override { return options_.h; }
  const std::vector<Body>& bodies() const override { return bodies_; }
  const ComplementaritySolver& solver() const override { return *solver_; }
  std::string variant() const override {
    return "cone/" + options_.solver + (options_.warm_start ? "" : "-cold");
  }
  bool has_velocities() const override { return true; }
  Eigen::Vector3d gravity() const override { return options_.gravity; }
  const std::vector<const char*>& PairColumns() const override;
  void TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const override;
  void ContactMarkers(const StepRecord& record, std::vector<ContactMarker>* markers) const override;
  const ExplicitStepRecord& record() const { return record_; }

 private:
  void FindContacts();
  void AssembleAndSolve();
  void Advance();

  std::vector<Body> bodies_;
  ContactLawTable laws_;
  ExplicitStepperOptions options_;
  std::unique_ptr<ComplementaritySolver> solver_;
  ExplicitContactGeometry geometry_;
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<ContactPoint> points_;
  std::vector<ExplicitContact> previous_;
  std::vector<Eigen::Matrix<double, 6, 6>> inverse_mass_;  // zero for fixed bodies
  std::vector<Vector6d> free_velocity_;
  Eigen::VectorXd r_;
  ExplicitStepRecord record_;
  double time_ = 0.0;
};

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_
