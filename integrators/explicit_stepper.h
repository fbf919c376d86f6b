// The explicit velocity-level time-stepper (Stewart & Trinkle; Anitescu & Potra): contact points,
// normals and gaps from the explicit distances at the start of the step, then one
// complementarity problem in the step's contact impulses, in one of four friction models, or
// no problem at all with soft contact (the contact modelling notes):
//
//   cone     Coulomb cones: a frictional contact problem in FCLib's global form, for every
//            friction solver (integrators/explicit/cone.h).
//   pyramid  Stewart-Trinkle's linearized cone with n_d directions: an LCP in (lambda_n, beta,
//            gamma), for Lemke and the Newton methods (integrators/explicit/pyramid.h).
//   relaxed  Anitescu's relaxed cone: an LCP in the pyramid's edge impulses with a symmetric
//            positive semidefinite matrix, for Lemke, PGS and the Newton methods
//            (integrators/explicit/relaxed.h).
//   convex   the convex contact model: the cone's global problem with Anitescu's relaxed cone and
//            a compliance, a strictly convex problem, for convex-newton
//            (solvers/friction/convex_newton.h; posed as the cone's, integrators/explicit/cone.h).
//   soft     the contact modelling notes' spring-damper contact, no problem
//            (integrators/explicit/soft.h).
//
// A step runs in stages (Step()): free velocities -> contacts (broad and narrow phase) -> each
// contact's frame rows and velocity -> the model's problem and its solve -> the impulses into
// the velocities -> poses. The stages share one workspace (integrators/explicit/workspace.h);
// each model is a strategy (integrators/explicit/model.h).
//
// The formulation ODE, Bullet, MuJoCo and Siconos use for dynamic scenes, beside the implicit
// ECP stepper of Xie & Chakraborty 2016.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "contact/broad_phase.h"
#include "contact/contact_law.h"
#include "contact/distance.h"
#include "dynamics/body.h"
#include "integrators/explicit/workspace.h"
#include "integrators/stepper.h"
#include "integrators/stepper_registry.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace internal {
class ExplicitContactModel;
struct ExplicitIslandResult;
struct ExplicitStepContext;
class WorkerPool;
class PoolRunner;
}  // namespace internal

enum class ExplicitModel { Cone, Pyramid, Relaxed, Convex, Soft };
// "cone", "pyramid", "relaxed", "convex", "soft".
const char* ToString(ExplicitModel model);
bool ParseExplicitModel(const std::string& name, ExplicitModel* model);

