#include "integrators/quasistatic_stepper.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "integrators/islands.h"
#include "integrators/json_reader.h"
#include "integrators/limits.h"
#include "integrators/quasistatic_derivative.h"
#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/enum_names.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/linalg/internal/sparse_assembly.h"
#include "solvers/linalg/sparse_cholesky.h"
#include "solvers/mcp/mcp.h"
#include "solvers/registry/proximal_point.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;
using Triplet = Eigen::Triplet<double>;
// Natural residual below which a step's unconverged best iterate is still applied.
constexpr double kUsableResidual = 1e-4;

using internal::NumberText;

// Adds the entries of J at (offset + i, k) and of -J^T at (k, offset + i): a contact model's
// rows and their forces in the force balance.
void AddCoupling(const RowMajorSparse& J, int offset, std::vector<Triplet>* t) {
  for (int i = 0; i < J.outerSize(); ++i) {
    for (RowMajorSparse::InnerIterator it(J, i); it; ++it) {
      t->emplace_back(offset + i, it.col(), it.value());
      t->emplace_back(it.col(), offset + i, -it.value());
    }
  }
}

// The step's mixed LCP: the first n unknowns (the displacements) free, the rest >= 0.
LinearComplementarityProblem MixedProblem(const std::vector<Triplet>& triplets,
                                          const Eigen::VectorXd& q, int n, const char* name) {
  const int size = static_cast<int>(q.size());
  Eigen::SparseMatrix<double> M(size, size);
  M.setFromTriplets(triplets.begin(), triplets.end());
  Eigen::VectorXd l = Eigen::VectorXd::Zero(size);
  l.head(n).setConstant(-kInf);
  LinearComplementarityProblem problem(M, q, l, Eigen::VectorXd::Constant(size, kInf));
  problem.name = name;
  return problem;
}

// The convex QP's KKT conditions (Pang & Tedrake 2021 eq. 10) as the mixed LCP in (delta, beta):
// K~ delta - A^T beta - r free, A delta + c >= 0 _|_ beta >= 0, A Anitescu's rows.
LinearComplementarityProblem QpProblem(const QuasistaticBalance& balance,
                                       const ContactRows& anitescu) {
  const int n = balance.size();
  std::vector<Triplet> t = balance.stiffness();
  AddCoupling(anitescu.J, n, &t);
  Eigen::VectorXd q(n + anitescu.constant.size());
  q << -balance.force(), anitescu.constant;
  return MixedProblem(t, q, n, "qp");
}

// Model-DQC (Trinkle, Berard & Pang 2005 eqs. 1, 20-23) in delta and per contact [lambda_n,
// lambda_t, (lambda_o), sigma] (frictionless contacts: lambda_n only):
//   F_delta = K~ delta - Jn^T ln - Jt^T lt - Jo^T lo - r                    (free)
//   F_n     = Jn delta + cn                                                  (ln >= 0)
//   F_t, F_o, F_sigma: the cone rows (DqcCone)                               (free, sigma >= 0)
// sigma is the slip distance over the step (Trinkle, Berard & Pang's (2005) sigma h).
class QuasistaticNcp : public MixedComplementarityProblem {
 public:
  QuasistaticNcp(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                 const std::vector<Body>& bodies, const Eigen::SparseMatrix<double>& stiffness,
                 const ContactRows& normal)
      : stiffness_(stiffness), normal_(normal), force_(balance.force()), n_(balance.size()) {
    TangentRows(contacts, balance, bodies, 0, &tangent_);
    TangentRows(contacts, balance, bodies, 1, &other_);
    const int nc = static_cast<int>(contacts.size());
    index_.assign(nc, {-1, -1, -1, -1});
    mu_.resize(nc);
    int k = n_;
    for (int i = 0; i < nc; ++i) {
      mu_[i] = contacts[i].mu;
      index_[i][0] = k++;
      if (contacts[i].num_tangents >= 1) index_[i][1] = k++;
      if (contacts[i].num_tangents == 2) index_[i][2] = k++;
      if (contacts[i].num_tangents >= 1) index_[i][3] = k++;
    }
    lower_ = Eigen::VectorXd::Constant(k, -kInf);
    upper_ = Eigen::VectorXd::Constant(k, kInf);
    for (int i = 0; i < nc; ++i) {
      lower_[index_[i][0]] = 0.0;
      if (index_[i][3] >= 0) lower_[index_[i][3]] = 0.0;
    }
    for (int i = 0; i < stiffness_.outerSize(); ++i) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(stiffness_, i); it; ++it) {
        stiffness_triplets_.emplace_back(it.row(), it.col(), it.value());
      }
    }
  }
  int size() const override { return static_cast<int>(lower_.size()); }
  const Eigen::VectorXd& lower() const override { return lower_; }
  const Eigen::VectorXd& upper() const override { return upper_; }
  std::string name() const override { return "dqc"; }
  const std::vector<std::array<int, 4>>& index() const { return index_; }
  // Tangential displacement (along t, o) of contact i for the step's displacement delta.
  Eigen::Vector2d Slip(const Eigen::VectorXd& delta, int i) const {
    return Eigen::Vector2d(tangent_.J.row(i).dot(delta) + tangent_.constant[i],
                           other_.J.row(i).dot(delta) + other_.constant[i]);
  }

  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    const int nc = static_cast<int>(mu_.size());
    const auto delta = z.head(n_);
    Eigen::VectorXd ln = Eigen::VectorXd::Zero(nc), lt = ln, lo = ln;
    for (int i = 0; i < nc; ++i) {
      ln[i] = z[index_[i][0]];
      if (index_[i][1] >= 0) lt[i] = z[index_[i][1]];
      if (index_[i][2] >= 0) lo[i] = z[index_[i][2]];
    }
    const Eigen::VectorXd gn = normal_.J * delta + normal_.constant;
    const Eigen::VectorXd gt = tangent_.J * delta + tangent_.constant;
    const Eigen::VectorXd go = other_.J * delta + other_.constant;
    F->resize(size());
    F->head(n_) = stiffness_ * delta - normal_.J.transpose() * ln - tangent_.J.transpose() * lt -
                  other_.J.transpose() * lo - force_;
    for (int i = 0; i < nc; ++i) {
      const auto& idx = index_[i];
      (*F)[idx[0]] = gn[i];
      if (idx[3] < 0) continue;
      const DqcConeRows cone = DqcCone(mu_[i], ln[i], lt[i], lo[i], z[idx[3]], gt[i], go[i]);
      (*F)[idx[1]] = cone.t;
      if (idx[2] >= 0) (*F)[idx[2]] = cone.o;
      (*F)[idx[3]] = cone.sigma;
    }
    if (!F->allFinite()) return false;
    if (J == nullptr) return true;
    std::vector<Triplet> t = stiffness_triplets_;
    Couple(normal_.J, 0, ln, &t);
    Couple(tangent_.J, 1, ln, &t);
    Couple(other_.J, 2, ln, &t);
    for (int i = 0; i < nc; ++i) {
      const auto& idx = index_[i];
      if (idx[3] < 0) continue;
      const DqcConeJacobian d =
          DqcConeDerivatives(mu_[i], ln[i], lt[i], lo[i], z[idx[3]], gt[i], go[i]);
      t.emplace_back(idx[1], idx[0], d.t_ln);
      t.emplace_back(idx[1], idx[1], d.t_lt);
      t.emplace_back(idx[1], idx[3], d.t_sigma);
      if (idx[2] >= 0) {
        t.emplace_back(idx[2], idx[0], d.o_ln);
        t.emplace_back(idx[2], idx[2], d.o_lo);
        t.emplace_back(idx[2], idx[3], d.o_sigma);
        t.emplace_back(idx[3], idx[2], d.sigma_lo);
      }
      t.emplace_back(idx[3], idx[0], d.sigma_ln);
      t.emplace_back(idx[3], idx[1], d.sigma_lt);
    }
    J->resize(size(), size());
    J->setFromTriplets(t.begin(), t.end());
    return true;
  }

 private:
  // The force of contact rows `rows` (which: 0 normal, 1 t, 2 o) in the balance, and the rows'
  // derivative in delta: Jn for the normal rows, mu ln Jt and mu ln Jo for the cone rows.
  void Couple(const RowMajorSparse& rows, int which, const Eigen::VectorXd& ln,
              std::vector<Triplet>* t) const {
    for (int i = 0; i < static_cast<int>(mu_.size()); ++i) {
      const int col = index_[i][which];
      if (col < 0) continue;
      for (RowMajorSparse::InnerIterator it(rows, i); it; ++it) {
        t->emplace_back(it.col(), col, -it.value());
        t->emplace_back(col, it.col(), which == 0 ? it.value() : mu_[i] * ln[i] * it.value());
      }
    }
  }

  Eigen::SparseMatrix<double> stiffness_;
  std::vector<Triplet> stiffness_triplets_;
  ContactRows normal_;
  ContactRows tangent_, other_;
  Eigen::VectorXd force_;
  int n_;
  std::vector<std::array<int, 4>> index_;
  std::vector<double> mu_;
  Eigen::VectorXd lower_, upper_;
};

