#include "integrators/explicit_stepper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "contact/contact_frame.h"
#include "solvers/base/internal/enum_names.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using Matrix36 = Eigen::Matrix<double, 3, 6>;

// The contact's rows for the body whose centre is `centre` and whose point is `point`.
Matrix36 ContactRows(const ExplicitContact& c, const Eigen::Vector3d& point,
                     const Eigen::Vector3d& centre) {
  return ContactFrameRows(c.point.normal, c.tangent1, c.tangent2, point, centre);
}

// Stands in for the solver of a model that poses no problem (soft contact).
class NoSolver : public ComplementaritySolver {
 public:
  explicit NoSolver(const SolverOptions& options) : ComplementaritySolver("none", options) {
    summary_.solver = "none";
    summary_.status = Status::Converged;
    summary_.natural_residual = 0.0;
    summary_.message = "soft contact: no complementarity problem";
  }
  const SolverSummary& Solve(const LinearComplementarityProblem&, Eigen::VectorXd*) override {
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  SolverSummary summary_;
};

// Pyramid edge k of n in the tangent coordinates (t1, t2).
Eigen::Vector2d Edge(int k, int n) {
  const double angle = 2.0 * M_PI * k / n;
  return Eigen::Vector2d(std::cos(angle), std::sin(angle));
}

// The impulse of `old` in the frame of `c`.
Eigen::Vector3d ImpulseInFrame(const ExplicitContact& old, const ExplicitContact& c) {
  const Eigen::Vector3d f = old.impulse[0] * old.point.normal + old.impulse[1] * old.tangent1 +
                            old.impulse[2] * old.tangent2;
  return Eigen::Vector3d(f.dot(c.point.normal), f.dot(c.tangent1), f.dot(c.tangent2));
}

}  // namespace

namespace {
constexpr internal::EnumName<ExplicitModel> kExplicitModelNames[] = {
    {ExplicitModel::Cone, "cone"},
    {ExplicitModel::Pyramid, "pyramid"},
    {ExplicitModel::Relaxed, "relaxed"},
    {ExplicitModel::Soft, "soft"}};
}  // namespace

const char* ToString(ExplicitModel model) { return internal::NameIn(kExplicitModelNames, model); }

bool ParseExplicitModel(const std::string& name, ExplicitModel* model) {
  return internal::ValueIn(kExplicitModelNames, name, model);
}

bool ExplicitStepperOptions::IsValid(std::string* why) const {
  std::string solver_why;
  const bool solver_ok = solver_options.IsValid(&solver_why);
  const bool soft = model == ExplicitModel::Soft;
  return internal::OptionChecks()
      .Require(h > 0.0 && std::isfinite(h), "h", h, "must be positive and finite")
      .Require(gravity.allFinite(), "gravity", gravity.norm(), "must be finite")
      .Require(contact_margin > 0.0 && std::isfinite(contact_margin), "contact_margin",
               contact_margin, "must be positive and finite")
      .Require(friction_directions >= 3 && friction_directions <= 64, "friction_directions",
               friction_directions, "must be in [3, 64]")
      .Require(restitution_velocity >= 0.0 && std::isfinite(restitution_velocity),
               "restitution_velocity", restitution_velocity, "must be >= 0 and finite")
      .Require(
          std::isfinite(soft_stiffness) && (soft ? soft_stiffness > 0.0 : soft_stiffness >= 0.0),
          "soft_stiffness", soft_stiffness,
          soft ? "must be positive and finite with the soft model" : "must be >= 0 and finite")
      .Require(soft_damping >= 0.0 && std::isfinite(soft_damping), "soft_damping", soft_damping,
               "must be >= 0 and finite")
      .Require(proximal_regularization >= 0.0 && std::isfinite(proximal_regularization),
               "proximal_regularization", proximal_regularization, "must be >= 0 and finite")
      .Require(max_proximal_iterations >= 0, "max_proximal_iterations", max_proximal_iterations,
               "must be >= 0")
      .Require(solver_ok, "solver_options", 0.0, solver_why.c_str())
      .Done(why);
}

