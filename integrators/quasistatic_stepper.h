// Quasistatic time-stepping: bodies in force balance at the end of every step, driven by
// commanded actuator positions. Three models of the same system, each one complementarity
// problem per step in the generalized displacement delta = q+ - q (Trinkle, Berard & Pang 2005 eq.
// 19) and the contact forces (N):
//
//   dqc     Model-DQC (Trinkle, Berard & Pang 2005 eqs. 1, 20-23): quadratic friction cones; a
//   mixed NCP of size
//           n_v + 4 n_c (n_v + 3 n_c when planar), solved by an MCP solver (fb-newton, ...).
//   dlc     Model-DLC (Trinkle, Berard & Pang 2005 eqs. 24-26): friction pyramid with n_d
//   directions; a mixed LCP
//           of size n_v + (2 + n_d) n_c.
//   qp      the convex quasistatic QP (Pang & Tedrake 2021 eq. 10) with Anitescu's relaxed
//   friction,
//           through its KKT conditions: a mixed LCP of size n_v + n_d n_c in (delta, beta).
//   qp-lcp  the same QP after eliminating delta with a sparse Cholesky factorization of the
//           stiffness: an LCP in beta with the Delassus matrix A K^-1 A^T.
//
// The force balance (actuators as impedances, the regularization eps) is
// dynamics/quasistatic_balance.h; the contact points, friction frames and every model's rows
// are contact/linearized_contact.h. This stepper assembles them into the step's problem,
// solves it and moves the bodies.
#ifndef NCPKIT_INTEGRATORS_QUASISTATIC_STEPPER_H_
#define NCPKIT_INTEGRATORS_QUASISTATIC_STEPPER_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_law.h"
#include "contact/distance.h"
#include "contact/linearized_contact.h"
#include "dynamics/actuators.h"
#include "dynamics/body.h"
#include "dynamics/quasistatic_balance.h"
#include "integrators/stepper.h"
#include "integrators/stepper_registry.h"
#include "integrators/worker_pool.h"
#include "solvers/base/status.h"
#include "solvers/lcp/independent_blocks.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/linalg/internal/sparse_assembly.h"

namespace ncpkit {

class ComplementaritySolver;
class MixedComplementarityProblem;
class ProximalPointSolver;
class SparseCholesky;

enum class QuasistaticModel { Dqc, Dlc, Qp, QpLcp };
const char* ToString(QuasistaticModel model);
bool ParseQuasistaticModel(const std::string& name, QuasistaticModel* model);

// Every option: meaning, default, units, valid range and source. IsValid() says which one is
// out of range; the stepper's constructor throws InputError for it (RequireValidOptions).
// The shared settings (StepperSettings): h by Trinkle, Berard & Pang 2005 eq. 19; solver a
// registry name taking ProblemKind::Mixed for dqc, Linear for the others, default "lemke";
// max_iterations default 0, the solver's own (dqc: 100 Newton iterations); warm_start when the
// sizes match.
struct QuasistaticOptions : StepperSettings {
  QuasistaticOptions() { solver = "lemke"; }
  // The step's contact model (see the top of this file). Default qp-lcp.
  QuasistaticModel model = QuasistaticModel::QpLcp;
  // Contact selection A(q, eps) of Pang & Tedrake 2021: pairs closer than this enter the step (m).
  // Default 0.01; >= 0.
  double contact_threshold = 0.01;
  // Friction directions per contact in 3D (Trinkle, Berard & Pang 2005 n_d). Default 4; in [3,
  // 256]. Planar scenes use 2.
  int friction_directions = 4;
  // eps of the regularization 1/2 eps v_u^T M_u v_u (dimensionless;
  // dynamics/quasistatic_balance.h). Default 1e-3; >= 0, finite; 0 gives the papers' models
  // exactly (qp-lcp then needs every body actuated).
  double regularization = 1e-3;
  // Planar scenes: the normal of the plane of motion; contact tangents then lie in the plane
  // and there is one tangent direction per contact. Default zero: 3D.
  Eigen::Vector3d plane_normal = Eigen::Vector3d::Zero();
  // Linear models: when the solver fails on the step's LCP, proximal-point iterations on it
  // (solvers/registry/proximal_point.h, Rockafellar 1976) with gamma = this * (largest dual
  // diagonal); each iterate is checked against the original problem, so the answer is not changed,
  // only found. Default 1e-3 (dimensionless); >= 0; 0 disables.
  double proximal_regularization = 1e-3;
  // Most regularized problems per step. Default 30; >= 0.
  int max_proximal_iterations = 30;
  bool IsValid(std::string* why) const;
};

struct QuasistaticContactRecord {
  int body_a = -1, body_b = -1;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // on A, at the start of the step
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();  // from A to B
  double distance = 0.0;                             // signed distance at the start of the step (m)
  double distance_after = 0.0;  // linearized at the end of the step: phi + J delta
  double normal_force = 0.0;    // N, on B along the normal
  Eigen::Vector3d friction_force = Eigen::Vector3d::Zero();  // N, on B
};

struct QuasistaticStepRecord : StepRecord {
  int proximal_iterations = 0;  // regularized problems solved (0: the plain one sufficed)
  // attempts (StepRecord): 1 solved from the warm start (or cold); 2 a cold restart was
  // needed; 3 (dqc) the start from the step's DLC solution was needed.
  std::vector<QuasistaticContactRecord> contacts;
};

class QuasistaticStepper : public Stepper {
 public:
  // Throws InputError for invalid options, bodies, actuators or laws, an unknown solver for
  // the model, an unsupported pair of shapes, or qp-lcp without regularization while some
  // body is unactuated. The pairs' friction coefficients come from `laws` (mu).
  QuasistaticStepper(std::vector<Body> bodies, const ContactLawTable& laws,
                     std::vector<Actuator> actuators, const QuasistaticOptions& options);
  ~QuasistaticStepper() override;