// The step's Model-DLC (Trinkle, Berard & Pang 2005 eqs. 24-26): unknowns [delta, c_n, the
// pyramid's direction forces, sigma per frictional contact], and where each contact's unknowns are.
struct DlcStep {
  LinearComplementarityProblem problem;
  std::vector<int> first;  // per contact: its first direction force, -1 if frictionless
  int normal_offset = 0, friction_offset = 0;
};

DlcStep MakeDlcStep(const std::vector<LinearizedContact>& contacts,
                    const QuasistaticBalance& balance, const std::vector<Body>& bodies,
                    const ContactRows& normal) {
  const int n = balance.size();
  const int nc = static_cast<int>(contacts.size());
  std::vector<int> first;
  ContactRows f;
  PyramidRows(contacts, balance, bodies, &first, &f);
  const int nf = static_cast<int>(f.constant.size());
  int ns = 0;
  for (int i = 0; i < nc; ++i) ns += first[i] >= 0 ? 1 : 0;
  const int on = n, of = n + nc, os = n + nc + nf, size = os + ns;
  std::vector<Triplet> t = balance.stiffness();
  AddCoupling(normal.J, on, &t);
  AddCoupling(f.J, of, &t);
  for (int i = 0, slack = os; i < nc; ++i) {
    if (first[i] >= 0) AddPyramidSlack(contacts[i], first[i], of, slack++, on + i, &t);
  }
  Eigen::VectorXd q = Eigen::VectorXd::Zero(size);
  q.head(n) = -balance.force();
  q.segment(on, nc) = normal.constant;
  q.segment(of, nf) = f.constant;
  return {MixedProblem(t, q, n, "dlc"), first, on, of};
}

// delta, the normal forces and the friction force vectors of a DLC solution z.
void ReadDlcSolution(const DlcStep& dlc, const std::vector<LinearizedContact>& contacts,
                     const Eigen::VectorXd& z, Eigen::VectorXd* delta,
                     std::vector<double>* normal_force, std::vector<Vector3d>* friction) {
  *delta = z.head(dlc.normal_offset);
  for (size_t i = 0; i < contacts.size(); ++i) {
    (*normal_force)[i] = z[dlc.normal_offset + i];
    if (dlc.first[i] < 0) continue;
    for (size_t j = 0; j < contacts[i].directions.size(); ++j) {
      (*friction)[i] += z[dlc.friction_offset + dlc.first[i] + j] * contacts[i].directions[j];
    }
  }
}

}  // namespace

namespace {
constexpr internal::EnumName<QuasistaticModel> kQuasistaticModelNames[] = {
    {QuasistaticModel::Dqc, "dqc"},
    {QuasistaticModel::Dlc, "dlc"},
    {QuasistaticModel::Qp, "qp"},
    {QuasistaticModel::QpLcp, "qp-lcp"}};
}  // namespace

const char* ToString(QuasistaticModel model) {
  return internal::NameIn(kQuasistaticModelNames, model);
}

bool ParseQuasistaticModel(const std::string& name, QuasistaticModel* model) {
  return internal::ValueIn(kQuasistaticModelNames, name, model);
}