ExplicitStepper::ExplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                                 const ExplicitStepperOptions& options)
    : bodies_(std::move(bodies)), laws_(std::move(laws)), options_(options) {
  RequireValidOptions(options_, "explicit stepper");
  std::string why;
  if (!laws_.IsValid(&why)) throw InputError("explicit stepper: " + why);
  ValidateBodies(bodies_, /*dynamic=*/true);
  // The solver starts from the impulses matched to the previous step's (zero for new contacts).
  options_.solver_options.warm_start = options_.warm_start;
  switch (options_.model) {
    case ExplicitModel::Cone:
      solver_ = CreateSolver(options_.solver, ProblemKind::GlobalFriction, options_.solver_options);
      break;
    case ExplicitModel::Pyramid:
    case ExplicitModel::Relaxed:
      if (const SolverEntry* e = FindSolver(options_.solver);
          e != nullptr && e->needs_positive_diagonal && options_.model == ExplicitModel::Pyramid) {
        throw InputError("explicit stepper: " + options_.solver +
                         " cannot take the pyramid model's LCP (its gamma rows have a zero "
                         "diagonal); use relaxed/" +
                         options_.solver + ", or pyramid/lemke");
      }
      {
        // The proximal solver hands every attempt its start (or an empty one for cold).
        SolverOptions linear = options_.solver_options;
        linear.warm_start = true;
        solver_ = CreateSolver(options_.solver, ProblemKind::Linear, linear);
        ProximalPointSolver::Options proximal;
        proximal.relative_regularization = options_.proximal_regularization;
        proximal.max_outer_iterations = options_.max_proximal_iterations;
        proximal_ = std::make_unique<ProximalPointSolver>(solver_.get(), proximal);
      }
      break;
    case ExplicitModel::Soft:
      solver_ = std::make_unique<NoSolver>(options_.solver_options);
      break;
  }
  // Every pair of shapes that may meet (not both fixed) needs an explicit distance; checked
  // here, once per pair of kinds (the first body of each kind named), rather than at the step
  // where such a pair first comes near.
  std::map<ShapeKind, const Body*> moving_kinds, all_kinds;
  std::map<ShapeKind, const Body*> second_of_kind;  // a second body of the kind, if any
  for (const Body& body : bodies_) {
    if (!all_kinds.emplace(body.shape.kind, &body).second) {
      second_of_kind.emplace(body.shape.kind, &body);
    }
    if (!body.fixed) moving_kinds.emplace(body.shape.kind, &body);
  }
  for (const auto& [kind, moving] : moving_kinds) {
    for (auto [other_kind, other] : all_kinds) {
      if (geometry_.Supports(kind, other_kind)) continue;
      if (other_kind == kind) {  // a body does not meet itself: needs a second one
        const auto second = second_of_kind.find(kind);
        if (second == second_of_kind.end()) continue;
        other = second->second == moving ? other : second->second;
      }
      throw InputError("explicit stepper: no explicit distance between a " + moving->shape.Name() +
                       " and a " + other->shape.Name() + " (bodies " + moving->name + ", " +
                       other->name + "); it has every pair of shapes but two planes");
    }
  }
}

std::string ExplicitStepper::variant() const {
  if (options_.model == ExplicitModel::Soft) return "soft";
  return std::string(ToString(options_.model)) + "/" + options_.solver +
         (options_.warm_start ? "" : "-cold");
}

const std::vector<const char*>& ExplicitStepper::PairColumns() const {
  static const std::vector<const char*> kColumns = {"contacts", "pn"};
  return kColumns;
}

void ExplicitStepper::TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const {
  rows->clear();
  const auto* explicit_record = dynamic_cast<const ExplicitStepRecord*>(&record);
  if (explicit_record == nullptr) return;
  for (const ExplicitContact& c : explicit_record->contacts) {
    PairRow* row = nullptr;
    for (PairRow& existing : *rows) {
      if (existing.body_a == c.body_a && existing.body_b == c.body_b) row = &existing;
    }
    if (row == nullptr) {
      rows->push_back(PairRow());
      row = &rows->back();
      row->body_a = c.body_a;
      row->body_b = c.body_b;
    }
    row->values[0] += 1.0;
    row->values[1] += c.impulse[0];
  }
}

void ExplicitStepper::ContactMarkers(const StepRecord& record,
                                     std::vector<ContactMarker>* markers) const {
  markers->clear();
  const auto* explicit_record = dynamic_cast<const ExplicitStepRecord*>(&record);
  if (explicit_record == nullptr) return;
  for (const ExplicitContact& c : explicit_record->contacts) {
    markers->push_back({c.point.point_b, c.point.normal, c.impulse[0]});
  }
}

// How far each body's surface can move in the step at its free velocity: pairs within the
// margin plus both reaches enter the problem, so a fast body meets the ground in the step it
// would pass it (speculative contact; the phi / h term lets the gap close).
void ExplicitStepper::ComputeReach() {
  const int n = static_cast<int>(bodies_.size());
  reach_.resize(n);
  for (int i = 0; i < n; ++i) {
    reach_[i] =
        bodies_[i].fixed
            ? 0.0
            : options_.h * (free_velocity_[i].head<3>().norm() +
                            free_velocity_[i].tail<3>().norm() * bodies_[i].shape.BoundingRadius());
  }
}