// The shared settings (StepperSettings): solver a registry name taking the model's problem,
// ProblemKind::GlobalFriction for cone (a Coulomb solver) and convex (a convex-model solver,
// SolverEntry::convex_model), Linear for pyramid and relaxed (unused by soft), default "auto"
// (for convex: convex-newton); tolerance the FCLib error for cone, the convex model's error for
// convex, the natural residual of the LCP otherwise, default 1e-8 (see below);
// max_iterations default 0, the solver's own; warm_start from the previous step's impulses,
// matched by pair and contact point (within the margin).
struct ExplicitStepperOptions : StepperSettings {
  // The tolerance is 1e-8, not the 1e-10 of the other steppers' Newton solves: on boxes that
  // topple and strike one another the Coulomb solvers stall at FCLib errors of 1e-10 to 1e-9
  // after seconds of attempts (at 1e-10, 29 failed steps in 13 of 160 random towers and pushed
  // rows; at 1e-9, 6 in 5; at 1e-8, none, in a sixth of the time), while bodies at rest keep
  // speeds of order 1e-8 m/s (docs/reliability.md).
  ExplicitStepperOptions() {
    solver = "auto";
    tolerance = 1e-8;
  }
  // Contacts whose gap at the start of the step is below this, plus how far both bodies can
  // move in the step at their free velocities, enter its problem (m); > 0. The phi / h term
  // lets such a contact close but not overshoot. Where the impulses speed a body up beyond half
  // the margin, the pairs are searched again with the end-of-step velocities and the step
  // solved again (Step()), so the margin trades contacts in the problem against such repeats.
  // Default 0.002 (2 mm).
  double contact_margin = 0.002;
  // The friction model (top of this file). Default cone.
  ExplicitModel model = ExplicitModel::Cone;
  // Edges of the friction pyramid per contact (pyramid, relaxed), evenly spaced from the first
  // tangent. Default 4; in [3, 64].
  int friction_directions = 4;
  // Frictional contact solvers: wall-time limit of each solve (s). Default 0: none; >= 0.
  double solver_time_limit = 0.0;
  // Newton restitution (ContactLaw::restitution = e > 0): a contact approaching faster than
  // this (m/s) at the start of a step that would close it leaves at e times that speed, from
  // where it is (the gap of that step stays open). Slower approaches are inelastic, so resting
  // contacts do not chatter. Default 0.01; >= 0.
  double restitution_velocity = 0.01;
  // Pyramid and relaxed models: when the solver fails on the step's LCP (redundant contacts
  // make it singular), proximal-point iterations on it (solvers/registry/proximal_point.h) with
  // this relative regularization, each iterate checked against the original problem; then the same
  // once more from a cold start. Default 1e-3 (dimensionless); >= 0; 0 disables.
  double proximal_regularization = 1e-3;
  // Regularized problems per attempt. Default 100 (30 left the relaxed LCP of a 10-box stack
  // at 5e-10 on half its steps); >= 0.
  int max_proximal_iterations = 100;
  // Soft contact: K_p (N/m, per contact point), > 0 with the soft model; K_d (N s/m), >= 0.
  // Defaults 0.
  double soft_stiffness = 0.0;
  double soft_damping = 0.0;
  bool IsValid(std::string* why) const;
  // The settings the model's solver is created with.
  SolverOptions SolverSettings() const;
};

// Steps the bodies: free velocities nu_f = nu + h M^-1 (m g, -omega x I omega); the contacts of
// the pairs within the margin plus both bodies' reach; M nu+ = M nu_f + J^T r, u = J nu+ +
// [phi / h, 0, 0] per contact with r solving the cone complementarity (or the model's LCP);
// where the impulses sped a body beyond half the margin, its pairs are searched again and the
// step solved again if a new contact would close; poses by the exact rotation update.
// max_penetration is the deepest start-of-step overlap. The contacts' islands (bodies joined by
// contacts, integrators/islands.h) are posed and solved as separate problems, on
// options.threads threads. A step whose problem is not solved applies the best impulses found
// and says so in its summary. Bodies are validated as for the
// implicit stepper (ValidateBodies, dynamic).
class ExplicitStepper : public Stepper {
 public:
  // Each pair's Coulomb coefficient is laws.Get(a, b).mu and its restitution coefficient
  // laws.Get(a, b).restitution (the other fields of the law are the implicit stepper's).
  // Throws InputError for invalid options, bodies or laws, a solver that does not take the
  // model's problem, or a pair of shapes without an explicit distance.
  ExplicitStepper(std::vector<Body> bodies, const ContactLawTable& laws,
                  const ExplicitStepperOptions& options);
  ~ExplicitStepper() override;

  const StepRecord& Step(const std::vector<Vector6d>& applied_impulses) override;
  using Stepper::Step;
  double time() const override { return time_; }
  double h() const override { return options_.h; }
  const std::vector<Body>& bodies() const override { return bodies_; }
  const ComplementaritySolver& solver() const override;
  std::string variant() const override;
  bool has_velocities() const override { return true; }
  Eigen::Vector3d gravity() const override { return options_.gravity; }
  const std::vector<const char*>& PairColumns() const override;
  void TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const override;
  void ContactMarkers(const StepRecord& record, std::vector<ContactMarker>* markers) const override;
  // The cone model's steps (integrators/explicit/step_derivative.h).
  std::unique_ptr<StepDerivative> LastStepDerivative() const override;
  // Sets body i's state (position, orientation, twist) for the next step, as a controller or a
  // finite difference does; the warm start stays. Throws InputError for an index out of range, a
  // fixed body, a non-finite state or a quaternion not of unit length (to 1e-9).
  void SetBodyState(int i, const RigidBodyState& state);
  std::unique_ptr<StepperSnapshot> Save() const override;
  void Restore(const StepperSnapshot& snapshot) override;
  const ExplicitStepRecord& record() const { return record_; }
  ExplicitModel model() const { return options_.model; }