bool QuasistaticOptions::IsValid(std::string* why) const {
  const ProblemKind kind =
      model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear;
  return Check()
      .Require(std::isfinite(contact_threshold) && contact_threshold >= 0.0, "contact_threshold",
               contact_threshold, "must be >= 0 and finite")
      .Require(friction_directions >= 3 && friction_directions <= kMaxFrictionDirections,
               "friction_directions", friction_directions,
               ("must be in [3, " + std::to_string(kMaxFrictionDirections) + "]").c_str())
      .Require(std::isfinite(regularization) && regularization >= 0.0, "regularization",
               regularization, "must be >= 0 and finite")
      .Require(std::isfinite(proximal_regularization) && proximal_regularization >= 0.0,
               "proximal_regularization", proximal_regularization, "must be >= 0 and finite")
      .Require(max_proximal_iterations >= 0, "max_proximal_iterations", max_proximal_iterations,
               "must be >= 0")
      .Require(plane_normal.allFinite(), "plane_normal", plane_normal.norm(), "must be finite")
      .Require(IsSolverName(solver, kind), "unknown solver '" + solver + "' for the " +
                                               ToString(model) + " model (expected one of " +
                                               SolverNameList(kind) + ")")
      .Done(why);
}

QuasistaticStepper::QuasistaticStepper(std::vector<Body> scene_bodies, const ContactLawTable& laws,
                                       std::vector<Actuator> scene_actuators,
                                       const QuasistaticOptions& options)
    : bodies_(std::move(scene_bodies)),
      options_(options),
      geometry_(std::make_shared<ExplicitContactGeometry>()) {
  RequireValidOptions(options_, "quasistatic");
  ValidateBodies(bodies_, /*dynamic=*/false);
  for (Actuator& actuator : scene_actuators) {
    ValidateActuator(bodies_, actuators_, &actuator);
    actuators_.push_back(actuator);
  }
  const int nb = static_cast<int>(bodies_.size());
  actuated_ = ActuatedBodies(nb, actuators_);
  ReadFriction(laws);
  law_table_ = laws;
  for (const Body& body : bodies_) base_pose_.push_back(body.state);
  balance_ = QuasistaticBalance(bodies_, actuated_, actuators_);
  for (const Actuator& actuator : actuators_) q_actuated_.push_back(actuator.command(0.0));
  bool unactuated = false;
  for (int b = 0; b < nb; ++b) unactuated = unactuated || balance_.unactuated(b);
  if (options_.model == QuasistaticModel::QpLcp && unactuated && options_.regularization == 0.0) {
    throw InputError(
        "qp-lcp eliminates the displacements with a Cholesky factorization of the stiffness, "
        "which needs regularization > 0 when a body is unactuated");
  }
  CheckContactPairs();
  pool_ = std::make_unique<internal::WorkerPool>(options_.threads);
  CreateSolvers();
  cholesky_ = std::make_unique<SparseCholesky>();
  UpdateActuatedPoses();
}

QuasistaticStepper::~QuasistaticStepper() = default;

// The friction coefficient of every ordered pair of bodies.
void QuasistaticStepper::ReadFriction(const ContactLawTable& laws) {
  const int nb = static_cast<int>(bodies_.size());
  friction_.assign(nb * nb, 0.0);
  for (int a = 0; a < nb; ++a) {
    for (int b = 0; b < nb; ++b) {
      if (a == b) continue;
      const ContactLaw& law = laws.Get(bodies_[a].name, bodies_[b].name);
      if (!(law.mu >= 0.0) || !std::isfinite(law.mu)) {
        throw InputError("friction between '" + bodies_[a].name + "' and '" + bodies_[b].name +
                         "' must be >= 0, got " + NumberText(law.mu));
      }
      friction_[a * nb + b] = law.mu;
    }
  }
}

// Every pair that can enter a step's problem (FindLinearizedContacts) needs a contact model.
void QuasistaticStepper::CheckContactPairs() const {
  const int nb = static_cast<int>(bodies_.size());
  std::vector<bool> has_unknowns(nb, false);
  for (int b = 0; b < nb; ++b) has_unknowns[b] = balance_.unactuated(b);
  for (const Actuator& actuator : actuators_) {
    for (int b : actuator.bodies) has_unknowns[b] = has_unknowns[b] || !actuator.prescribed;
  }
  for (int b = 0; b < nb; ++b) {
    for (int c = b + 1; c < nb; ++c) {
      if (!has_unknowns[b] && !has_unknowns[c]) continue;
      if (actuated_[b] && actuated_[c]) continue;
      if (!geometry_->Supports(bodies_[b].shape.kind, bodies_[c].shape.kind)) {
        throw InputError("no explicit contact between '" + bodies_[b].name + "' (" +
                         bodies_[b].shape.Name() + ") and '" + bodies_[c].name + "' (" +
                         bodies_[c].shape.Name() + ")");
      }
    }
  }
}

namespace {

// The solvers' settings: the stepper's tolerance and iterations, started from the warm start
// Step() hands over (or an empty start), and the problem as built: the DQC's stiffness rows reach
// the equilibration spread, and equilibrated FB Newton failed the fence scene's first step, which
// it solves unscaled in 6 iterations.
SolverOptions QuasistaticSolverOptions(const QuasistaticOptions& options) {
  SolverOptions solver_options;
  solver_options.tolerance = options.tolerance;
  solver_options.max_iterations = options.max_iterations;
  solver_options.warm_start = true;
  solver_options.equilibrate = false;
  return solver_options;
}

ProximalPointSolver::Options QuasistaticProximalOptions(const QuasistaticOptions& options) {
  ProximalPointSolver::Options proximal;
  proximal.relative_regularization = options.proximal_regularization;
  proximal.max_outer_iterations = options.max_proximal_iterations;
  return proximal;
}

}  // namespace

void QuasistaticStepper::CreateSolvers() {
  if (options_.model != QuasistaticModel::Dqc) {
    islands_.push_back(MakeLinearIsland());
    return;
  }
  SolverOptions solver_options = QuasistaticSolverOptions(options_);
  SolverOptions dlc_options = solver_options;
  dlc_options.max_iterations = 0;
  dlc_solver_ = CreateSolver("lemke", ProblemKind::Linear, dlc_options);
  dlc_proximal_ = std::make_unique<ProximalPointSolver>(dlc_solver_.get(),
                                                        QuasistaticProximalOptions(options_));
  solver_options.max_iterations = options_.max_iterations > 0 ? options_.max_iterations : 100;
  solver_options.project_onto_bounds = true;
  solver_ = CreateSolver(options_.solver, ProblemKind::Mixed, solver_options);
}