// Contact points of every pair the broad phase keeps, with gaps below the margin plus both
// bodies' reaches.
void ExplicitStepper::FindContacts(bool only_grown) {
  const int n = static_cast<int>(bodies_.size());
  spheres_.resize(n);
  rotations_.resize(n);
  for (int i = 0; i < n; ++i) {
    rotations_[i] = bodies_[i].state.orientation.toRotationMatrix();
    const double slack = 0.5 * options_.contact_margin + reach_[i];
    spheres_[i].centre = bodies_[i].state.position;
    spheres_[i].radius = bodies_[i].shape.BoundingRadius() + slack;
    spheres_[i].half_extents = bodies_[i].shape.BoundingHalfExtents(rotations_[i]).array() + slack;
    spheres_[i].fixed = bodies_[i].fixed;
  }
  if (only_grown) {
    broad_phase_.FindAround(spheres_, grown_, &pairs_);  // the first search's pairs and more
  } else {
    broad_phase_.Find(spheres_, &pairs_);
  }
  record_.contacts.clear();
  previous_range_.clear();
  // previous_ and the pairs are both in (i, j) order: one cursor finds each pair's range.
  int cursor = 0;
  const int num_previous = static_cast<int>(previous_.size());
  for (const auto& [i, j] : pairs_) {
    const std::pair<int, int> pair(i, j);
    while (cursor < num_previous &&
           std::make_pair(previous_[cursor].body_a, previous_[cursor].body_b) < pair) {
      ++cursor;
    }
    int end = cursor;
    while (end < num_previous && previous_[end].body_a == i && previous_[end].body_b == j) ++end;
    const std::pair<int, int> range(cursor, end);
    const Body& a = bodies_[i];
    const Body& b = bodies_[j];
    if (!geometry_.Supports(a.shape.kind, b.shape.kind)) {
      throw InputError("explicit stepper: no explicit distance between a " + a.shape.Name() +
                       " and a " + b.shape.Name() + " (bodies " + a.name + ", " + b.name + ")");
    }
    if (only_grown && !grown_[i] && !grown_[j]) {
      // Same poses, same threshold: the first search's contacts of the pair (in previous_).
      record_.contacts.insert(record_.contacts.end(), previous_.begin() + range.first,
                              previous_.begin() + range.second);
      previous_range_.resize(record_.contacts.size(), range);
      continue;
    }
    ShapePose pose_a, pose_b;
    pose_a.position = a.state.position;
    pose_a.rotation = rotations_[i];
    pose_b.position = b.state.position;
    pose_b.rotation = rotations_[j];
    points_.clear();
    geometry_.FindContacts(a.shape, pose_a, b.shape, pose_b,
                           options_.contact_margin + reach_[i] + reach_[j], &points_);
    // Warm starts match contacts in the frame of a moving body of the pair (B unless B is
    // fixed): there a point stays put while the body slides or turns.
    const bool on_b = !b.fixed;
    const Body& anchor = on_b ? b : a;
    for (const ContactPoint& point : points_) {
      ExplicitContact c;
      c.body_a = i;
      c.body_b = j;
      c.point = point;
      ContactTangentBasis(point.normal, &c.tangent1, &c.tangent2);
      c.anchor_point = (on_b ? pose_b : pose_a).rotation.transpose() *
                       ((on_b ? point.point_b : point.point_a) - anchor.state.position);
      record_.contacts.push_back(c);
      previous_range_.push_back(range);
    }
  }
}

const ExplicitContact* ExplicitStepper::Previous(int index) const {
  const ExplicitContact& c = record_.contacts[index];
  const auto [first, last] = previous_range_[index];
  const ExplicitContact* nearest = nullptr;
  const Body& anchor = bodies_[bodies_[c.body_b].fixed ? c.body_a : c.body_b];
  double nearest_distance = kMatchRadius * anchor.shape.BoundingRadius();
  for (int k = first; k < last; ++k) {
    const double d = (previous_[k].anchor_point - c.anchor_point).norm();
    if (d < nearest_distance) {
      nearest_distance = d;
      nearest = &previous_[k];
    }
  }
  return nearest;
}