  // Called after each island's solve of the cone and convex models with the island's index, its
  // global problem and the impulses found (in the problem's contact order), e.g. to save the
  // step's problems (`ncpkit simulate --save-problems`). A step that searches its pairs again
  // solves its islands again, and calls again. From the worker threads, one call at a time;
  // null: none.
  using ProblemObserver = std::function<void(int island, const GlobalFrictionContactProblem&,
                                             const Eigen::VectorXd& r)>;
  void SetProblemObserver(ProblemObserver observer) { observer_ = std::move(observer); }

 private:
  // Throws InputError for a pair of shape kinds that may meet without an explicit distance.
  void CheckShapePairs() const;
  // Stage 1: mass blocks and free velocities nu_f = nu + h M^-1 (m g, -omega x I omega) + M^-1 p.
  void ComputeFreeVelocities(const std::vector<Vector6d>& applied_impulses);
  // How far body i's surface can move in the step at its velocity in the workspace:
  // h (|v| + |omega| R), 0 for a fixed body.
  double Reach(int i) const;
  // Every body's reach at its free velocity.
  void ComputeReach();
  // Whether the end-of-step velocities reach further than the free ones (by half the margin):
  // then those bodies are marked in grown_ and their reaches enlarged.
  bool GrowReaches();
  // Stage 2: the contacts of the pairs the broad phase keeps into record_.contacts; `only_grown`:
  // pairs with neither body in grown_ take the first search's contacts from the workspace's
  // previous list.
  void FindContacts(bool only_grown = false);
  void UpdateBounds();
  void UpdateBound(int i);  // spheres_[i] from the body's pose, rotations_[i] and reach
  void CheckSupported(int i, int j) const;  // throws where no geometry pairs the two shapes
  void MatchPreviousContacts();
  // The contacts of pairs_[first, end) appended to *contacts, each with its pair's range in the
  // previous list; `points` is scratch. Safe on several threads at once.
  void SearchPairs(int first, int end, bool only_grown, std::vector<ContactPoint>* points,
                   std::vector<ExplicitContact>* contacts,
                   std::vector<std::pair<int, int>>* previous_range) const;
  void AddPairContacts(int i, int j, std::pair<int, int> range, std::vector<ContactPoint>* points,
                       std::vector<ExplicitContact>* contacts,
                       std::vector<std::pair<int, int>>* previous_range) const;
  // Stages 3-5: rows, the islands, each island's solve and its impulses into the velocities.
  void SolveContacts();
  void SolveIslands();
  void GuardUnsolvedIsland(const internal::IslandView& island,
                           internal::ExplicitIslandResult* result);
  void ComputeFrameRows();
  void FrameRowsOf(int first, int end);  // contacts [first, end): safe on several threads at once
  double NormalOffset(const ExplicitContact& contact, const internal::Matrix36& rows_a,
                      const internal::Matrix36& rows_b, const ContactLaw& law) const;
  // Where the impulses sped a body up, its pairs searched again and the step solved again if a
  // new contact would close (at most kMaxReachPasses times).
  void SearchWithEndVelocities();
  int LargeIsland() const;  // the island of kIslandOnThreads rule's size, or -1
  int IslandOnThreads() const;
  bool NewContactViolated(const std::vector<Vector6d>& end_velocity) const;
  bool GrownContactViolated();
  bool Violated(const ExplicitContact& c, const std::vector<Vector6d>& velocity) const;
  // Stage 6: poses by the exact rotation update with the end-of-step twists.
  void Advance();
  internal::ExplicitStepContext Context();