std::unique_ptr<QuasistaticStepper::LinearIsland> QuasistaticStepper::MakeLinearIsland() const {
  auto island = std::make_unique<LinearIsland>();
  island->solver =
      CreateSolver(options_.solver, ProblemKind::Linear, QuasistaticSolverOptions(options_));
  island->proximal = std::make_unique<ProximalPointSolver>(island->solver.get(),
                                                           QuasistaticProximalOptions(options_));
  return island;
}

const ComplementaritySolver& QuasistaticStepper::solver() const {
  return solver_ ? *solver_ : *islands_.front()->solver;
}

void QuasistaticStepper::set_contact_geometry(std::shared_ptr<const ContactGeometry> geometry) {
  geometry_ = std::move(geometry);
}

void QuasistaticStepper::UpdateActuatedPoses() {
  for (size_t b = 0; b < bodies_.size(); ++b) {
    if (!actuated_[b]) continue;
    bodies_[b].state = ActuatedPose(actuators_, q_actuated_, static_cast<int>(b), base_pose_[b]);
  }
}

std::string QuasistaticStepper::variant() const {
  return SolverVariant{ToString(options_.model), options_.solver, !options_.warm_start}.ToString();
}

int QuasistaticStepper::cholesky_analyses() const { return cholesky_->symbolic_analyses(); }

const std::vector<const char*>& QuasistaticStepper::PairColumns() const {
  static const std::vector<const char*> kColumns = {"cn", "cf", "phi", "points"};
  return kColumns;
}

// Per pair with contact points: the sums of the normal forces and of the friction forces'
// magnitudes (N), the smallest linearized distance at the end of the step (m), the points.
void QuasistaticStepper::TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const {
  rows->clear();
  for (const QuasistaticContactRecord& c :
       dynamic_cast<const QuasistaticStepRecord&>(record).contacts) {
    auto row = std::find_if(rows->begin(), rows->end(), [&](const PairRow& r) {
      return r.body_a == c.body_a && r.body_b == c.body_b;
    });
    if (row == rows->end()) {
      PairRow fresh;
      fresh.body_a = c.body_a;
      fresh.body_b = c.body_b;
      fresh.values[2] = kInf;
      rows->push_back(fresh);
      row = rows->end() - 1;
    }
    row->values[0] += c.normal_force;
    row->values[1] += c.friction_force.norm();
    row->values[2] = std::min(row->values[2], c.distance_after);
    row->values[3] += 1.0;
  }
}

// One marker per contact point: on A at the start of the step, the normal from A to B.
void QuasistaticStepper::ContactMarkers(const StepRecord& record,
                                        std::vector<ContactMarker>* markers) const {
  markers->clear();
  for (const QuasistaticContactRecord& c :
       dynamic_cast<const QuasistaticStepRecord&>(record).contacts) {
    markers->push_back({c.point, c.normal, c.normal_force});
  }
}

// The step's force balance, contact points and normal rows at the current poses.
void QuasistaticStepper::AssembleStep() {
  balance_.Assemble(bodies_, actuators_, q_actuated_, time_ + options_.h, options_.h,
                    options_.gravity, options_.regularization);
  FindLinearizedContacts(bodies_, actuated_, balance_, *geometry_, friction_,
                         options_.contact_threshold, options_.plane_normal,
                         options_.friction_directions, &points_, &contacts_);
  const int n = balance_.size();
  stiffness_assembly_.Assemble(n, n, balance_.stiffness(), &stiffness_);
  NormalRows(contacts_, balance_, bodies_, &normal_);
  const size_t nc = contacts_.size();
  delta_.setZero(n);
  normal_force_.assign(nc, 0.0);
  friction_force_.assign(nc, Vector3d::Zero());
}

std::unique_ptr<MixedComplementarityProblem> QuasistaticStepper::DqcProblem() {
  AssembleStep();
  return std::make_unique<QuasistaticNcp>(contacts_, balance_, bodies_, stiffness_, normal_);
}

// Sets z_ to the start of a problem of `size` unknowns: the caller's guess, the last step's
// solution (warm start), or empty (the solver's cold start). True unless cold.
bool QuasistaticStepper::StartFrom(int size, const Eigen::VectorXd* initial_guess) {
  if (initial_guess != nullptr) {
    if (initial_guess->size() != size) {
      throw InputError("initial guess has size " + std::to_string(initial_guess->size()) +
                       ", the step's problem " + std::to_string(size));
    }
    z_ = *initial_guess;
    return true;
  }
  if (options_.warm_start && solution_.size() == size && solution_.allFinite()) {
    z_ = solution_;
    return true;
  }
  z_.resize(0);
  return false;
}

// One island's problem by the proximal-point method around its solver, from the warm start in
// island->z (when `warm`) and, if that fails, once more cold.
void QuasistaticStepper::SolveIsland(const LinearComplementarityProblem& problem, bool warm,
                                     LinearIsland* island) {
  ProximalPointSolver& proximal = *island->proximal;
  if (!warm) island->z.resize(0);
  island->attempts = 1;
  island->summary = proximal.Solve(problem, &island->z);
  island->proximal_iterations = proximal.summary().outer_iterations;
  if (!island->summary.IsSolved() && warm) {
    island->z.resize(0);
    island->attempts = 2;
    island->summary = proximal.Solve(problem, &island->z);
    island->proximal_iterations = proximal.summary().outer_iterations;
  }
}