// b_N of a contact: phi / h, which lets the gap close within the step but not overshoot; with
// restitution, a contact approaching faster than restitution_velocity that the step would close
// leaves at e times that speed instead.
double ExplicitStepper::NormalOffset(const ExplicitContact& contact, const Matrix36& rows_a,
                                     const Matrix36& rows_b, const ContactLaw& law) const {
  double offset = contact.point.distance / options_.h;
  if (law.restitution > 0.0 && options_.model != ExplicitModel::Soft) {
    // The normal velocity before the step, from the bodies' start twists.
    const Body& a = bodies_[contact.body_a];
    const Body& b = bodies_[contact.body_b];
    Vector6d start_a, start_b;
    start_a << a.state.linear_velocity, a.state.angular_velocity;
    start_b << b.state.linear_velocity, b.state.angular_velocity;
    const double approach = rows_a.row(0).dot(start_a) + rows_b.row(0).dot(start_b);  // < 0
    if (approach < -options_.restitution_velocity && offset + approach < 0.0) {
      offset = std::min(offset, law.restitution * approach);
    }
  }
  return offset;
}

// True if a contact of the current search that the previous list (the first search of the step,
// already solved) lacks would be violated by the end-of-step velocities: u_N + b_N < 0.
bool ExplicitStepper::NewContactViolated(const std::vector<Vector6d>& end_velocity) const {
  for (size_t index = 0; index < record_.contacts.size(); ++index) {
    const ExplicitContact& c = record_.contacts[index];
    const auto [first, last] = previous_range_[index];
    bool known = false;
    for (int k = first; k < last && !known; ++k) {
      known = previous_[k].point.point_b == c.point.point_b;
    }
    if (known) continue;
    const Body& a = bodies_[c.body_a];
    const Body& b = bodies_[c.body_b];
    const Matrix36 rows_a = -ContactRows(c, c.point.point_a, a.state.position);
    const Matrix36 rows_b = ContactRows(c, c.point.point_b, b.state.position);
    const double normal_velocity =
        rows_a.row(0).dot(end_velocity[c.body_a]) + rows_b.row(0).dot(end_velocity[c.body_b]);
    if (normal_velocity + NormalOffset(c, rows_a, rows_b, laws_.Get(a.name, b.name)) < 0.0) {
      return true;
    }
  }
  return false;
}

// Each contact's rows, its contact-frame velocity J nu_f + [b_N, 0, 0], the Delassus blocks,
// then the model's problem and its solve; the impulses go into the free velocities.
void ExplicitStepper::AssembleAndSolve() {
  std::vector<ExplicitContact>& contacts = record_.contacts;
  const int nc = static_cast<int>(contacts.size());
  rows_a_.resize(nc);
  rows_b_.resize(nc);
  contact_velocity_.resize(3 * nc);
  normal_offset_.resize(nc);
  // The contacts of every body: (contact, side).
  by_body_.resize(bodies_.size());
  for (auto& list : by_body_) list.clear();
  auto& by_body = by_body_;
  Eigen::VectorXd& mu = mu_;
  mu.resize(nc);
  for (int c = 0; c < nc; ++c) {
    const ExplicitContact& contact = contacts[c];
    const Body& a = bodies_[contact.body_a];
    const Body& b = bodies_[contact.body_b];
    rows_a_[c] = -ContactRows(contact, contact.point.point_a, a.state.position);
    rows_b_[c] = ContactRows(contact, contact.point.point_b, b.state.position);
    contact_velocity_.segment<3>(3 * c) =
        rows_a_[c] * free_velocity_[contact.body_a] + rows_b_[c] * free_velocity_[contact.body_b];
    const ContactLaw& law = laws_.Get(a.name, b.name);
    mu[c] = law.mu;
    const double offset = NormalOffset(contact, rows_a_[c], rows_b_[c], law);
    contact_velocity_[3 * c] += offset;
    normal_offset_[c] = offset;
    if (!a.fixed) by_body[contact.body_a].emplace_back(c, 0);
    if (!b.fixed) by_body[contact.body_b].emplace_back(c, 1);
  }
  record_.problem_size = 0;
  record_.num_contacts = nc;
  if (options_.model == ExplicitModel::Soft) {
    ApplySoftForces();
    return;
  }
  if (nc == 0) {
    record_.summary = SolverSummary();
    record_.summary.solver = options_.solver;
    record_.summary.status = Status::Converged;
    record_.summary.natural_residual = 0.0;
    record_.summary.message = "no contact";
  } else if (options_.model == ExplicitModel::Cone) {
    SolveCone();
  } else {
    SolveLinear();
  }
  // nu = nu_f + M^-1 J^T r, the impulses summed per body first.
  body_impulse_.assign(bodies_.size(), Vector6d::Zero());
  for (int c = 0; c < nc; ++c) {
    const Eigen::Vector3d& r = contacts[c].impulse;
    body_impulse_[contacts[c].body_a].noalias() += rows_a_[c].transpose() * r;
    body_impulse_[contacts[c].body_b].noalias() += rows_b_[c].transpose() * r;
  }
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (!bodies_[i].fixed) free_velocity_[i].noalias() += inverse_mass_[i] * body_impulse_[i];
  }
}

