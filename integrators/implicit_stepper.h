// The geometrically implicit time-stepper (seed 000): one mixed NCP per step in the bodies'
// end-of-step twists and every active pair's contact unknowns (contact/implicit_contact.h),
// solved by a solver chosen at run time and warm-started from the previous step.
#ifndef NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_
#define NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_

#include <Eigen/Dense>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/implicit_contact.h"
#include "contact/shapes.h"
#include "dynamics/rigid_body.h"
#include "solvers/status.h"

namespace ncpkit {

class ComplementaritySolver;

using Vector6d = Eigen::Matrix<double, 6, 1>;

struct Body {
  std::string name;
  Shape shape;
  MassProperties mass;  // unused for fixed bodies
  RigidBodyState state;
  bool fixed = false;
};

struct ImplicitStepperOptions {
  double h = 0.01;
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.8);
  std::string solver = "fb-newton";  // a registry name taking ProblemKind::Mixed
  bool warm_start = true;            // false: every step starts from default guesses
  double tolerance = 1e-10;          // natural residual of each step's problem
  int max_iterations = 100;
  // A pair enters the step's problem when its bounding spheres (a half-space: its plane) are
  // closer than this plus the distance both bodies can travel in two steps.
  double contact_margin = 0.01;
  bool keep_solver_reports = false;  // each record gets the solver's full report with history
  bool IsValid(std::string* why) const;
};

// One active pair after a step. F (body_f) is a moving body; G (body_g) may be fixed.
struct ContactRecord {
  int body_f = -1, body_g = -1;
  Eigen::Vector3d ecp = Eigen::Vector3d::Zero();      // a1, F's contact point
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();   // direction of the normal impulse on F
  double p_n = 0.0, p_t = 0.0, p_o = 0.0, p_r = 0.0;  // N s (p_r: N m s); p_n incl. layer
  int n_active_f = 0, n_active_g = 0;  // positive multipliers: 3 vertex, 2 edge, 1 face
  int k1 = 0;
  double gap = 0.0;         // separation of the (core) shapes along the contact axis, < 0: overlap
  double deflection = 0.0;  // compliant layer: d
};

struct StepRecord {
  double time = 0.0;  // at the end of the step
  SolverSummary summary;
  std::vector<ContactRecord> contacts;
  double max_penetration = 0.0;  // max(0, -gap) over the active pairs
  int problem_size = 0;          // unknowns of the step's MCP
  double step_seconds = 0.0;     // the whole step: pair search, assembly, solve, update
  std::string solver_report;     // with keep_solver_reports
};

// Per-pair contact laws: a default and overrides by unordered pair of body names.
class ContactLawTable {
 public:
  ContactLaw default_law;
  void Set(const std::string& a, const std::string& b, const ContactLaw& law);
  const ContactLaw& Get(const std::string& a, const std::string& b) const;

 private:
  std::map<std::pair<std::string, std::string>, ContactLaw> overrides_;
};

class ImplicitStepper {
 public:
  // Throws std::invalid_argument for invalid options, bodies or laws (the message names the
  // body or pair).
  ImplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                  const ImplicitStepperOptions& options);
  ~ImplicitStepper();

  // Advances one step with the given applied impulses (one per body, N s and N m s, world
  // frame; empty for none). The bodies advance with the solver's best point even when the
  // step did not converge; the record's summary says so.
  StepRecord Step(const std::vector<Vector6d>& applied_impulses = {});

  const std::vector<Body>& bodies() const { return bodies_; }
  int BodyIndex(const std::string& name) const;  // -1 if none
  double time() const { return time_; }
  const ImplicitStepperOptions& options() const { return options_; }

 private:
  struct PairMemory {
    Eigen::VectorXd geometry, forces;
    int k1 = -1;
    Eigen::Vector3d normal = Eigen::Vector3d::Zero();
    Eigen::Vector3d helper = Eigen::Vector3d::Zero();  // tangent-frame seed of the last step
    double deflection = 0.0;
    Eigen::Vector3d elastic = Eigen::Vector3d::Zero();
  };
  struct StepProblem;
  bool Near(int f, int g) const;
  // Start values from the shapes' support points (towards each other, or against *direction,
  // pointing from G to F); `flat`: faces and edges within this (relative) tilt of the
  // direction count as facing it, and give their centre.
  PairMemory Initialize(const ContactPairStep& pair, double mass_f,
                        const Eigen::Vector3d* direction = nullptr, double flat = 1e-9) const;
  std::unique_ptr<StepProblem> BuildProblem(const std::vector<std::pair<int, int>>& pairs) const;

  std::vector<Body> bodies_;
  ContactLawTable laws_;
  ImplicitStepperOptions options_;
  std::unique_ptr<ComplementaritySolver> solver_;
  std::unique_ptr<StepProblem> problem_;
  std::map<std::pair<int, int>, PairMemory> memory_;
  double time_ = 0.0;
};

// Separation of two convex shapes along `axis` (pointing from G towards F): the smallest
// axis.x over F minus the largest over G; >= 0 proves they do not overlap. A half-space G
// must have axis equal to its normal.
double SeparationAlongAxis(const Shape& f, const RigidBodyState& pose_f, const Shape& g,
                           const RigidBodyState& pose_g, const Eigen::Vector3d& axis);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_