void QuasistaticStepper::SolveLinear(const LinearComplementarityProblem& problem,
                                     const Eigen::VectorXd* initial_guess) {
  QuasistaticStepRecord& record = record_;
  const bool warm = StartFrom(problem.size(), initial_guess);
  if (warm) start_ = z_;
  record.problem_size = problem.size();
  int islands = 1;
  if (options_.islands) {
    blocks_.Find(problem);
    islands = blocks_.num_blocks();
  }
  while (static_cast<int>(islands_.size()) < islands) islands_.push_back(MakeLinearIsland());
  auto solve = [&](int k, int /*worker*/) {
    LinearIsland& island = *islands_[k];
    if (!options_.islands) {
      if (warm) island.z = z_;
      SolveIsland(problem, warm, &island);
      return;
    }
    blocks_.Extract(problem, k, &island.storage, &island.problem);
    if (warm) blocks_.Gather(k, z_, &island.z);
    SolveIsland(island.problem, warm, &island);
  };
  pool_->Run(islands, solve);
  // The islands' solutions side by side, if every island has one.
  z_.resize(problem.size());
  record.attempts = record.proximal_iterations = 0;
  for (int k = 0; k < islands; ++k) {
    const LinearIsland& island = *islands_[k];
    record.attempts = std::max(record.attempts, island.attempts);
    record.proximal_iterations = std::max(record.proximal_iterations, island.proximal_iterations);
    const int size = options_.islands ? blocks_.block_size(k) : problem.size();
    if (island.z.size() != size) {
      z_.resize(0);
    } else if (z_.size() == problem.size()) {
      if (options_.islands) {
        blocks_.Scatter(k, island.z, &z_);
      } else {
        z_ = island.z;
      }
    }
  }
  record.islands = islands;
  record.failed_islands = internal::CombineIslandSummaries(
      islands, [&](int k) -> const SolverSummary& { return islands_[k]->summary; },
      &record.summary);
  if (record.failed_islands > 0 && islands > 1) SolveAsOne(problem, warm);
}

// After an unsolved island: the step's problem as one, from the same start. The models'
// solutions need not be unique (dlc's displacements are not), and a Newton solver's line search
// and stall test over the whole problem take another path than over one island, which on the
// stacking scene's dlc/fb-newton solved every step the islands left unsolved (208 of 900).
// Kept if it solves the problem or comes closer than the islands did.
void QuasistaticStepper::SolveAsOne(const LinearComplementarityProblem& problem, bool warm) {
  QuasistaticStepRecord& record = record_;
  if (!whole_) whole_ = MakeLinearIsland();
  if (warm) whole_->z = start_;
  SolveIsland(problem, warm, whole_.get());
  const SolverSummary& summary = whole_->summary;
  if (whole_->z.size() != problem.size() ||
      !(summary.IsSolved() || summary.natural_residual < record.summary.natural_residual)) {
    return;
  }
  const std::string islands_message = record.summary.message;
  record.summary = summary;
  record.summary.message +=
      (summary.IsSolved() ? "; solved as one problem after " : "; best as one problem after ") +
      islands_message;
  record.failed_islands = summary.IsSolved() ? 0 : record.islands;
  record.attempts = std::max(record.attempts, whole_->attempts);
  record.proximal_iterations = std::max(record.proximal_iterations, whole_->proximal_iterations);
  z_ = whole_->z;
}

void QuasistaticStepper::StepDlc(const Eigen::VectorXd* initial_guess) {
  const DlcStep dlc = MakeDlcStep(contacts_, balance_, bodies_, normal_);
  SolveLinear(dlc.problem, initial_guess);
  if (z_.size() == dlc.problem.size()) {
    ReadDlcSolution(dlc, contacts_, z_, &delta_, &normal_force_, &friction_force_);
  }
}

// The normal and friction forces of Anitescu's multipliers beta (Pang & Tedrake 2021 eq. 7).
void QuasistaticStepper::ReadAnitescuForces(const std::vector<int>& first,
                                            const Eigen::VectorXd& beta) {
  for (size_t i = 0; i < contacts_.size(); ++i) {
    const LinearizedContact& c = contacts_[i];
    if (c.directions.empty()) {
      normal_force_[i] = beta[first[i]];
      continue;
    }
    for (size_t j = 0; j < c.directions.size(); ++j) {
      normal_force_[i] += beta[first[i] + j];
      friction_force_[i] += c.mu * beta[first[i] + j] * c.directions[j];
    }
  }
}

void QuasistaticStepper::StepQp(const Eigen::VectorXd* initial_guess) {
  std::vector<int>& first = first_row_;
  AnitescuRows(contacts_, balance_, bodies_, &first, &anitescu_);
  const int n = balance_.size();
  const int size = n + static_cast<int>(anitescu_.constant.size());
  const LinearComplementarityProblem problem = QpProblem(balance_, anitescu_);
  SolveLinear(problem, initial_guess);
  if (z_.size() != size) return;
  delta_ = z_.head(n);
  ReadAnitescuForces(first, z_.tail(size - n));
}

// Eliminates delta = K~^-1 (A^T beta + r): the LCP in beta with the Delassus matrix.
void QuasistaticStepper::StepQpLcp(const Eigen::VectorXd* initial_guess) {
  std::vector<int>& first = first_row_;
  AnitescuRows(contacts_, balance_, bodies_, &first, &anitescu_);
  const ContactRows& A = anitescu_;
  const int nb = static_cast<int>(A.constant.size());
  SolverSummary& summary = record_.summary;
  SparseCholesky& cholesky = *cholesky_;
  cholesky.compute(stiffness_);
  if (cholesky.info() != Eigen::Success) {
    summary.solver = options_.solver;
    summary.status = Status::NumericalFailure;
    summary.message = "Cholesky factorization of the stiffness failed" + cholesky.messages();
    return;
  }
  if (nb == 0) {
    // No contact: the stiffness alone decides the step (an empty LCP, nothing to solve).
    cholesky.solveInto(balance_.force(), &delta_);
    summary.solver = options_.solver;
    summary.status = Status::Converged;
    summary.natural_residual = 0.0;
    summary.message = "no contact: the step is the stiffness solve alone" + cholesky.messages();
    z_.resize(0);
    return;
  }
  // W = A K~^-1 A^T and q = A K~^-1 r + c, into the step's storage.
  internal::TransposeInto(A.J, &At_);
  cholesky.solveInto(At_, &X_);
  internal::ConvertStorageOrder(A.J, &A_columns_);
  internal::SparseProductInto(A_columns_, X_, &W_, &product_mask_, &product_values_,
                              &product_rows_);
  cholesky.solveInto(balance_.force(), &free_motion_);
  // As Eigen evaluates A free_motion + c: c, plus each row's product sum.
  q_lcp_ = A.constant;
  q_lcp_.noalias() += A.J * free_motion_;
  if (!cholesky.messages().empty() || !q_lcp_.allFinite()) {
    summary.solver = options_.solver;
    summary.status = Status::NumericalFailure;
    summary.message = "the Delassus LCP could not be formed" + cholesky.messages();
  } else {
    lcp_.AssignLcp(W_, q_lcp_);
    lcp_.name = "qp-lcp";
    SolveLinear(lcp_, initial_guess);
  }
  if (z_.size() != nb) return;
  // As Eigen evaluates free_motion + X z: the products accumulate onto free_motion.
  delta_ = free_motion_;
  delta_.noalias() += X_ * z_;
  ReadAnitescuForces(first, z_);
}