// The Coulomb-cone model: the frictional contact problem in its global form, M nu+ = M nu_f +
// J^T r, u = J nu+ + [b_N, 0, 0] (one block of M per moving body), warm started from the
// previous impulses. Solvers of the local form get W = J M^-1 J^T from it.
void ExplicitStepper::SolveCone() {
  std::vector<ExplicitContact>& contacts = record_.contacts;
  const int nc = static_cast<int>(contacts.size());
  global_.Clear();
  block_of_body_.assign(bodies_.size(), -1);
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].fixed) continue;
    const Vector6d momentum = mass_matrix_[i] * free_velocity_[i];
    block_of_body_[i] = global_.AddBlock(mass_matrix_[i], inverse_mass_[i], momentum);
  }
  // The contacts go to the solver highest first along gravity: the load flows down, so a
  // Gauss-Seidel sweep in this order carries a stack's weight to the ground in one pass (on
  // the 100-brick wall, 770 sweeps a step at 1e-6 against 3542 lowest first and 1638 in pair
  // order). Without gravity, in pair order.
  order_.resize(nc);
  const double g = options_.gravity.norm();
  if (g > 0.0) {
    const Eigen::Vector3d down = options_.gravity / g;
    ranked_.resize(nc);
    for (int c = 0; c < nc; ++c) {
      const double depth = contacts[c].point.point_b.dot(down);
      ranked_[c] = {std::isfinite(depth) ? depth : 0.0, c};  // a strict order for the sort
    }
    std::sort(ranked_.begin(), ranked_.end());  // ties in pair order
    for (int k = 0; k < nc; ++k) order_[k] = ranked_[k].second;
  } else {
    for (int c = 0; c < nc; ++c) order_[c] = c;
  }
  for (int k = 0; k < nc; ++k) {
    const int c = order_[k];
    global_.AddContact(mu_[c], Eigen::Vector3d(normal_offset_[c], 0.0, 0.0));
    const int a = block_of_body_[contacts[c].body_a], b = block_of_body_[contacts[c].body_b];
    // (Through a 6 x 3 matrix: a transpose expression would be copied to the heap.)
    Eigen::Matrix<double, 6, 3> rows;
    if (a >= 0) {
      rows = rows_a_[c].transpose();
      global_.AddContactBlock(a, rows);
    }
    if (b >= 0) {
      rows = rows_b_[c].transpose();
      global_.AddContactBlock(b, rows);
    }
  }
  global_.Finalize();
  const GlobalFrictionContactProblem& problem = global_;
  r_.setZero(3 * nc);
  if (options_.warm_start) {
    for (int k = 0; k < nc; ++k) {
      if (const ExplicitContact* old = Previous(order_[k])) {
        r_.segment<3>(3 * k) = ImpulseInFrame(*old, contacts[order_[k]]);
      }
    }
  }
  record_.summary = solver_->Solve(problem, &r_);
  if (r_.size() != 3 * nc || !r_.allFinite()) r_.setZero(3 * nc);
  for (int k = 0; k < nc; ++k) contacts[order_[k]].impulse = r_.segment<3>(3 * k);
  record_.problem_size = 3 * nc;
}

// The Delassus blocks W_ij = J_i M^-1 J_j^T of contacts sharing a moving body, by body.
void ExplicitStepper::ComputeDelassusBlocks() {
  blocks_.clear();
  for (size_t body = 0; body < bodies_.size(); ++body) {
    const auto& list = by_body_[body];
    for (const auto& [c1, side1] : list) {
      const Matrix36& J1 = side1 == 0 ? rows_a_[c1] : rows_b_[c1];
      const Matrix36 J1_Minv = J1 * inverse_mass_[body];
      for (const auto& [c2, side2] : list) {
        const Matrix36& J2 = side2 == 0 ? rows_a_[c2] : rows_b_[c2];
        blocks_.push_back({c1, c2, J1_Minv * J2.transpose()});
      }
    }
  }
}

