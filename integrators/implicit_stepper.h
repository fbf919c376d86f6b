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
#include "integrators/islands.h"
#include "integrators/stepper.h"
#include "integrators/stepper_registry.h"

namespace ncpkit {

namespace internal {

// What an island's solver carries into the next step (the kept Newton matrix of
// SolverOptions::reuse_factorization), saved in a snapshot with the island's bodies and pairs
// so that steps replayed after Restore() repeat bit for bit.
struct SolverCarry {
  std::vector<int> bodies;
  std::vector<std::pair<int, int>> pairs;
  std::shared_ptr<const SolverMemory> memory;
};

class WorkerPool;
struct ImplicitMemoryLayout;
}  // namespace internal

// Every option: meaning, default, units, valid range and source. IsValid() says which one is
// out of range; the stepper's constructor throws InputError for it (RequireValidOptions).
// The shared settings (StepperSettings): h by Xie & Chakraborty 2016 eq. 18 (backward Euler);
// solver a registry name taking ProblemKind::Mixed, default "auto": FB Newton from every start,
// then the AutoSolver's chain (Josephy-Newton, penalized FB, min-map Newton; auto_solve.h) from
// every start where FB Newton fails, then FB Newton from the chain's best point; tolerance on the
// natural residual of each step's MCP; max_iterations per start and method (a step tries up to four
// starts), default 100, >= 1; warm_start false: every step starts from the shapes' support points.
struct ImplicitStepperOptions : StepperSettings {
  ImplicitStepperOptions() {
    solver = "auto";
    max_iterations = 100;
  }
  // A pair enters the step's problem unless an axis (the line of centres, a box's face normal,
  // a plane's normal) separates its shapes by more than this (m) plus a quasi-rigid layer's
  // thickness plus how far they can close along it in two steps as they coast (their velocities
  // and applied impulses, without gravity). A pair left out that the step's solution would
  // overrun joins it, and the step is solved again. Default 0.002 (2 mm: neighbours 5 mm apart
  // at rest stay out, so they are not joined into one island); >= 0.
  double contact_margin = 0.002;
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
  // frame; empty for none). Each island of the step (bodies joined by active pairs; a body
  // without one is an island of its own) is one MCP, solved on options.threads threads. The
  // bodies advance with the solver's best point even when an island did not converge (the
  // record's summary says so); an island whose result is not finite does not move.
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

  // The last step's derivative (integrators/implicit_derivative.h). Throws InputError where a
  // pair's compliant layer carries state into the step (not differentiated).
  std::unique_ptr<StepDerivative> LastStepDerivative() const override;
  // The bodies' states, the time and every pair's carried state (warm starts, the compliant
  // layers' memory): the steps after Restore() are those that followed Save(), bit for bit.
  std::unique_ptr<StepperSnapshot> Save() const override;
  void Restore(const StepperSnapshot& snapshot) override;
  // Sets body i's state (position, orientation, twist) for the next step, as a controller or a
  // finite difference does; the pairs' carried state stays. Throws InputError for an index out
  // of range, a fixed body, a non-finite state or a quaternion not of unit length (to 1e-9).
  void SetBodyState(int i, const RigidBodyState& state);

  int BodyIndex(const std::string& name) const { return FindBody(bodies_, name); }
  // The solver of island k (k < record().islands) of the latest step, with its full summary;
  // solver() names the solver and its settings, which every island's has.
  const ComplementaritySolver& island_solver(int k) const;
  const ImplicitStepperOptions& options() const { return options_; }