  // One step from time() to time() + h(); no applied impulses (InputError otherwise). A step
  // that did not converge moves the bodies only if its best point's natural residual is
  // below 1e-4; otherwise nothing moves.
  const QuasistaticStepRecord& Step() { return DoStep(nullptr); }
  const QuasistaticStepRecord& Step(const std::vector<Vector6d>& applied_impulses) override;
  // The same from `initial_guess` instead of the warm start (the step's problem size).
  const QuasistaticStepRecord& StepFrom(const Eigen::VectorXd& initial_guess);

  double time() const override { return time_; }
  double h() const override { return options_.h; }
  const std::vector<Body>& bodies() const override { return bodies_; }
  const std::vector<Actuator>& actuators() const override { return actuators_; }
  // The step's solver (linear models: the first island's; each island has its own).
  const ComplementaritySolver& solver() const override;
  std::string variant() const override;
  bool has_velocities() const override { return false; }
  // The last step's derivative (integrators/quasistatic_derivative.h): the qp, qp-lcp and dlc
  // models with prismatic actuators. Throws InputError before a step, after an unsolved one, or
  // for the dqc model.
  std::unique_ptr<StepDerivative> LastStepDerivative() const override;
  // The bodies' poses, the actuators' positions, the time and the warm start: the steps after
  // Restore() are those that followed Save(), bit for bit.
  std::unique_ptr<StepperSnapshot> Save() const override;
  void Restore(const StepperSnapshot& snapshot) override;
  Eigen::Vector3d gravity() const override { return options_.gravity; }
  const std::vector<const char*>& PairColumns() const override;
  void TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const override;
  void ContactMarkers(const StepRecord& record, std::vector<ContactMarker>* markers) const override;

  const QuasistaticOptions& options() const { return options_; }
  const std::vector<double>& actuator_positions() const { return q_actuated_; }
  // The symbolic analyses of the stiffness's Cholesky factorization so far (qp-lcp).
  int cholesky_analyses() const;
  // Number of unknown displacements n_v, for tests.
  int num_coordinates() const { return balance_.size(); }
  // The last step's problem solution (delta first).
  const Eigen::VectorXd& last_solution() const { return solution_; }
  // The Model-DQC problem of the next step at the current state (what Step() solves with the
  // dqc model), for derivative checks. Uses the step workspace; the state does not change.
  std::unique_ptr<MixedComplementarityProblem> DqcProblem();
  // Replaces the contact geometry (default: ExplicitContactGeometry).
  void set_contact_geometry(std::shared_ptr<const ContactGeometry> geometry);

 private:
  void ReadFriction(const ContactLawTable& laws);
  void CheckContactPairs() const;
  // The model's solver under proximal-point iterations, and for dqc the Lemke start.
  void CreateSolvers();
  const QuasistaticStepRecord& DoStep(const Eigen::VectorXd* initial_guess);
  void UpdateActuatedPoses();
  void AssembleStep();
  bool StartFrom(int size, const Eigen::VectorXd* initial_guess);
  // A linear model's problem, island by island (its independent blocks) unless options.islands
  // is false; the step's summary aggregates the islands'.
  void SolveLinear(const LinearComplementarityProblem& problem,
                   const Eigen::VectorXd* initial_guess);
  struct LinearIsland;
  std::unique_ptr<LinearIsland> MakeLinearIsland() const;
  void SolveIsland(const LinearComplementarityProblem& problem, bool warm, LinearIsland* island);
  void SolveAsOne(const LinearComplementarityProblem& problem, bool warm);
  void StepDlc(const Eigen::VectorXd* initial_guess);
  void StepQp(const Eigen::VectorXd* initial_guess);
  void StepQpLcp(const Eigen::VectorXd* initial_guess);
  void StepDqc(const Eigen::VectorXd* initial_guess);
  void ReadAnitescuForces(const std::vector<int>& first, const Eigen::VectorXd& beta);
  bool DqcStartFromDlc(const MixedComplementarityProblem& problem, Eigen::VectorXd* start);
  void FinishStep(double seconds);