  // Contact searches of a step at most after the first (see Step()).
  static constexpr int kMaxReachPasses = 2;
  // With several threads the narrow phase runs in chunks of at least this many pairs (a box
  // pair's search costs about a microsecond, a batch's hand-over a few).
  static constexpr int kMinPairsPerChunk = 32;
  static constexpr int kMinContactsPerChunk = 128;  // the same for the frame rows
  // An island of at least this many contacts, and of more than half the step's, is solved on
  // its own with the pool's threads in its solver's sweeps (VelocityGaussSeidel's threshold),
  // where the same island took at least kSweepsOnThreads sweeps in the step before and the
  // solver can use the threads (ExplicitContactModel::UsesParallelRunner): the
  // threads' gain on such an island is in runs of sweeps between error checks, while solving it
  // beside the other islands hides theirs (the pile at 5 sweeps a step: 1.05 against 1.12
  // times faster on two threads).
  static constexpr int kIslandOnThreads = 256;
  static constexpr int kSweepsOnThreads = 10;
  struct ContactBatch {  // a chunk's contacts and their previous ranges
    std::vector<ExplicitContact> contacts;
    std::vector<std::pair<int, int>> previous_range;
  };

  std::vector<Body> bodies_;
  ContactLawTable law_table_;  // as given (the derivatives name its overrides)
  ContactLawsByIndex laws_;
  // The bodies' states and the impulses applied at the start of the last step (its derivative).
  std::vector<RigidBodyState> start_states_;
  std::vector<Vector6d> applied_;
  int steps_ = 0;
  bool derivable_ = false;  // a step was taken since construction or Restore()
  ExplicitStepperOptions options_;
  // One model per worker thread (its solver and scratch); models_[0] names the solver.
  std::vector<std::unique_ptr<internal::ExplicitContactModel>> models_;
  std::unique_ptr<internal::WorkerPool> pool_;
  std::unique_ptr<internal::PoolRunner> pool_runner_;  // pool_ lent to one island's solve
  ProblemObserver observer_;
  std::mutex observer_mutex_;
  std::vector<internal::ExplicitIslandResult> island_results_;  // per island (grown only)
  int passes_ = 0;               // the step's repeated searches that solved it again
  int large_island_sweeps_ = 0;  // the last step's LargeIsland's iterations (0: none)
  ExplicitContactGeometry geometry_;
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;
  std::vector<double> reach_;  // Reach() per body at the free velocities (grown by passes)
  std::vector<char> grown_;    // bodies whose reach the impulses enlarged
  std::vector<Eigen::Matrix3d> rotations_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<ContactPoint> points_;
  std::vector<std::pair<int, int>> pair_previous_;  // per pair: its range in the previous list
  // GrownContactViolated's pairs, contacts and (unused) ranges.
  std::vector<std::pair<int, int>> grown_pairs_;
  std::vector<ExplicitContact> grown_contacts_;
  std::vector<std::pair<int, int>> grown_ranges_;
  std::vector<ContactBatch> batches_;  // the chunks of a parallel search (grown only)
  std::vector<std::vector<ContactPoint>> worker_points_;  // per worker: narrow-phase scratch
  internal::ExplicitWorkspace workspace_;
  std::vector<int> by_body_fill_;  // ComputeFrameRows: each body's next slot in by_body
  ExplicitStepRecord record_;
  double time_ = 0.0;
};

// The explicit stepper's row in the stepper registry: its configuration with the default
// options. Scene-file keys: the shared settings (h required) and "model", "contact_margin",
// "friction_directions", "restitution_velocity", "soft": {"stiffness", "damping"}.
std::unique_ptr<StepperConfig> MakeExplicitConfig();

// The explicit variants "cone/<solver>[-cold]" with a registry solver taking
// ProblemKind::Friction (e.g. "cone/nsgs"), "pyramid/<solver>[-cold]" and
// "relaxed/<solver>[-cold]" with one taking ProblemKind::Linear (no PGS for the pyramid), and
// "soft" (needs the scene's soft stiffness).
bool IsExplicitVariant(const std::string& variant);
// Sets the model, solver and warm start a variant names; throws InputError, naming the grammar,
// for one that is not an explicit variant.
void ApplyExplicitVariant(const std::string& variant, ExplicitStepperOptions* options);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_
