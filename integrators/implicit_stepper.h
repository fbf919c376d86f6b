// The geometrically implicit time-stepper (Xie & Chakraborty 2016): one mixed NCP per step in the
// bodies' end-of-step twists and every active pair's contact unknowns (contact/implicit_contact.h),
// solved by a solver chosen at run time and warm-started from the previous step.
#ifndef NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_
#define NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/broad_phase.h"
#include "contact/contact_law.h"
#include "contact/implicit_pair.h"
#include "dynamics/body.h"
#include "integrators/stepper.h"
#include "integrators/stepper_registry.h"

namespace ncpkit {

// Every option: meaning, default, units, valid range and source. IsValid() says which one is
// out of range; the stepper's constructor throws InputError for it (RequireValidOptions).
// The shared settings (StepperSettings): h by Xie & Chakraborty 2016 eq. 18 (backward Euler);
// solver a registry name taking ProblemKind::Mixed, default "fb-newton"; tolerance on the natural
// residual of each step's MCP; max_iterations per start (a step tries up to four starts),
// default 100, >= 1; warm_start false: every step starts from the shapes' support points.
struct ImplicitStepperOptions : StepperSettings {
  ImplicitStepperOptions() {
    solver = "fb-newton";
    max_iterations = 100;
  }
  // A pair enters the step's problem when its bounding spheres (a half-space: its plane) are
  // closer than this (m) plus the distance both bodies can travel in two steps. Default 0.01;
  // >= 0.
  double contact_margin = 0.01;
  // Keep the solver's full report (with its iteration history) in every record. Default
  // false.
  bool keep_solver_reports = false;
  bool IsValid(std::string* why) const;
};

struct ImplicitStepRecord : StepRecord {
  std::vector<ContactRecord> contacts;  // one per active pair
};

class ImplicitStepper : public Stepper {
 public:
  // Throws InputError for invalid options, bodies or laws (the message names the body or
  // pair).
  ImplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                  const ImplicitStepperOptions& options);
  ~ImplicitStepper() override;

  // Advances one step with the given applied impulses (one per body, N s and N m s, world
  // frame; empty for none). The bodies advance with the solver's best point even when the
  // step did not converge (the record's summary says so); a non-finite result moves nothing.
  const ImplicitStepRecord& Step() { return Step(kNoImpulses); }
  const ImplicitStepRecord& Step(const std::vector<Vector6d>& applied_impulses) override;

  double time() const override { return time_; }
  double h() const override { return options_.h; }
  const std::vector<Body>& bodies() const override { return bodies_; }
  const ComplementaritySolver& solver() const override { return *solver_; }
  std::string variant() const override;
  bool has_velocities() const override { return true; }
  Eigen::Vector3d gravity() const override { return options_.gravity; }
  const std::vector<const char*>& PairColumns() const override;
  void TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const override;
  void ContactMarkers(const StepRecord& record, std::vector<ContactMarker>* markers) const override;

  int BodyIndex(const std::string& name) const { return FindBody(bodies_, name); }
  const ImplicitStepperOptions& options() const { return options_; }

 private:
  struct StepProblem;
  bool Near(int f, int g) const;
  void FindPairs();
  void SetBodyData(const std::vector<Vector6d>& applied_impulses);
  std::unique_ptr<StepProblem> BuildProblem() const;
  const ImplicitPairState* Remembered(int pair) const;
  void PreparePair(int attempt, int k, Eigen::VectorXd* z);
  void PrepareAttempt(int attempt, Eigen::VectorXd* z);
  void SolveFromStarts(int first_attempt, int last_attempt);
  void ApplySolution();
  void FinishStep(double seconds);

  std::vector<Body> bodies_;
  ContactLawTable laws_;
  ImplicitStepperOptions options_;
  std::unique_ptr<ComplementaritySolver> solver_;
  std::unique_ptr<StepProblem> problem_;
  double time_ = 0.0;
  // Workspace of Step(), kept so that a step with the same active pairs as the last allocates
  // nothing.
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;                // per body, for the broad phase
  std::vector<std::pair<int, int>> candidates_;        // the broad phase's pairs
  std::vector<std::pair<int, int>> pairs_;             // (F, G) of each active pair, this step
  std::vector<std::pair<int, int>> remembered_pairs_;  // and the last step's
  bool same_pairs_ = false;                            // pairs_ == remembered_pairs_
  std::vector<char> has_pair_;                         // per body: in an active pair
  std::vector<ImplicitPairState> memory_;              // per pair of the last step
  std::vector<ImplicitPairState> next_memory_;         // per pair of this step
  std::vector<Eigen::Vector3d> origin_;                // per pair: its local origin (F's position)
  std::vector<Vector6d> nu_start_, nu_;                // per body
  std::vector<char> all_remembered_;                   // per body
  Eigen::VectorXd z_, best_z_;
  ImplicitStepRecord record_;
};

// The implicit stepper's row in the stepper registry: its configuration with the default
// options. Scene-file keys: the shared settings (h required, max_iterations >= 1) and
// "contact_margin".
std::unique_ptr<StepperConfig> MakeImplicitConfig();

// The implicit variants: "<solver>[-cold]" with a registry solver taking ProblemKind::Mixed.
bool IsSolverVariant(const std::string& variant);
// Sets the solver and warm start a variant names; throws InputError, naming the grammar, for one
// that is not an implicit variant.
void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_IMPLICIT_STEPPER_H_