 private:
  // One island's problem (integrators/islands.h), kept while its bodies and pairs stay the same.
  struct IslandProblem;
  void FreeVelocities(const std::vector<Vector6d>& applied_impulses);
  double Turning(int f, int g) const;
  double Closing(int f, int g, const Eigen::Vector3d& axis) const;
  bool Apart(int f, int g, const RigidBodyState& pose_f, const RigidBodyState& pose_g, bool closing,
             double enough) const;
  bool Near(int f, int g) const;
  void FindPairs();
  void SetPairs();
  bool OverrunPairs();
  void FindIslands();
  void GiveBackCarry();
  bool Matches(const IslandProblem& problem, const internal::IslandView& island) const;
  std::unique_ptr<IslandProblem> BuildIsland(const internal::IslandView& island);
  void SetBodyData(IslandProblem* island, const std::vector<Vector6d>& applied_impulses);
  const ImplicitPairState* Remembered(int pair) const;
  void PreparePair(IslandProblem* island, int attempt, int j);
  void PrepareAttempt(IslandProblem* island, int attempt);
  Eigen::Ref<Eigen::VectorXd> StartForces(IslandProblem* island, int j);
  bool Held(int body) const { return fixed_[body] != 0 || held_[body] != 0; }
  std::pair<int, int> RestingBodies(const IslandProblem& island, int j) const;
  bool Supports(const IslandProblem& island, int j) const;
  void FindHeldBodies(IslandProblem* island, const Eigen::Vector3d& up);
  void CarryLoads(IslandProblem* island);
  double StartGap(int k) const;
  double ClosingSpeed(const IslandProblem& island, int j, const Eigen::Vector3d& up) const;
  void StartFromLoads(IslandProblem* island, bool keep_remembered);
  struct StartOrder;
  struct AttemptTally;
  template <class Solve>
  bool TryStarts(IslandProblem* island, const StartOrder& order, AttemptTally* tally,
                 const Solve& solve);
  bool RunChain(IslandProblem* island, const StartOrder& order, AttemptTally* tally);
  bool FromPoint(IslandProblem* island, int attempt, const Eigen::VectorXd& point,
                 AttemptTally* tally);
  bool RunAgain(IslandProblem* island, AttemptTally* tally);
  void SolveFromStarts(IslandProblem* island, int first_attempt, int last_attempt);
  static void DescribeAttempts(const AttemptTally& tally, int first_phase,
                               const std::string& first_solver, SolverSummary* best);
  void SolveIsland(IslandProblem* island, const std::vector<Vector6d>& applied_impulses);
  void SummarizeIslands();
  void RecordContact(const IslandProblem& island, int j);
  void ApplySolution();
  void FinishStep(double seconds);

  std::vector<Body> bodies_;
  ContactLawTable laws_;
  ContactLawsByIndex laws_by_index_;
  double thickest_layer_ = 0.0;  // the thickest quasi-rigid layer of any pair (m)
  ImplicitStepperOptions options_;
  SolverOptions solver_options_;
  std::unique_ptr<ComplementaritySolver> solver_;  // names the solver; each island has its own
  double time_ = 0.0;
  // Workspace of Step(), kept so that a step with the same active pairs as the last allocates
  // nothing.
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;                // per body, for the broad phase
  std::vector<std::pair<int, int>> candidates_;        // the broad phase's pairs
  std::vector<std::pair<int, int>> pairs_;             // (F, G) of each active pair, this step
  std::vector<std::pair<int, int>> left_out_;          // (F, G) of the candidates not in pairs_
  std::vector<std::pair<int, int>> remembered_pairs_;  // and the last step's
  bool same_pairs_ = false;                            // pairs_ == remembered_pairs_
  std::vector<ImplicitPairState> memory_;              // per pair of the last step
  std::vector<ImplicitPairState> next_memory_;         // per pair of this step
  std::vector<Eigen::Vector3d> origin_;                // per pair: its local origin (F's position)
  std::vector<Vector6d> nu_start_, nu_coast_, nu_;     // per body: free, coasting, end twists
  std::vector<double> beyond_free_;                    // per body: end motion beyond free (m)
  std::vector<RigidBodyState> end_pose_;               // per moving body: its pose at the end
  std::vector<char> all_remembered_;                   // per body
  std::vector<char> chain_failed_;  // per body: auto's chain failed on its island this step
  std::vector<char> has_pair_;      // per body: in an active pair
  std::vector<char> fixed_;         // per body
  // For StartFromLoads, per body: held up, the pairs it rests on, the speed it falls at by the
  // end of a free step (m/s), its total load and the load it carries (N s); per pair of the
  // step: +1 F rests on G, -1 G on F, 0 neither (a side contact); +-2 as +-1 but not pressing
  // in the start, which become +-1 if the gap closes within the step once the lower body stops.
  std::vector<char> held_;
  std::vector<int> supports_;
  std::vector<double> fall_, end_fall_, own_load_, load_, carried_;
  std::vector<int> rest_;
  internal::IslandFinder finder_;
  std::vector<std::unique_ptr<IslandProblem>> islands_;  // this step's, in island order
  std::vector<std::unique_ptr<IslandProblem>> spare_;    // the last step's, for reuse
  std::vector<int> spare_by_body_;  // per body: the spare island it is first in, or -1
  std::vector<int> nu_of_body_;     // per body: its twist block in the island being built, or -1
  // What each island's solver carried into the next step when a snapshot was saved, given
  // back to the islands of the first step after Restore(); empty otherwise.
  std::vector<internal::SolverCarry> restored_carry_;
  bool restored_ = false;  // the next FindIslands() hands restored_carry_ to the islands
  std::unique_ptr<internal::WorkerPool> pool_;
  ImplicitStepRecord record_;
  bool derivable_ = false;          // a step taken since construction or Restore()
  std::vector<char> reads_memory_;  // per pair of the step: its layer's state is the last step's
  // The layers' state in the step derivatives (integrators/implicit_derivative.h).
  std::unique_ptr<internal::ImplicitMemoryLayout> memory_layout_;
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