// A start for the step's DQC problem from its DLC solution (Lemke, with the proximal
// fallback): delta and the forces as they are, sigma the length of each contact's slip.
bool QuasistaticStepper::DqcStartFromDlc(const MixedComplementarityProblem& mcp,
                                         Eigen::VectorXd* start) {
  const auto& problem = static_cast<const QuasistaticNcp&>(mcp);
  const int n = balance_.size();
  const int nc = static_cast<int>(contacts_.size());
  const DlcStep dlc = MakeDlcStep(contacts_, balance_, bodies_, normal_);
  Eigen::VectorXd x;
  const SolverSummary& summary = dlc_proximal_->Solve(dlc.problem, &x);
  if (!summary.IsSolved() || x.size() != dlc.problem.size()) return false;
  Eigen::VectorXd delta;
  std::vector<double> normal_force(nc, 0.0);
  std::vector<Vector3d> friction(nc, Vector3d::Zero());
  ReadDlcSolution(dlc, contacts_, x, &delta, &normal_force, &friction);
  *start = Eigen::VectorXd::Zero(problem.size());
  start->head(n) = delta;
  for (int i = 0; i < nc; ++i) {
    const auto& idx = problem.index()[i];
    (*start)[idx[0]] = normal_force[i];
    if (idx[1] >= 0) (*start)[idx[1]] = friction[i].dot(contacts_[i].t);
    if (idx[2] >= 0) (*start)[idx[2]] = friction[i].dot(contacts_[i].o);
    // sigma is the slip's length when sliding (then c = -mu c_n slip / sigma), 0 when sticking
    // and 0 without a normal force: there any sigma solves the cone row, whose Jacobian row
    // would then vanish at sigma > 0.
    const Eigen::Vector2d slip = problem.Slip(delta, i);
    if (idx[3] >= 0 && normal_force[i] > 0.0) {
      (*start)[idx[3]] = idx[2] >= 0 ? slip.norm() : std::abs(slip[0]);
    }
  }
  return start->allFinite();
}

void QuasistaticStepper::StepDqc(const Eigen::VectorXd* initial_guess) {
  QuasistaticStepRecord& record = record_;
  const QuasistaticNcp problem(contacts_, balance_, bodies_, stiffness_, normal_);
  const bool warm = StartFrom(problem.size(), initial_guess);
  if (warm) {
    // A contact without normal force starts with sigma = 0: any sigma solves its cone row
    // there, and at sigma > 0 that row of the Newton matrix vanishes.
    for (const auto& idx : problem.index()) {
      if (idx[3] >= 0 && !(z_[idx[0]] > 0.0)) z_[idx[3]] = 0.0;
    }
  }
  record.attempts = 1;
  record.summary = solver_->Solve(problem, &z_);
  if (!record.summary.IsSolved() && warm) {
    z_.resize(0);
    record.attempts = 2;
    record.summary = solver_->Solve(problem, &z_);
  }
  if (!record.summary.IsSolved()) {
    // Newton found no way from the warm or the cold start (a grazing contact that must take
    // a large force at a tiny slip): start from the step's DLC solution (the pyramid, by
    // Lemke), which is near the cone's.
    Eigen::VectorXd seed;
    if (DqcStartFromDlc(problem, &seed)) {
      record.attempts = 3;
      const SolverSummary seeded = solver_->Solve(problem, &seed);
      if (seeded.IsSolved() || seeded.natural_residual < record.summary.natural_residual) {
        record.summary = seeded;
        record.summary.message += seeded.IsSolved() ? "; solved from the DLC's solution"
                                                    : "; best from the DLC's solution";
        z_ = seed;
      }
    }
  }
  record.problem_size = problem.size();
  record.islands = 1;
  record.failed_islands = record.summary.IsSolved() ? 0 : 1;
  if (z_.size() != problem.size()) return;
  delta_ = z_.head(balance_.size());
  for (size_t i = 0; i < contacts_.size(); ++i) {
    const auto& idx = problem.index()[i];
    normal_force_[i] = z_[idx[0]];
    if (idx[1] >= 0) friction_force_[i] += z_[idx[1]] * contacts_[i].t;
    if (idx[2] >= 0) friction_force_[i] += z_[idx[2]] * contacts_[i].o;
  }
}

const QuasistaticStepRecord& QuasistaticStepper::Step(
    const std::vector<Vector6d>& applied_impulses) {
  if (!applied_impulses.empty()) {
    throw InputError("a quasistatic stepper takes no applied impulses (" +
                     std::to_string(applied_impulses.size()) + " given)");
  }
  return DoStep(nullptr);
}

const QuasistaticStepRecord& QuasistaticStepper::StepFrom(const Eigen::VectorXd& initial_guess) {
  return DoStep(&initial_guess);
}

