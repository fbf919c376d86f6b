// The explicit velocity-level time-stepper (Stewart & Trinkle; Anitescu & Potra): contact points,
// normals and gaps from the explicit distances at the start of the step, then one
// complementarity problem in the step's contact impulses, in one of three friction models, or
// no problem at all with soft contact (the contact modelling notes):
//
//   cone     Coulomb cones: a frictional contact problem in FCLib's global form (one block of M
//            per moving body, H = J^T), for nsgs-velocity and, through its local form
//            W = J M^-1 J^T, every friction solver (nsgs, fc-newton, fc-proximal, auto, ...);
//            3 unknowns per contact, handed to the solver highest first along gravity.
//   pyramid  Stewart-Trinkle's linearized cone with n_d directions: an LCP in (lambda_n, beta,
//            gamma), 2 + n_d unknowns per contact, for Lemke and the Newton methods (its gamma
//            rows have a zero diagonal, which PGS cannot take).
//   relaxed  Anitescu's relaxed cone: the KKT conditions of a convex QP in the velocities,
//            posed as an LCP in the pyramid's edge impulses beta (n_d per contact) with the
//            symmetric positive semidefinite matrix G^T J M^-1 J^T G; for Lemke, PGS and the
//            Newton methods. Sliding contacts separate at mu |v_T| (the relaxation's known
//            artefact); the end-of-step velocities are unique.
//   soft     the contact modelling notes' spring-damper contact: F = K_p (r_c - r_c0) + K_d r_c' at
//   every
//            overlapping contact point, the anchor r_c0 kept from the step the contact began and
//            dragged along when the tangential force would leave the Coulomb cone. Forces from
//            the start of the step (semi-implicit Euler): stable while h sqrt(K_p / m) < 2 and
//            h K_d r^2 / I < 2 for every body (r: contact arm, I: its inertia; a small box's yaw
//            is the first to oscillate from step to step).
//
// The formulation ODE, Bullet, MuJoCo and Siconos use for dynamic scenes, beside the implicit
// ECP stepper of Xie & Chakraborty 2016.
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
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/registry/proximal_point.h"
#include "solvers/registry/solver_registry.h"
#include "solvers/linalg/internal/sparse_assembly.h"

namespace ncpkit {

enum class ExplicitModel { Cone, Pyramid, Relaxed, Soft };
// "cone", "pyramid", "relaxed", "soft".
const char* ToString(ExplicitModel model);
bool ParseExplicitModel(const std::string& name, ExplicitModel* model);

struct ExplicitStepperOptions {
  double h = 0.01;                             // time step (s); > 0
  Eigen::Vector3d gravity = DefaultGravity();  // m/s^2, world frame
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
  // A registry solver taking the model's problem: ProblemKind::GlobalFriction for cone, Linear for
  // pyramid and relaxed (unused by soft), and its options (tolerance: the FCLib error for cone,
  // the natural residual of the LCP otherwise).
  std::string solver = "auto";
  SolverOptions solver_options;
  // Start each step's solve from the previous step's impulses, matched by pair and contact
  // point (within the margin). Default true.
  bool warm_start = true;
  // Newton restitution (ContactLaw::restitution = e > 0): a contact approaching faster than
  // this (m/s) at the start of a step that would close it leaves at e times that speed, from
  // where it is (the gap of that step stays open). Slower approaches are inelastic, so resting
  // contacts do not chatter. Default 0.01; >= 0.
  double restitution_velocity = 0.01;
  // Pyramid and relaxed models: when the solver fails on the step's LCP (redundant contacts
  // make it singular), proximal-point iterations on it (solvers/registry/proximal_point.h) with this
  // relative regularization, each iterate checked against the original problem; then the same
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
};

// One contact of a step, in the world frame: B's reaction impulse is r_N n + r_T (A gets the
// opposite), the gap is the start-of-step signed distance.
struct ExplicitContact {
  int body_a = -1, body_b = -1;
  ContactPoint point;
  Eigen::Vector3d tangent1 = Eigen::Vector3d::UnitX(), tangent2 = Eigen::Vector3d::UnitY();
  Eigen::Vector3d impulse = Eigen::Vector3d::Zero();  // [r_N, r_T1, r_T2] (N s)
  // Soft contact: the tangential offset of B's contact point from its anchor (world, m).
  Eigen::Vector3d anchor_offset = Eigen::Vector3d::Zero();
  // The contact point in the frame of B (of A when B is fixed) at the start of the step: warm
  // starts match contacts of a pair by it.
  Eigen::Vector3d anchor_point = Eigen::Vector3d::Zero();
};

struct ExplicitStepRecord : StepRecord {
  std::vector<ExplicitContact> contacts;
};

// Steps the bodies: free velocities nu_f = nu + h M^-1 (m g, -omega x I omega); the contacts of
// the pairs within the margin plus both bodies' reach; M nu+ = M nu_f + J^T r, u = J nu+ +
// [phi / h, 0, 0] per contact with r solving the cone complementarity (or the model's LCP);
// where the impulses sped a body beyond half the margin, its pairs are searched again and the
// step solved again if a new contact would close; poses by the exact rotation update.
// max_penetration is the deepest start-of-step overlap. A step whose problem is not solved
// applies the best impulses found and says so in its summary. Bodies are validated as for the
// implicit stepper (ValidateBodies, dynamic).
class ExplicitStepper : public Stepper {
 public:
  // Each pair's Coulomb coefficient is laws.Get(a, b).mu and its restitution coefficient
  // laws.Get(a, b).restitution (the other fields of the law are the implicit stepper's).
  // Throws InputError for invalid options, bodies or laws, a solver that does not take the
  // model's problem, or a pair of shapes without an explicit distance.
  ExplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                  const ExplicitStepperOptions& options);