  std::vector<Body> bodies_;
  std::vector<Actuator> actuators_;
  QuasistaticOptions options_;
  // Per body: moved by an actuator, its pose at actuator positions 0; per ordered pair of
  // bodies (a * n + b): the friction coefficient.
  std::vector<char> actuated_;
  std::vector<RigidBodyState> base_pose_;
  std::vector<double> friction_;
  std::shared_ptr<const ContactGeometry> geometry_;
  QuasistaticBalance balance_;
  // dqc: the step's solver, kept for every step, and Lemke with the proximal-point method for
  // its DLC start. Linear models: per island of the step (k-th island, k-th entry), the step's
  // solver wrapped in the proximal-point method, the storage of the island's problem and its
  // result. Island k is always solved by its own solver, whichever thread takes it, so the
  // result is the same for any number of threads, and a solver keeps its workspace's size
  // while its island does.
  std::unique_ptr<ComplementaritySolver> solver_;
  std::unique_ptr<ComplementaritySolver> dlc_solver_;
  std::unique_ptr<ProximalPointSolver> dlc_proximal_;
  struct LinearIsland {
    std::unique_ptr<ComplementaritySolver> solver;
    std::unique_ptr<ProximalPointSolver> proximal;
    IndependentBlocks::Storage storage;
    LinearComplementarityProblem problem;
    SolverSummary summary;
    int attempts = 0, proximal_iterations = 0;
    Eigen::VectorXd z;
  };
  std::vector<std::unique_ptr<LinearIsland>> islands_;
  std::unique_ptr<LinearIsland> whole_;  // the step's problem as one, after an unsolved island
  Eigen::VectorXd start_;                // the step's warm start
  IndependentBlocks blocks_;
  std::unique_ptr<internal::WorkerPool> pool_;
  std::unique_ptr<SparseCholesky> cholesky_;  // qp-lcp: the stiffness, analyzed once
  std::vector<double> q_actuated_;
  double time_ = 0.0;
  // For the last step's derivative: the laws, the bodies' poses and the actuators' positions at
  // the step's start, and whether a step was taken.
  ContactLawTable law_table_;
  std::vector<RigidBodyState> start_states_;
  std::vector<double> start_q_;
  bool derivable_ = false;
  Eigen::VectorXd solution_;
  QuasistaticStepRecord record_;
  // The step's workspace: contacts, stiffness K~, normal rows, the problem's point, and what
  // the solution says (delta, per contact normal force and friction force).
  std::vector<ContactPoint> points_;
  std::vector<LinearizedContact> contacts_;
  Eigen::SparseMatrix<double> stiffness_;
  internal::TripletAssembly<Eigen::SparseMatrix<double>> stiffness_assembly_;
  ContactRows normal_, anitescu_;
  std::vector<int> first_row_;  // per contact: its first row of anitescu_
  // qp-lcp: A^T, K~^-1 A^T, A by columns, the Delassus matrix W, the free motion K~^-1 r,
  // the LCP's q, the problem, and the product's workspace.
  Eigen::SparseMatrix<double> At_, X_, A_columns_, W_;
  Eigen::VectorXd free_motion_, q_lcp_;
  LinearComplementarityProblem lcp_;
  std::vector<char> product_mask_;
  std::vector<double> product_values_;
  std::vector<int> product_rows_;
  Eigen::VectorXd z_, delta_, after_;
  std::vector<double> normal_force_;
  std::vector<Eigen::Vector3d> friction_force_;
};

// The quasistatic stepper's row in the stepper registry: its configuration with the default
// options. Scene-file keys: the shared settings (h optional) and "model", "contact_threshold",
// "friction_directions", "regularization", "plane_normal".
std::unique_ptr<StepperConfig> MakeQuasistaticConfig();

// The quasistatic variants "<model>/<solver>[-cold]": model dqc (solvers taking
// ProblemKind::Mixed) or dlc, qp, qp-lcp (ProblemKind::Linear), e.g. "qp-lcp/lemke".
bool IsQuasistaticVariant(const std::string& variant);
// Sets the model, solver and warm start a variant names; throws InputError, naming the grammar,
// for one that is not a quasistatic variant.
void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_QUASISTATIC_STEPPER_H_