// The pyramid and relaxed models: impulses r_c = G_c z_c with, per contact,
//   pyramid  z_c = [lambda_n, beta_1..beta_nd, gamma], r_c = [lambda_n, sum beta_k d_k]
//   relaxed  z_c = [beta_1..beta_nd],                  r_c = sum beta_k [1, mu d_k]
// and the LCP G^T W G z + G^T (J nu_f + b) >= 0 (the pyramid adds gamma's columns E to its
// beta rows and the rows mu lambda_n - sum beta >= 0 _|_ gamma >= 0).
// The columns of each contact's generator G_c (3 x its impulse unknowns; gamma has none): the
// pyramid's normal and edge directions, or the relaxed cone's edges (1, mu d_k).
void ExplicitStepper::BuildGenerators() {
  const int nc = static_cast<int>(record_.contacts.size());
  const int nd = options_.friction_directions;
  const bool pyramid = options_.model == ExplicitModel::Pyramid;
  std::vector<Eigen::Matrix<double, 3, Eigen::Dynamic>>& G = generators_;
  G.resize(nc);
  for (int c = 0; c < nc; ++c) {
    const int columns = pyramid ? nd + 1 : nd;
    G[c].setZero(3, columns);
    for (int k = 0; k < nd; ++k) {
      const Eigen::Vector2d d = Edge(k, nd);
      if (pyramid) {
        G[c].col(1 + k) << 0.0, d.x(), d.y();
      } else {
        G[c].col(k) << 1.0, mu_[c] * d.x(), mu_[c] * d.y();
      }
    }
    if (pyramid) G[c](0, 0) = 1.0;
  }
}

// M = G^T W G block by block, q = G^T u_free, and the pyramid's gamma rows.
void ExplicitStepper::AssembleLinear(int per_contact) {
  const int nc = static_cast<int>(record_.contacts.size());
  const int nd = options_.friction_directions;
  const bool pyramid = options_.model == ExplicitModel::Pyramid;
  const std::vector<Eigen::Matrix<double, 3, Eigen::Dynamic>>& G = generators_;
  std::vector<Eigen::Triplet<double>>& triplets = triplets_;
  triplets.clear();
  const int g_columns = pyramid ? nd + 1 : nd;
  ComputeDelassusBlocks();
  triplets.reserve(blocks_.size() * g_columns * g_columns + (pyramid ? 3 * nd * nc : 0));
  Eigen::Matrix<double, 3, Eigen::Dynamic> half(3, g_columns);
  Eigen::MatrixXd value(g_columns, g_columns);
  for (const Block& block : blocks_) {
    half.noalias() = block.value * G[block.col];
    value.noalias() = G[block.row].transpose() * half;
    for (int i = 0; i < g_columns; ++i)
      for (int j = 0; j < g_columns; ++j)
        triplets.emplace_back(per_contact * block.row + i, per_contact * block.col + j,
                              value(i, j));
  }
  Eigen::VectorXd& q = q_;
  q.resize(per_contact * nc);
  for (int c = 0; c < nc; ++c) {
    q.segment(per_contact * c, g_columns) = G[c].transpose() * contact_velocity_.segment<3>(3 * c);
    if (!pyramid) continue;
    const int base = per_contact * c, gamma = base + nd + 1;
    q[gamma] = 0.0;
    triplets.emplace_back(gamma, base, mu_[c]);
    for (int k = 0; k < nd; ++k) {
      triplets.emplace_back(base + 1 + k, gamma, 1.0);
      triplets.emplace_back(gamma, base + 1 + k, -1.0);
    }
  }
  assembly_.Assemble(per_contact * nc, per_contact * nc, triplets, &matrix_);
  lcp_.AssignLcp(matrix_, q);
  lcp_.name = pyramid ? "explicit pyramid step" : "explicit relaxed-cone step";
}

// Contact c's start: its previous impulse r in this frame, split over the edges that bound it.
void ExplicitStepper::WarmStartLinear(int c, int per_contact, const Eigen::Vector3d& r) {
  const int nd = options_.friction_directions;
  const bool pyramid = options_.model == ExplicitModel::Pyramid;
  Eigen::Vector2d t(r[1], r[2]);
  if (!pyramid) {
    if (!(mu_[c] > 0.0)) {
      for (int k = 0; k < nd; ++k) z_[per_contact * c + k] = r[0] / nd;
      return;
    }
    t /= mu_[c];
  }
  // t = a d_k + b d_k+1 with a, b >= 0 for the edges k, k+1 around t's angle.
  const double step = 2.0 * M_PI / nd;
  double angle = std::atan2(t.y(), t.x());
  if (angle < 0.0) angle += 2.0 * M_PI;
  const int k = std::min(nd - 1, static_cast<int>(angle / step));
  const Eigen::Vector2d d0 = Edge(k, nd), d1 = Edge((k + 1) % nd, nd);
  Eigen::Matrix2d D;
  D << d0, d1;
  Eigen::Vector2d ab = D.inverse() * t;
  ab = ab.cwiseMax(0.0);
  const int base = per_contact * c + (pyramid ? 1 : 0);
  if (pyramid) {
    z_[per_contact * c] = r[0];
    z_[base + k] = ab[0];
    z_[base + (k + 1) % nd] = ab[1];
    return;
  }
  // sum beta = r_N: the rest spread evenly (the edges sum to zero).
  const double rest = r[0] - ab.sum();
  if (rest < 0.0) ab *= r[0] / ab.sum();
  z_[base + k] = ab[0];
  z_[base + (k + 1) % nd] = ab[1];
  for (int j = 0; j < nd; ++j) z_[base + j] += std::max(rest, 0.0) / nd;
}