const QuasistaticStepRecord& QuasistaticStepper::DoStep(const Eigen::VectorXd* initial_guess) {
  const auto start = std::chrono::steady_clock::now();
  QuasistaticStepRecord& record = record_;
  record.summary = SolverSummary();
  record.problem_size = 0;
  record.attempts = 0;
  record.proximal_iterations = 0;
  record.islands = record.failed_islands = 0;
  record.contacts.clear();
  record.max_penetration = 0.0;
  record.time = time_ + options_.h;
  start_states_.resize(bodies_.size());
  for (size_t b = 0; b < bodies_.size(); ++b) start_states_[b] = bodies_[b].state;
  start_q_ = q_actuated_;
  derivable_ = true;
  AssembleStep();
  if (balance_.size() == 0) {
    // Every body is fixed and nothing is actuated: there is nothing to solve for.
    record.summary.solver = options_.solver;
    record.summary.status = Status::Converged;
    record.summary.natural_residual = 0.0;
    record.summary.message = "nothing can move: every body is fixed";
    z_.resize(0);
    FinishStep(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return record;
  }
  switch (options_.model) {
    case QuasistaticModel::Dlc:
      StepDlc(initial_guess);
      break;
    case QuasistaticModel::Qp:
      StepQp(initial_guess);
      break;
    case QuasistaticModel::QpLcp:
      StepQpLcp(initial_guess);
      break;
    case QuasistaticModel::Dqc:
      StepDqc(initial_guess);
      break;
  }
  FinishStep(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return record;
}

// Checks the step's result, records the contacts and moves the bodies (or not: see Step()).
void QuasistaticStepper::FinishStep(double seconds) {
  QuasistaticStepRecord& record = record_;
  const int nc = static_cast<int>(contacts_.size());
  solution_ = z_;
  // A non-finite result is a failed step.
  bool finite = delta_.allFinite();
  for (int i = 0; i < nc; ++i) {
    finite = finite && std::isfinite(normal_force_[i]) && friction_force_[i].allFinite();
  }
  if (!finite) {
    record.summary.status = Status::NumericalFailure;
    record.summary.message = "the step's result is not finite; the bodies were not moved" +
                             std::string(record.summary.message.empty() ? "" : "; ") +
                             record.summary.message;
    solution_.resize(0);
    std::fill(normal_force_.begin(), normal_force_.end(), 0.0);
    std::fill(friction_force_.begin(), friction_force_.end(), Vector3d::Zero());
  }
  // A step that did not converge moves the bodies only if its best iterate is close to a
  // solution; otherwise the configuration stays as it was (the record says the step failed).
  const bool usable =
      finite && (record.summary.IsSolved() || record.summary.natural_residual <= kUsableResidual);
  if (!usable) delta_.setZero();
  // As Eigen evaluates J delta + c: the product, then the sum.
  Eigen::VectorXd& after = after_;
  after.noalias() = normal_.J * delta_;
  after += normal_.constant;
  for (int i = 0; i < nc; ++i) {
    QuasistaticContactRecord c;
    c.body_a = contacts_[i].a;
    c.body_b = contacts_[i].b;
    c.point = contacts_[i].geometry.point_a;
    c.normal = contacts_[i].geometry.normal;
    c.distance = contacts_[i].geometry.distance;
    c.distance_after = after[i];
    c.normal_force = normal_force_[i];
    c.friction_force = friction_force_[i];
    record.max_penetration = std::max(record.max_penetration, -after[i]);
    record.contacts.push_back(c);
  }
  const std::string out_of_range =
      usable ? balance_.LeavesRange(bodies_, actuators_, q_actuated_, delta_, record.time)
             : std::string();
  if (!out_of_range.empty()) {
    record.summary.status = Status::NumericalFailure;
    record.summary.message = out_of_range + "; the bodies were not moved";
  } else if (usable) {
    balance_.Advance(delta_, actuators_, record.time, &bodies_, &q_actuated_);
    UpdateActuatedPoses();
  }
  time_ = record.time;
  record.actuator_positions = q_actuated_;
  record.actuator_commands.clear();
  for (const Actuator& a : actuators_) record.actuator_commands.push_back(a.command(time_));
  record.num_contacts = nc;
  record.step_seconds = seconds;
}

namespace {

// The step's mixed LCP in (delta, multipliers) of a linear model and its contact rows, as the
// step posed it (at the bodies' start poses `bodies`), for its derivative.
struct LinearStepProblem {
  LinearComplementarityProblem problem;
  std::vector<internal::QuasistaticRow> rows;
  std::vector<std::array<int, 3>> slacks;
};

LinearStepProblem QpStepProblem(const QuasistaticBalance& balance, const ContactRows& anitescu,
                                const std::vector<int>& first,
                                const std::vector<LinearizedContact>& contacts) {
  const int n = balance.size();
  LinearStepProblem out{QpProblem(balance, anitescu), {}, {}};
  for (size_t i = 0; i < contacts.size(); ++i) {
    const int rows = std::max<int>(1, static_cast<int>(contacts[i].directions.size()));
    for (int j = 0; j < rows; ++j) {
      out.rows.push_back({static_cast<int>(i), 'r', j, n + first[i] + j});
    }
  }
  return out;
}

LinearStepProblem DlcStepProblem(const QuasistaticBalance& balance,
                                 const std::vector<LinearizedContact>& contacts,
                                 const std::vector<Body>& bodies, const ContactRows& normal) {
  DlcStep dlc = MakeDlcStep(contacts, balance, bodies, normal);
  LinearStepProblem out{std::move(dlc.problem), {}, {}};
  const int nc = static_cast<int>(contacts.size());
  int slack = dlc.friction_offset;
  for (int i = 0; i < nc; ++i) {
    out.rows.push_back({i, 'n', 0, dlc.normal_offset + i});
    if (dlc.first[i] < 0) continue;
    for (size_t j = 0; j < contacts[i].directions.size(); ++j) {
      out.rows.push_back(
          {i, 'p', static_cast<int>(j), dlc.friction_offset + dlc.first[i] + static_cast<int>(j)});
      slack = std::max(slack, dlc.friction_offset + dlc.first[i] + static_cast<int>(j) + 1);
    }
  }
  // The slacks follow the friction forces, one per frictional contact in order.
  for (int i = 0; i < nc; ++i) {
    if (dlc.first[i] >= 0) out.slacks.push_back({i, slack++, dlc.normal_offset + i});
  }
  return out;
}

}  // namespace

std::unique_ptr<StepDerivative> QuasistaticStepper::LastStepDerivative() const {
  if (!derivable_) {
    throw InputError("quasistatic stepper: no step taken, so none to differentiate");
  }
  // The DQC's step is an MCP whose solutions need not be unique (a box pushed over four corners:
  // its solver finds another for most perturbed data), so a derivative at the solution returned
  // would not describe the steps of nearby data (docs/derivatives.md): not offered.
  if (options_.model == QuasistaticModel::Dqc) {
    throw InputError(
        "quasistatic stepper: derivatives of steps are available for the qp, qp-lcp and dlc "
        "models, not dqc");
  }
  const SolverSummary& summary = record_.summary;
  if (!summary.IsSolved() || (balance_.size() > 0 && delta_.size() != balance_.size())) {
    throw InputError("quasistatic stepper: the step at t = " + NumberText(record_.time) +
                     " was not solved (" + summary.message + "), so it has no derivative");
  }
  std::vector<Body> at_start = bodies_;
  for (size_t b = 0; b < bodies_.size(); ++b) at_start[b].state = start_states_[b];
  LinearStepProblem step;
  Eigen::VectorXd z;
  if (options_.model == QuasistaticModel::Dlc) {
    step = DlcStepProblem(balance_, contacts_, at_start, normal_);
    z = solution_;
  } else {
    step = QpStepProblem(balance_, anitescu_, first_row_, contacts_);
    const int nb = static_cast<int>(anitescu_.constant.size());
    z.resize(balance_.size() + nb);
    z << delta_, solution_.tail(nb);
  }
  const internal::QuasistaticStepData data{
      at_start,  start_states_, actuators_, start_q_,  time_,       actuated_,  balance_,
      contacts_, step.problem,  z,          step.rows, step.slacks, law_table_, options_};
  return std::make_unique<internal::QuasistaticStepDerivative>(data);
}

namespace {

struct QuasistaticSnapshot : StepperSnapshot {
  std::vector<RigidBodyState> states;
  std::vector<double> q;
  Eigen::VectorXd solution;  // the warm start of the next step
  double time = 0.0;
  const void* owner = nullptr;
};

}  // namespace

std::unique_ptr<StepperSnapshot> QuasistaticStepper::Save() const {
  auto snapshot = std::make_unique<QuasistaticSnapshot>();
  for (const Body& b : bodies_) snapshot->states.push_back(b.state);
  snapshot->q = q_actuated_;
  snapshot->solution = solution_;
  snapshot->time = time_;
  snapshot->owner = this;
  return snapshot;
}

void QuasistaticStepper::Restore(const StepperSnapshot& snapshot) {
  const auto* s = dynamic_cast<const QuasistaticSnapshot*>(&snapshot);
  if (s == nullptr || s->owner != this) {
    throw InputError("quasistatic stepper: a snapshot of another stepper cannot be restored");
  }
  for (size_t i = 0; i < bodies_.size(); ++i) bodies_[i].state = s->states[i];
  q_actuated_ = s->q;
  solution_ = s->solution;
  time_ = s->time;
  derivable_ = false;
}

// ---------------------------------------------------------------------------------------------
// Scene files and variants

namespace {

std::string ReadQuasistaticVariant(const std::string& variant, QuasistaticOptions* options) {
  SolverVariant parsed;
  std::string why;
  QuasistaticModel model = QuasistaticModel::Dqc;
  if (!SplitSolverVariant(variant, &parsed, &why) || parsed.model.empty() ||
      !ParseQuasistaticModel(parsed.model, &model)) {
    return "unknown quasistatic variant '" + variant +
           "' (expected <model>/<solver>[-cold], model dqc, dlc, qp or qp-lcp, e.g. "
           "qp-lcp/lemke)";
  }
  const ProblemKind kind =
      model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear;
  if (!IsSolverName(parsed.solver, kind)) {
    return "unknown solver '" + parsed.solver + "' for the " + ToString(model) +
           " model in variant '" + variant + "'";
  }
  options->model = model;
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

class QuasistaticConfig final : public StepperConfigOf<QuasistaticOptions> {
 public:
  std::unique_ptr<StepperConfig> Clone() const override {
    return std::make_unique<QuasistaticConfig>(*this);
  }
  std::vector<std::string> OwnKeys() const override {
    return {"model", "contact_threshold", "friction_directions", "regularization", "plane_normal"};
  }
  void Read(const internal::Reader& in, const internal::Json& object, const std::string& path,
            const std::string& prefix) override {
    QuasistaticOptions& o = options;
    if (object.contains("model")) {
      const std::string model = in.String(object.at("model"), prefix + "model");
      if (!ParseQuasistaticModel(model, &o.model)) {
        in.Fail(prefix + "model", "unknown model '" + model + "' (expected dqc, dlc, qp, qp-lcp)");
      }
    }
    internal::ReadStepperSettings(in, object, path, prefix, /*h_required=*/false, 0, &o);
    o.contact_threshold = in.Number(object, path, "contact_threshold", o.contact_threshold);
    o.friction_directions = static_cast<int>(in.Integer(
        object, path, "friction_directions", o.friction_directions, 3, kMaxFrictionDirections));
    o.regularization = in.Number(object, path, "regularization", o.regularization);
    o.plane_normal = in.Vector3(object, path, "plane_normal", o.plane_normal);
    std::string why;
    if (!o.IsValid(&why)) in.Fail(path, why);
  }
  std::string variant() const override {
    return SolverVariant{ToString(options.model), options.solver, !options.warm_start}.ToString();
  }
  std::string SetVariant(const std::string& variant) override {
    return ReadQuasistaticVariant(variant, &options);
  }
  std::string VariantGrammar() const override {
    return "<model>/<solver>[-cold] with model dqc (one of " + SolverNameList(ProblemKind::Mixed) +
           ") or dlc, qp, qp-lcp (one of " + SolverNameList(ProblemKind::Linear) + ")";
  }
  // Each model with the solvers its problem fits: dlc and qp have free rows with a zero
  // diagonal.
  std::vector<std::string> DefaultVariants() const override {
    std::vector<std::string> variants;
    for (QuasistaticModel model : {QuasistaticModel::Dqc, QuasistaticModel::Dlc,
                                   QuasistaticModel::Qp, QuasistaticModel::QpLcp}) {
      internal::AppendComparedVariants(
          std::string(ToString(model)) + "/",
          model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear,
          model == QuasistaticModel::Dlc || model == QuasistaticModel::Qp, &variants);
    }
    return variants;
  }
  std::unique_ptr<Stepper> MakeStepper(const std::vector<Body>& bodies, const ContactLawTable& laws,
                                       const std::vector<Actuator>& actuators) const override {
    return std::make_unique<QuasistaticStepper>(bodies, laws, actuators, options);
  }
};

}  // namespace

std::unique_ptr<StepperConfig> MakeQuasistaticConfig() {
  return std::make_unique<QuasistaticConfig>();
}

bool IsQuasistaticVariant(const std::string& variant) {
  return internal::ReadsVariant(&ReadQuasistaticVariant, variant);
}

void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options) {
  internal::ApplyVariantOrThrow(&ReadQuasistaticVariant, variant, options);
}

}  // namespace ncpkit