  const StepRecord& Step(const std::vector<Vector6d>& applied_impulses) override;
  using Stepper::Step;
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
  const ExplicitStepRecord& record() const { return record_; }

 private:
  void ComputeReach();
  // The contacts of the pairs the broad phase keeps into record_.contacts; `only_grown`: pairs
  // with neither body in grown_ take the first search's contacts from previous_.
  void FindContacts(bool only_grown = false);
  void AssembleAndSolve();
  void SolveCone();
  void ComputeDelassusBlocks();
  double NormalOffset(const ExplicitContact& contact, const Eigen::Matrix<double, 3, 6>& rows_a,
                      const Eigen::Matrix<double, 3, 6>& rows_b, const ContactLaw& law) const;
  bool NewContactViolated(const std::vector<Vector6d>& end_velocity) const;
  void SolveLinear();
  void BuildGenerators();
  void AssembleLinear(int per_contact);
  void WarmStartLinear(int c, int per_contact, const Eigen::Vector3d& r);
  void ApplySoftForces();
  void Advance();
  // The previous step's contact of the same pair nearest to contact `index` in the moving
  // body's frame (ExplicitContact::anchor_point), within kMatchRadius of that body's bounding
  // radius, or null.
  const ExplicitContact* Previous(int index) const;
  // A quarter of the body's size: a box's corners are further apart, a rolling sphere's point
  // moves less in a step at a few metres a second.
  static constexpr double kMatchRadius = 0.25;
  // Contact searches of a step at most after the first (see Step()).
  static constexpr int kMaxReachPasses = 2;

  std::vector<Body> bodies_;
  ContactLawTable laws_;
  ExplicitStepperOptions options_;
  std::unique_ptr<ComplementaritySolver> solver_;
  std::unique_ptr<ProximalPointSolver> proximal_;  // pyramid, relaxed
  ExplicitContactGeometry geometry_;
  BroadPhase broad_phase_;
  std::vector<BoundingSphere> spheres_;
  std::vector<double> reach_;  // h (|v_f| + |omega_f| R) per body
  std::vector<char> grown_;    // bodies whose reach the impulses enlarged
  std::vector<Eigen::Matrix3d> rotations_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<ContactPoint> points_;
  std::vector<ExplicitContact> previous_;  // sorted by pair
  // Per contact of record_.contacts: the range of previous_ holding its pair's contacts.
  std::vector<std::pair<int, int>> previous_range_;
  // The step's Delassus blocks W_ij = J_i M^-1 J_j^T (3 x 3, contact frames), by block row,
  // and the contact-frame velocities J nu_f plus the normal offset b_N (phi / h or restitution).
  struct Block {
    int row, col;
    Eigen::Matrix3d value;
  };
  std::vector<Block> blocks_;
  Eigen::VectorXd contact_velocity_;
  std::vector<Eigen::Matrix<double, 3, 6>> rows_a_, rows_b_;
  LinearComplementarityProblem lcp_;
  GlobalFrictionContactProblem global_;
  std::vector<int> block_of_body_;  // global_'s block of each moving body, -1 for fixed ones
  std::vector<int> order_;          // the problem's contacts, highest first along gravity
  std::vector<std::pair<double, int>> ranked_;  // (-height against gravity, contact) to sort
  std::vector<Vector6d> body_impulse_;          // per body: J^T r summed over its contacts
  std::vector<double> normal_offset_;  // b_N per contact: phi / h, or the restitution target
  // Step-to-step storage: the triplets of W (or the LCP's matrix) and their assembly, which
  // writes into the last pattern when the contacts did not change.
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> matrix_;
  internal::TripletAssembly<Eigen::SparseMatrix<double>> assembly_;
  std::vector<Eigen::Matrix<double, 3, Eigen::Dynamic>> generators_;
  Eigen::VectorXd z_, q_, mu_;
  std::vector<std::vector<std::pair<int, int>>> by_body_;
  std::vector<Eigen::Matrix<double, 6, 6>> inverse_mass_, mass_matrix_;  // zero for fixed bodies
  std::vector<Vector6d> free_velocity_;  // the free velocities, then the end-of-step ones
  std::vector<Vector6d> start_velocity_, end_velocity_;  // the free ones kept; a pass's end ones
  Eigen::VectorXd r_;
  ExplicitStepRecord record_;
  double time_ = 0.0;
};

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_STEPPER_H_