void ExplicitStepper::SolveLinear() {
  std::vector<ExplicitContact>& contacts = record_.contacts;
  const int nc = static_cast<int>(contacts.size());
  const int nd = options_.friction_directions;
  const bool pyramid = options_.model == ExplicitModel::Pyramid;
  const int per_contact = pyramid ? nd + 2 : nd;
  const int g_columns = pyramid ? nd + 1 : nd;
  BuildGenerators();
  AssembleLinear(per_contact);
  z_.setZero(per_contact * nc);
  if (options_.warm_start) {
    for (int c = 0; c < nc; ++c) {
      const ExplicitContact* old = Previous(c);
      if (old == nullptr) continue;
      const Eigen::Vector3d r = ImpulseInFrame(*old, contacts[c]);
      if (r[0] > 0.0) WarmStartLinear(c, per_contact, r);
    }
  } else {
    z_.resize(0);
  }
  const SolverSummary* summary = &proximal_->Solve(lcp_, &z_);
  record_.attempts = 1;
  if (!summary->IsSolved() && options_.warm_start) {
    z_.resize(0);
    record_.attempts = 2;
    summary = &proximal_->Solve(lcp_, &z_);
  }
  record_.summary = *summary;
  if (z_.size() != per_contact * nc || !z_.allFinite()) z_.setZero(per_contact * nc);
  for (int c = 0; c < nc; ++c) {
    contacts[c].impulse = generators_[c] * z_.segment(per_contact * c, g_columns);
  }
  record_.problem_size = per_contact * nc;
}

// The contact modelling notes' spring-damper at every overlapping contact: the normal force K_p
// depth - K_d v_N (never pulling), the tangential one -K_p s - K_d v_T with s the offset from the
// anchor, kept inside the Coulomb cone by moving the anchor. Start-of-step velocities, impulses h
// F.
void ExplicitStepper::ApplySoftForces() {
  const Eigen::VectorXd& mu = mu_;
  std::vector<ExplicitContact>& contacts = record_.contacts;
  const double k = options_.soft_stiffness, d = options_.soft_damping, h = options_.h;
  for (size_t c = 0; c < contacts.size(); ++c) {
    ExplicitContact& contact = contacts[c];
    const Body& a = bodies_[contact.body_a];
    const Body& b = bodies_[contact.body_b];
    Vector6d start_a, start_b;
    start_a << a.state.linear_velocity, a.state.angular_velocity;
    start_b << b.state.linear_velocity, b.state.angular_velocity;
    const Eigen::Vector3d v = rows_a_[c] * start_a + rows_b_[c] * start_b;  // contact frame
    contact.impulse.setZero();
    contact.anchor_offset.setZero();
    const double depth = -contact.point.distance;
    if (depth <= 0.0) continue;
    const double normal = std::max(0.0, k * depth - d * v[0]);
    // The anchor offset carried from the previous step, in this step's tangent plane, moved
    // by this step's tangential velocity.
    Eigen::Vector2d s = Eigen::Vector2d::Zero();
    if (const ExplicitContact* old = Previous(static_cast<int>(c))) {
      s = Eigen::Vector2d(old->anchor_offset.dot(contact.tangent1),
                          old->anchor_offset.dot(contact.tangent2));
    }
    const Eigen::Vector2d v_t(v[1], v[2]);
    s += h * v_t;
    Eigen::Vector2d tangential = -k * s - d * v_t;
    const double limit = mu[c] * normal;
    if (tangential.norm() > limit) {
      // Slip: the force on the cone, the anchor where the spring alone would give it.
      tangential *= limit / tangential.norm();
      s = k > 0.0 ? Eigen::Vector2d(-(tangential + d * v_t) / k) : s;
    }
    contact.anchor_offset = s.x() * contact.tangent1 + s.y() * contact.tangent2;
    contact.impulse = h * Eigen::Vector3d(normal, tangential.x(), tangential.y());
  }
  for (size_t c = 0; c < contacts.size(); ++c) {
    const Eigen::Vector3d& r = contacts[c].impulse;
    free_velocity_[contacts[c].body_a] +=
        inverse_mass_[contacts[c].body_a] * (rows_a_[c].transpose() * r);
    free_velocity_[contacts[c].body_b] +=
        inverse_mass_[contacts[c].body_b] * (rows_b_[c].transpose() * r);
  }
  record_.summary = solver_->summary();
}

// Poses by the exact rotation update with the end-of-step twists (free velocities plus the
// contact impulses).
void ExplicitStepper::Advance() {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    Body& body = bodies_[i];
    if (body.fixed) continue;
    const Vector6d& nu = free_velocity_[i];  // the end-of-step twist, after the impulses
    double pose[7];
    IntegratePose(body.state, options_.h, nu.data(), pose);
    body.state.position = Eigen::Vector3d(pose[0], pose[1], pose[2]);
    body.state.orientation = Eigen::Quaterniond(pose[3], pose[4], pose[5], pose[6]).normalized();
    body.state.linear_velocity = nu.head<3>();
    body.state.angular_velocity = nu.tail<3>();
  }
}

const StepRecord& ExplicitStepper::Step(const std::vector<Vector6d>& applied_impulses) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = bodies_.size();
  if (!applied_impulses.empty() && applied_impulses.size() != n) {
    throw InputError("explicit stepper: " + std::to_string(applied_impulses.size()) +
                     " applied impulses for " + std::to_string(n) + " bodies");
  }
  // Free velocities: gravity and the gyroscopic torque over the step, and applied impulses.
  inverse_mass_.resize(n);
  mass_matrix_.resize(n);
  free_velocity_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Body& body = bodies_[i];
    inverse_mass_[i].setZero();
    mass_matrix_[i].setZero();
    free_velocity_[i].setZero();
    if (body.fixed) continue;
    const Eigen::Matrix3d inertia = WorldInertia(body.mass, body.state.orientation);
    const Eigen::Matrix3d inertia_inverse = inertia.inverse();
    inverse_mass_[i].topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() / body.mass.mass;
    inverse_mass_[i].bottomRightCorner<3, 3>() = inertia_inverse;
    mass_matrix_[i].topLeftCorner<3, 3>() = body.mass.mass * Eigen::Matrix3d::Identity();
    mass_matrix_[i].bottomRightCorner<3, 3>() = inertia;
    const Eigen::Vector3d& omega = body.state.angular_velocity;
    Vector6d impulse;
    impulse.head<3>() = options_.h * body.mass.mass * options_.gravity;
    impulse.tail<3>() = -options_.h * omega.cross(inertia * omega);
    if (!applied_impulses.empty()) impulse += applied_impulses[i];
    free_velocity_[i].head<3>() = body.state.linear_velocity;
    free_velocity_[i].tail<3>() = omega;
    free_velocity_[i] += inverse_mass_[i] * impulse;
  }
  // The previous step's contacts, for warm starts: FindContacts() lists them by pair, in the
  // broad phase's (i, j) order, which Previous() searches.
  std::swap(previous_, record_.contacts);
  ComputeReach();
  start_velocity_ = free_velocity_;
  FindContacts();
  record_.attempts = 1;
  AssembleAndSolve();
  // A body that the impulses sped up may reach a pair left out (its gap above the margin plus
  // the free reaches): then the pairs are found again with the end-of-step reaches and the
  // step is solved again, warm started from this solution.
  for (int pass = 0; pass < kMaxReachPasses && options_.model != ExplicitModel::Soft; ++pass) {
    bool grew = false;
    grown_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (bodies_[i].fixed) continue;
      const double end =
          options_.h * (free_velocity_[i].head<3>().norm() +
                        free_velocity_[i].tail<3>().norm() * bodies_[i].shape.BoundingRadius());
      if (end > reach_[i] + 0.5 * options_.contact_margin) {
        reach_[i] = end;
        grown_[i] = 1;
        grew = true;
      }
    }
    if (!grew) break;
    // Larger reaches only add contacts. Where every added one is open at the end-of-step
    // velocities (u_N + b_N >= 0), the solution with zero impulses on them solves the larger
    // problem: it stands.
    std::swap(previous_, record_.contacts);
    end_velocity_.swap(free_velocity_);
    free_velocity_ = start_velocity_;
    FindContacts(/*only_grown=*/true);
    if (!NewContactViolated(end_velocity_)) {
      std::swap(previous_, record_.contacts);
      free_velocity_.swap(end_velocity_);
      break;
    }
    ++record_.attempts;
    const int iterations = record_.summary.iterations;
    AssembleAndSolve();
    record_.summary.iterations += iterations;
  }
  record_.max_penetration = 0.0;
  for (const ExplicitContact& c : record_.contacts) {
    record_.max_penetration = std::max(record_.max_penetration, -c.point.distance);
  }
  Advance();
  time_ += options_.h;
  record_.time = time_;
  record_.step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record_;
}

}  // namespace ncpkit
