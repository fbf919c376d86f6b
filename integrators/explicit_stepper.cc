#include "integrators/explicit_stepper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "contact/contact_frame.h"
#include "dynamics/shape_registry.h"
#include "integrators/explicit/model.h"
#include "integrators/explicit/step_derivative.h"
#include "integrators/json_reader.h"
#include "integrators/worker_pool.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/enum_names.h"

namespace ncpkit {
namespace {

using internal::Matrix36;

// The contact's rows for the body whose centre is `centre` and whose point is `point`.
Matrix36 BodyFrameRows(const ExplicitContact& c, const Eigen::Vector3d& point,
                       const Eigen::Vector3d& centre) {
  return ContactFrameRows(c.point.normal, c.tangent1, c.tangent2, point, centre);
}

}  // namespace

namespace {
constexpr internal::EnumName<ExplicitModel> kExplicitModelNames[] = {
    {ExplicitModel::Cone, "cone"},
    {ExplicitModel::Pyramid, "pyramid"},
    {ExplicitModel::Relaxed, "relaxed"},
    {ExplicitModel::Convex, "convex"},
    {ExplicitModel::Soft, "soft"}};

ProblemKind ModelProblemKind(ExplicitModel model) {
  return model == ExplicitModel::Cone || model == ExplicitModel::Convex
             ? ProblemKind::GlobalFriction
             : ProblemKind::Linear;
}

// Whether the registry row `solver` solves the model's problem: the cone's Coulomb solvers are
// not the convex model's, and the other way round.
bool ModelTakesSolver(ExplicitModel model, const std::string& solver) {
  if (!IsSolverName(solver, ModelProblemKind(model))) return false;
  if (model != ExplicitModel::Cone && model != ExplicitModel::Convex) return true;
  return FindSolver(solver)->convex_model == (model == ExplicitModel::Convex);
}

// The names a model takes, "a, b, c".
std::string ModelSolverList(ExplicitModel model) {
  std::string list;
  for (const std::string& name :
       SolverNames(ModelProblemKind(model), model == ExplicitModel::Convex)) {
    list += (list.empty() ? "" : ", ") + name;
  }
  return list;
}

constexpr char kConvexDefaultSolver[] = "convex-newton";

// The explicit variants, for messages and usage texts.
std::string ExplicitVariantGrammar() {
  return "cone/<solver>[-cold] with one of " + ModelSolverList(ExplicitModel::Cone) +
         ", convex/<solver> with one of " + ModelSolverList(ExplicitModel::Convex) +
         ", pyramid/<solver> or relaxed/<solver> with one of " +
         SolverNameList(ProblemKind::Linear) + ", or soft";
}

}  // namespace

const char* ToString(ExplicitModel model) { return internal::NameIn(kExplicitModelNames, model); }

bool ParseExplicitModel(const std::string& name, ExplicitModel* model) {
  return internal::ValueIn(kExplicitModelNames, name, model);
}

bool ExplicitStepperOptions::IsValid(std::string* why) const {
  const bool soft = model == ExplicitModel::Soft;
  return Check()
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
      .Require(solver_time_limit >= 0.0 && std::isfinite(solver_time_limit), "solver_time_limit",
               solver_time_limit, "must be >= 0 and finite")
      .Done(why);
}

// The solver starts from the impulses matched to the previous step's (zero for new contacts).
SolverOptions ExplicitStepperOptions::SolverSettings() const {
  SolverOptions settings;
  settings.tolerance = tolerance;
  settings.max_iterations = max_iterations;
  settings.warm_start = warm_start;
  settings.time_limit_seconds = solver_time_limit;
  return settings;
}

ExplicitStepper::ExplicitStepper(std::vector<Body> bodies, const ContactLawTable& laws,
                                 const ExplicitStepperOptions& options)
    : bodies_(std::move(bodies)), options_(options) {
  RequireValidOptions(options_, "explicit stepper");
  if (options_.model == ExplicitModel::Convex && options_.solver == "auto") {
    options_.solver = kConvexDefaultSolver;
  }
  if (options_.model != ExplicitModel::Soft &&
      IsSolverName(options_.solver, ProblemKind::GlobalFriction) &&
      !ModelTakesSolver(options_.model, options_.solver)) {
    throw InputError("explicit stepper: the " + std::string(ToString(options_.model)) +
                     " model does not take " + options_.solver + " (it takes " +
                     ModelSolverList(options_.model) + ")");
  }
  std::string why;
  if (!laws.IsValid(&why)) throw InputError("explicit stepper: " + why);
  ValidateBodies(bodies_, /*dynamic=*/true);
  std::vector<std::string> names;
  for (const Body& body : bodies_) names.push_back(body.name);
  law_table_ = laws;
  laws_ = ContactLawsByIndex(laws, names);
  for (int worker = 0; worker < options_.threads; ++worker) {
    models_.push_back(internal::MakeExplicitContactModel(options_));
  }
  pool_ = std::make_unique<internal::WorkerPool>(options_.threads);
  pool_runner_ = std::make_unique<internal::PoolRunner>(pool_.get());
  // Each worker's narrow-phase scratch at the most points a pair can give (a polygon of
  // kMaxSupportCandidates), so that it never grows mid-run on whichever worker meets such a pair.
  worker_points_.resize(options_.threads);
  for (std::vector<ContactPoint>& points : worker_points_) points.reserve(kMaxSupportCandidates);
  for (const Body& body : bodies_) {
    workspace_.fixed.push_back(body.fixed ? 1 : 0);
    workspace_.match_radius.push_back(internal::ExplicitWorkspace::kMatchRadius *
                                      body.shape.BoundingRadius());
  }
  CheckShapePairs();
}

ExplicitStepper::~ExplicitStepper() = default;

// Every pair of shapes that may meet (not both fixed) needs an explicit distance; checked once
// per pair of kinds (the first body of each kind named), rather than at the step where such a
// pair first comes near.
void ExplicitStepper::CheckShapePairs() const {
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

const ComplementaritySolver& ExplicitStepper::solver() const { return models_[0]->solver(); }

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

internal::ExplicitStepContext ExplicitStepper::Context() {
  return internal::ExplicitStepContext{bodies_, options_, workspace_};
}

void ExplicitStepper::ComputeFreeVelocities(const std::vector<Vector6d>& applied_impulses) {
  const size_t n = bodies_.size();
  internal::ExplicitWorkspace& w = workspace_;
  w.inverse_mass.resize(n);
  w.mass_matrix.resize(n);
  w.velocity.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Body& body = bodies_[i];
    w.inverse_mass[i].setZero();
    w.mass_matrix[i].setZero();
    w.velocity[i].setZero();
    if (body.fixed) continue;
    // An isotropic inertia (a sphere's, a cube's) is the same in every frame: kept exact, so
    // that nsgs-velocity finds M^-1 = diag(s I, t I) and forms M^-1 H from the two scales.
    const Eigen::Matrix3d& body_inertia = body.mass.body_inertia;
    const Eigen::Matrix3d inertia = body_inertia == body_inertia(0, 0) * Eigen::Matrix3d::Identity()
                                        ? body_inertia
                                        : WorldInertia(body.mass, body.state.orientation);
    const Eigen::Matrix3d inertia_inverse = inertia.inverse();
    w.inverse_mass[i].topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() / body.mass.mass;
    w.inverse_mass[i].bottomRightCorner<3, 3>() = inertia_inverse;
    w.mass_matrix[i].topLeftCorner<3, 3>() = body.mass.mass * Eigen::Matrix3d::Identity();
    w.mass_matrix[i].bottomRightCorner<3, 3>() = inertia;
    const Eigen::Vector3d& omega = body.state.angular_velocity;
    Vector6d impulse;
    impulse.head<3>() = options_.h * body.mass.mass * options_.gravity;
    impulse.tail<3>() = -options_.h * omega.cross(inertia * omega);
    if (!applied_impulses.empty()) impulse += applied_impulses[i];
    w.velocity[i].head<3>() = body.state.linear_velocity;
    w.velocity[i].tail<3>() = omega;
    w.velocity[i] += w.inverse_mass[i] * impulse;
  }
}

// Pairs within the margin plus both reaches enter the problem, so a fast body meets the ground
// in the step it would pass it (speculative contact; the phi / h term lets the gap close).
double ExplicitStepper::Reach(int i) const {
  if (bodies_[i].fixed) return 0.0;
  const Vector6d& v = workspace_.velocity[i];
  return options_.h * (v.head<3>().norm() + v.tail<3>().norm() * bodies_[i].shape.BoundingRadius());
}

void ExplicitStepper::ComputeReach() {
  const int n = static_cast<int>(bodies_.size());
  reach_.resize(n);
  for (int i = 0; i < n; ++i) reach_[i] = Reach(i);
}

bool ExplicitStepper::GrowReaches() {
  bool grew = false;
  grown_.assign(bodies_.size(), 0);
  for (int i = 0; i < static_cast<int>(bodies_.size()); ++i) {
    const double end = Reach(i);
    if (!bodies_[i].fixed && end > reach_[i] + 0.5 * options_.contact_margin) {
      reach_[i] = end;
      grown_[i] = 1;
      grew = true;
    }
  }
  return grew;
}

// Each body's bounding sphere and box, grown by half the margin and its reach.
void ExplicitStepper::UpdateBounds() {
  const int n = static_cast<int>(bodies_.size());
  spheres_.resize(n);
  rotations_.resize(n);
  for (int i = 0; i < n; ++i) {
    rotations_[i] = bodies_[i].state.orientation.toRotationMatrix();
    UpdateBound(i);
  }
}

void ExplicitStepper::UpdateBound(int i) {
  const double slack = 0.5 * options_.contact_margin + reach_[i];
  spheres_[i].centre = bodies_[i].state.position;
  spheres_[i].radius = bodies_[i].shape.BoundingRadius() + slack;
  spheres_[i].half_extents = bodies_[i].shape.BoundingHalfExtents(rotations_[i]).array() + slack;
  spheres_[i].fixed = bodies_[i].fixed;
}

// Contact points of every pair the broad phase keeps, with gaps below the margin plus both
// bodies' reaches.
void ExplicitStepper::FindContacts(bool only_grown) {
  UpdateBounds();
  if (only_grown) {
    broad_phase_.FindAround(spheres_, grown_, &pairs_);  // the first search's pairs and more
  } else {
    broad_phase_.Find(spheres_, &pairs_);
  }
  MatchPreviousContacts();
  record_.contacts.clear();
  workspace_.previous_range.clear();
  const int num_pairs = static_cast<int>(pairs_.size());
  const int chunks = std::min(num_pairs / kMinPairsPerChunk, 4 * pool_->size());
  if (pool_->size() == 1 || chunks <= 1) {
    SearchPairs(0, num_pairs, only_grown, &points_, &record_.contacts, &workspace_.previous_range);
    return;
  }
  // Chunks of pairs on the pool, joined in pair order: the same list for any number of threads.
  if (static_cast<int>(batches_.size()) < chunks) batches_.resize(chunks);
  auto search = [&](int chunk, int worker) {
    ContactBatch& batch = batches_[chunk];
    batch.contacts.clear();
    batch.previous_range.clear();
    const int first = static_cast<int>(static_cast<int64_t>(num_pairs) * chunk / chunks);
    const int end = static_cast<int>(static_cast<int64_t>(num_pairs) * (chunk + 1) / chunks);
    SearchPairs(first, end, only_grown, &worker_points_[worker], &batch.contacts,
                &batch.previous_range);
  };
  pool_->Run(chunks, search);
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const ContactBatch& batch = batches_[chunk];
    record_.contacts.insert(record_.contacts.end(), batch.contacts.begin(), batch.contacts.end());
    workspace_.previous_range.insert(workspace_.previous_range.end(), batch.previous_range.begin(),
                                     batch.previous_range.end());
  }
}

// Each pair's range in the previous list, and that the geometry has a distance for it (checked
// here, in pair order, so that the error names the same pair on any number of threads).
void ExplicitStepper::MatchPreviousContacts() {
  const std::vector<ExplicitContact>& previous = workspace_.previous;
  pair_previous_.resize(pairs_.size());
  // The previous list and the pairs are both in (i, j) order: one cursor finds each pair's range.
  int cursor = 0;
  const int num_previous = static_cast<int>(previous.size());
  for (size_t k = 0; k < pairs_.size(); ++k) {
    const auto [i, j] = pairs_[k];
    CheckSupported(i, j);
    while (cursor < num_previous &&
           std::make_pair(previous[cursor].body_a, previous[cursor].body_b) < pairs_[k]) {
      ++cursor;
    }
    int end = cursor;
    while (end < num_previous && previous[end].body_a == i && previous[end].body_b == j) ++end;
    pair_previous_[k] = {cursor, end};
  }
}

void ExplicitStepper::CheckSupported(int i, int j) const {
  const Body& a = bodies_[i];
  const Body& b = bodies_[j];
  if (!geometry_.Supports(a.shape.kind, b.shape.kind)) {
    throw InputError("explicit stepper: no explicit distance between a " + a.shape.Name() +
                     " and a " + b.shape.Name() + " (bodies " + a.name + ", " + b.name + ")");
  }
}

void ExplicitStepper::SearchPairs(int first, int end, bool only_grown,
                                  std::vector<ContactPoint>* points,
                                  std::vector<ExplicitContact>* contacts,
                                  std::vector<std::pair<int, int>>* previous_range) const {
  const std::vector<ExplicitContact>& previous = workspace_.previous;
  for (int k = first; k < end; ++k) {
    const auto [i, j] = pairs_[k];
    const std::pair<int, int> range = pair_previous_[k];
    if (only_grown && !grown_[i] && !grown_[j]) {
      // Same poses, same threshold: the first search's contacts of the pair.
      contacts->insert(contacts->end(), previous.begin() + range.first,
                       previous.begin() + range.second);
      previous_range->resize(contacts->size(), range);
      continue;
    }
    AddPairContacts(i, j, range, points, contacts, previous_range);
  }
}

void ExplicitStepper::AddPairContacts(int i, int j, std::pair<int, int> range,
                                      std::vector<ContactPoint>* points,
                                      std::vector<ExplicitContact>* contacts,
                                      std::vector<std::pair<int, int>>* previous_range) const {
  const Body& a = bodies_[i];
  const Body& b = bodies_[j];
  ShapePose pose_a, pose_b;
  pose_a.position = a.state.position;
  pose_a.rotation = rotations_[i];
  pose_b.position = b.state.position;
  pose_b.rotation = rotations_[j];
  points->clear();
  geometry_.FindContacts(a.shape, pose_a, b.shape, pose_b,
                         options_.contact_margin + reach_[i] + reach_[j], points);
  // Warm starts match contacts in the frame of a moving body of the pair (B unless B is
  // fixed): there a point stays put while the body slides or turns.
  const bool on_b = !b.fixed;
  const Body& anchor = on_b ? b : a;
  for (const ContactPoint& point : *points) {
    ExplicitContact& c = contacts->emplace_back();
    c.body_a = i;
    c.body_b = j;
    c.point = point;
    ContactTangentBasis(point.normal, &c.tangent1, &c.tangent2);
    c.anchor_point = (on_b ? pose_b : pose_a).rotation.transpose() *
                     ((on_b ? point.point_b : point.point_a) - anchor.state.position);
    previous_range->push_back(range);
  }
}

// b_N of a contact: phi / h, which lets the gap close within the step but not overshoot; with
// restitution (for models whose impulses set the end-of-step velocities), a contact approaching
// faster than restitution_velocity that the step would close leaves at e times that speed instead.
double ExplicitStepper::NormalOffset(const ExplicitContact& contact, const Matrix36& rows_a,
                                     const Matrix36& rows_b, const ContactLaw& law) const {
  double offset = contact.point.distance / options_.h;
  if (law.restitution > 0.0 && models_[0]->ConstrainsEndVelocities()) {
    // The normal velocity before the step, from the bodies' start twists.
    const double approach = rows_a.row(0).dot(internal::StartTwist(bodies_[contact.body_a])) +
                            rows_b.row(0).dot(internal::StartTwist(bodies_[contact.body_b]));
    if (approach < -options_.restitution_velocity && offset + approach < 0.0) {
      offset = std::min(offset, law.restitution * approach);
    }
  }
  return offset;
}

// True if a contact of the current search that the previous list (the first search of the step,
// already solved) lacks would be violated by the end-of-step velocities.
bool ExplicitStepper::NewContactViolated(const std::vector<Vector6d>& end_velocity) const {
  for (size_t index = 0; index < record_.contacts.size(); ++index) {
    const ExplicitContact& c = record_.contacts[index];
    const auto [first, last] = workspace_.previous_range[index];
    bool known = false;
    for (int k = first; k < last && !known; ++k) {
      known = workspace_.previous[k].point.point_b == c.point.point_b;
    }
    if (!known && Violated(c, end_velocity)) return true;
  }
  return false;
}

// u_N + b_N < 0 at the given velocities.
bool ExplicitStepper::Violated(const ExplicitContact& c,
                               const std::vector<Vector6d>& velocity) const {
  const Body& a = bodies_[c.body_a];
  const Body& b = bodies_[c.body_b];
  const Matrix36 rows_a = -BodyFrameRows(c, c.point.point_a, a.state.position);
  const Matrix36 rows_b = BodyFrameRows(c, c.point.point_b, b.state.position);
  const double normal_velocity =
      rows_a.row(0).dot(velocity[c.body_a]) + rows_b.row(0).dot(velocity[c.body_b]);
  return normal_velocity + NormalOffset(c, rows_a, rows_b, laws_.Get(c.body_a, c.body_b)) < 0.0;
}

// What FindContacts(true) and NewContactViolated() would decide, from the grown bodies' pairs
// alone: the other pairs keep their contacts, so only these can add one. On a pile bodies grow
// in most steps and almost never add a closing contact; the full search rebuilds and matches
// every pair's contacts to learn that. The pairs are those FindAround() would search again: the
// first search's with a grown body and the grown spheres' new ones.
bool ExplicitStepper::GrownContactViolated() {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (grown_[i]) UpdateBound(static_cast<int>(i));
  }
  // Where the broad phase would sweep again, so does the full search.
  if (!broad_phase_.FindGrown(spheres_, grown_, &grown_pairs_)) return true;
  for (const auto& [i, j] : pairs_) {
    if (grown_[i] || grown_[j]) grown_pairs_.emplace_back(i, j);
  }
  std::sort(grown_pairs_.begin(), grown_pairs_.end());
  grown_pairs_.erase(std::unique(grown_pairs_.begin(), grown_pairs_.end()), grown_pairs_.end());
  const std::vector<ExplicitContact>& contacts = record_.contacts;  // in pair order
  for (const auto& [i, j] : grown_pairs_) {
    CheckSupported(i, j);
    const auto first = std::lower_bound(contacts.begin(), contacts.end(), std::make_pair(i, j),
                                        [](const ExplicitContact& c, std::pair<int, int> p) {
                                          return std::make_pair(c.body_a, c.body_b) < p;
                                        });
    auto last = first;
    while (last != contacts.end() && last->body_a == i && last->body_b == j) ++last;
    grown_contacts_.clear();
    grown_ranges_.clear();
    AddPairContacts(i, j, {0, 0}, &points_, &grown_contacts_, &grown_ranges_);
    for (const ExplicitContact& c : grown_contacts_) {
      const bool known = std::any_of(first, last, [&](const ExplicitContact& p) {
        return p.point.point_b == c.point.point_b;
      });
      if (!known && Violated(c, workspace_.velocity)) return true;
    }
  }
  return false;
}

// Each contact's rows, its contact-frame velocity J nu_f + [b_N, 0, 0], its friction
// coefficient (in chunks on the pool: each contact's are its own), and the contacts of every
// moving body.
void ExplicitStepper::ComputeFrameRows() {
  internal::ExplicitWorkspace& w = workspace_;
  const std::vector<ExplicitContact>& contacts = record_.contacts;
  const int nc = static_cast<int>(contacts.size());
  w.rows_a.resize(nc);
  w.rows_b.resize(nc);
  w.contact_velocity.resize(3 * nc);
  w.normal_offset.resize(nc);
  w.mu.resize(nc);
  const int chunks = std::min(nc / kMinContactsPerChunk, 4 * pool_->size());
  if (pool_->size() == 1 || chunks <= 1) {
    FrameRowsOf(0, nc);
  } else {
    auto rows = [&](int chunk, int /*worker*/) {
      FrameRowsOf(static_cast<int>(static_cast<int64_t>(nc) * chunk / chunks),
                  static_cast<int>(static_cast<int64_t>(nc) * (chunk + 1) / chunks));
    };
    pool_->Run(chunks, rows);
  }
  const int n = static_cast<int>(bodies_.size());
  w.by_body_begin.assign(static_cast<size_t>(n) + 1, 0);
  for (const ExplicitContact& contact : contacts) {
    if (!bodies_[contact.body_a].fixed) ++w.by_body_begin[contact.body_a + 1];
    if (!bodies_[contact.body_b].fixed) ++w.by_body_begin[contact.body_b + 1];
  }
  for (int i = 0; i < n; ++i) w.by_body_begin[i + 1] += w.by_body_begin[i];
  w.by_body.resize(w.by_body_begin[n]);
  by_body_fill_.assign(w.by_body_begin.begin(), w.by_body_begin.end() - 1);
  for (int c = 0; c < nc; ++c) {
    const ExplicitContact& contact = contacts[c];
    if (!bodies_[contact.body_a].fixed) w.by_body[by_body_fill_[contact.body_a]++] = {c, 0};
    if (!bodies_[contact.body_b].fixed) w.by_body[by_body_fill_[contact.body_b]++] = {c, 1};
  }
}

void ExplicitStepper::FrameRowsOf(int first, int end) {
  internal::ExplicitWorkspace& w = workspace_;
  for (int c = first; c < end; ++c) {
    const ExplicitContact& contact = record_.contacts[c];
    const Body& a = bodies_[contact.body_a];
    const Body& b = bodies_[contact.body_b];
    w.rows_a[c] = -BodyFrameRows(contact, contact.point.point_a, a.state.position);
    w.rows_b[c] = BodyFrameRows(contact, contact.point.point_b, b.state.position);
    w.contact_velocity.segment<3>(3 * c) =
        w.rows_a[c] * w.velocity[contact.body_a] + w.rows_b[c] * w.velocity[contact.body_b];
    const ContactLaw& law = laws_.Get(contact.body_a, contact.body_b);
    w.mu[c] = law.mu;
    const double offset = NormalOffset(contact, w.rows_a[c], w.rows_b[c], law);
    w.contact_velocity[3 * c] += offset;
    w.normal_offset[c] = offset;
  }
}

void ExplicitStepper::SolveContacts() {
  ComputeFrameRows();
  record_.num_contacts = static_cast<int>(record_.contacts.size());
  internal::ExplicitWorkspace& w = workspace_;
  w.contact_bodies.resize(record_.contacts.size());
  for (size_t c = 0; c < record_.contacts.size(); ++c) {
    w.contact_bodies[c] = {record_.contacts[c].body_a, record_.contacts[c].body_b};
  }
  w.islands.Find(w.fixed, w.contact_bodies, /*one_island=*/!options_.islands);
  SolveIslands();
}

namespace {

// The kinetic energy of the island's bodies at the twists `velocity`.
double IslandKineticEnergy(const internal::IslandView& island, const internal::ExplicitWorkspace& w,
                           const std::vector<Vector6d>& velocity) {
  double energy = 0.0;
  for (int k = 0; k < island.num_bodies; ++k) {
    const int i = island.bodies[k];
    energy += 0.5 * velocity[i].dot(w.mass_matrix[i] * velocity[i]);
  }
  return energy;
}

}  // namespace

// Contact impulses take energy out, except where they push an overlap apart (at most at its
// depth over h, the normal offset b_N = phi / h); restitution returns at most the approach
// speed. An unsolved island's best impulses that leave more kinetic energy than that allows
// (the free twists' energy, plus each body's mass at the island's deepest overlap over h) are no
// answer, the wreck of a diverged run: its bodies keep their free twists and its contacts no
// impulse, and the message says so.
void ExplicitStepper::GuardUnsolvedIsland(const internal::IslandView& island,
                                          internal::ExplicitIslandResult* result) {
  internal::ExplicitWorkspace& w = workspace_;
  double deepest = 0.0;
  for (int k = 0; k < island.num_links; ++k) {
    deepest = std::max(deepest, -record_.contacts[island.links[k]].point.distance);
  }
  const double push = deepest / options_.h;
  double allowed = 0.0;
  for (int k = 0; k < island.num_bodies; ++k) {
    allowed += 0.5 * bodies_[island.bodies[k]].mass.mass * push * push;
  }
  const double free_energy = IslandKineticEnergy(island, w, w.start_velocity);
  allowed += 1.01 * free_energy + 1e-12;
  const double energy = IslandKineticEnergy(island, w, w.velocity);
  if (energy <= allowed) return;  // false for NaN
  for (int k = 0; k < island.num_bodies; ++k) {
    w.velocity[island.bodies[k]] = w.start_velocity[island.bodies[k]];
  }
  for (int k = 0; k < island.num_links; ++k) {
    record_.contacts[island.links[k]].impulse.setZero();
  }
  char text[200];
  std::snprintf(text, sizeof(text),
                "; its impulses were not applied: they took the kinetic energy from %.3g to %.3g J "
                "(at most %.3g without a solution)",
                free_energy, energy, allowed);
  result->summary.message += text;
}

// The island of at least kIslandOnThreads contacts and more than half the step's, or -1.
int ExplicitStepper::LargeIsland() const {
  const int num_islands = workspace_.islands.num_islands();
  int largest = -1, largest_links = 0, links = 0;
  for (int k = 0; k < num_islands; ++k) {
    const int n = workspace_.islands.island(k).num_links;
    links += n;
    if (n > largest_links) {
      largest = k;
      largest_links = n;
    }
  }
  return largest_links >= kIslandOnThreads && 2 * largest_links > links ? largest : -1;
}

// The island solved alone on the pool's threads (kIslandOnThreads), or -1.
int ExplicitStepper::IslandOnThreads() const {
  if (pool_->size() == 1 || large_island_sweeps_ < kSweepsOnThreads ||
      !models_[0]->UsesParallelRunner()) {
    return -1;
  }
  return LargeIsland();
}

// Each island posed and solved by the model of the worker that takes it; the record's figures
// gathered in island order afterwards, so that they do not depend on the threads.
void ExplicitStepper::SolveIslands() {
  const int num_islands = workspace_.islands.num_islands();
  if (static_cast<int>(island_results_.size()) < num_islands) island_results_.resize(num_islands);
  // Sized before the workers fill their contacts' entries.
  workspace_.model_unknowns.setZero(models_[0]->unknowns_per_contact() *
                                    static_cast<Eigen::Index>(record_.contacts.size()));
  const internal::ExplicitStepContext step = Context();
  auto solve = [&](int island, int worker) {
    const internal::IslandView view = workspace_.islands.island(island);
    internal::ExplicitIslandResult& result = island_results_[island];
    models_[worker]->Solve(step, view, &record_.contacts, &result);
    if (observer_) {
      const Eigen::VectorXd* r = nullptr;
      if (const GlobalFrictionContactProblem* problem = models_[worker]->LastGlobalProblem(&r)) {
        const std::lock_guard<std::mutex> lock(observer_mutex_);
        observer_(island, *problem, *r);
      }
    }
    models_[worker]->ApplyImpulses(step, view, record_.contacts);
    if (!result.summary.IsSolved()) GuardUnsolvedIsland(view, &result);
  };
  const int alone = IslandOnThreads();
  if (alone >= 0) {
    // Reset however the solve ends: a runner left set would be called from inside the pool.
    struct Lent {
      internal::ExplicitContactModel* model;
      ~Lent() { model->SetParallelRunner(nullptr); }
    } lent{models_[0].get()};
    lent.model->SetParallelRunner(pool_runner_.get());
    solve(alone, 0);
  }
  auto solve_others = [&](int island, int worker) {
    if (island != alone) solve(island, worker);
  };
  // A worker's model grows to the islands it takes.
  pool_->RunStriped(num_islands, solve_others);
  const int large = LargeIsland();
  large_island_sweeps_ = large >= 0 ? island_results_[large].summary.iterations : 0;
  record_.islands = num_islands;
  record_.problem_size = 0;
  int attempts = 1;
  for (int k = 0; k < num_islands; ++k) {
    record_.problem_size += island_results_[k].problem_size;
    attempts = std::max(attempts, island_results_[k].attempts);
  }
  record_.attempts = passes_ + attempts;
  if (num_islands == 0) {
    record_.summary = internal::NoContactSummary(options_.solver);
    record_.failed_islands = 0;
    return;
  }
  record_.failed_islands = internal::CombineIslandSummaries(
      num_islands, [&](int k) -> const SolverSummary& { return island_results_[k].summary; },
      &record_.summary);
}

// A body that the impulses sped up may reach a pair left out (its gap above the margin plus the
// free reaches): then the pairs are found again with the end-of-step reaches and the step is
// solved again, warm started from this solution.
void ExplicitStepper::SearchWithEndVelocities() {
  internal::ExplicitWorkspace& w = workspace_;
  for (int pass = 0; pass < kMaxReachPasses && models_[0]->ConstrainsEndVelocities(); ++pass) {
    if (!GrowReaches()) break;
    // Larger reaches only add contacts. Where every added one is open at the end-of-step
    // velocities (u_N + b_N >= 0), the solution with zero impulses on them solves the larger
    // problem: it stands.
    if (!GrownContactViolated()) break;
    std::swap(w.previous, record_.contacts);
    w.end_velocity.swap(w.velocity);
    w.velocity = w.start_velocity;
    FindContacts(/*only_grown=*/true);
    if (!NewContactViolated(w.end_velocity)) {
      std::swap(w.previous, record_.contacts);
      w.velocity.swap(w.end_velocity);
      break;
    }
    ++passes_;
    const int iterations = record_.summary.iterations;
    SolveContacts();
    record_.summary.iterations += iterations;
  }
}

void ExplicitStepper::Advance() {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    Body& body = bodies_[i];
    if (body.fixed) continue;
    const Vector6d& nu = workspace_.velocity[i];  // the end-of-step twist, after the impulses
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
  if (!applied_impulses.empty() && applied_impulses.size() != bodies_.size()) {
    throw InputError("explicit stepper: " + std::to_string(applied_impulses.size()) +
                     " applied impulses for " + std::to_string(bodies_.size()) + " bodies");
  }
  start_states_.resize(bodies_.size());
  for (size_t i = 0; i < bodies_.size(); ++i) start_states_[i] = bodies_[i].state;
  applied_ = applied_impulses;
  ComputeFreeVelocities(applied_impulses);
  // The previous step's contacts, for warm starts: FindContacts() lists them by pair, in the
  // broad phase's (i, j) order, which ExplicitWorkspace::Previous() searches.
  std::swap(workspace_.previous, record_.contacts);
  ComputeReach();
  workspace_.start_velocity = workspace_.velocity;
  FindContacts();
  passes_ = 0;
  SolveContacts();
  SearchWithEndVelocities();
  record_.max_penetration = 0.0;
  for (const ExplicitContact& c : record_.contacts) {
    record_.max_penetration = std::max(record_.max_penetration, -c.point.distance);
  }
  Advance();
  ++steps_;
  derivable_ = true;
  time_ += options_.h;
  record_.time = time_;
  record_.step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record_;
}

std::unique_ptr<StepDerivative> ExplicitStepper::LastStepDerivative() const {
  if (!derivable_) {
    throw InputError(
        "explicit stepper: no step taken since it was made or restored, so none to "
        "differentiate");
  }
  if (!record_.summary.IsSolved()) {
    throw InputError("explicit stepper: the step at t = " + std::to_string(record_.time) +
                     " was not solved (" + record_.summary.message + "), so it has no derivative");
  }
  const internal::ExplicitStepData data{bodies_,          start_states_, applied_,
                                        record_.contacts, workspace_,    laws_,
                                        law_table_,       options_,      *models_[0]};
  return std::make_unique<internal::ExplicitStepDerivative>(data);
}

namespace {

struct ExplicitSnapshot : StepperSnapshot {
  std::vector<RigidBodyState> states;
  std::vector<ExplicitContact> contacts;  // the warm start of the next step
  double time = 0.0;
  int steps = 0;
  const void* owner = nullptr;
};

}  // namespace

void ExplicitStepper::SetBodyState(int i, const RigidBodyState& state) {
  internal::RequireSettableBodyState("explicit", bodies_, i, state);
  bodies_[i].state = state;
  derivable_ = false;
}

std::unique_ptr<StepperSnapshot> ExplicitStepper::Save() const {
  auto snapshot = std::make_unique<ExplicitSnapshot>();
  for (const Body& b : bodies_) snapshot->states.push_back(b.state);
  snapshot->contacts = record_.contacts;
  snapshot->time = time_;
  snapshot->steps = steps_;
  snapshot->owner = this;
  return snapshot;
}

void ExplicitStepper::Restore(const StepperSnapshot& snapshot) {
  const auto* s = dynamic_cast<const ExplicitSnapshot*>(&snapshot);
  if (s == nullptr || s->owner != this) {
    throw InputError("explicit stepper: a snapshot of another stepper cannot be restored");
  }
  for (size_t i = 0; i < bodies_.size(); ++i) bodies_[i].state = s->states[i];
  record_.contacts = s->contacts;
  time_ = s->time;
  steps_ = s->steps;
  derivable_ = false;
}

// ---------------------------------------------------------------------------------------------
// Scene files and variants

namespace {

std::string ReadExplicitVariant(const std::string& variant, ExplicitStepperOptions* options) {
  if (variant == "soft") {
    options->model = ExplicitModel::Soft;
    return "";
  }
  SolverVariant parsed;
  std::string why;
  ExplicitModel model = ExplicitModel::Cone;
  const bool known = SplitSolverVariant(variant, &parsed, &why) &&
                     ParseExplicitModel(parsed.model, &model) && model != ExplicitModel::Soft;
  if (!known || !ModelTakesSolver(model, parsed.solver)) {
    return "unknown explicit variant '" + variant + "' (expected " + ExplicitVariantGrammar() +
           "; e.g. cone/nsgs)";
  }
  if (model == ExplicitModel::Pyramid && FindSolver(parsed.solver)->needs_positive_diagonal) {
    return "explicit variant '" + variant + "': " + parsed.solver +
           " cannot take the pyramid model's LCP (its gamma rows have a zero diagonal); use "
           "relaxed/" +
           parsed.solver;
  }
  options->model = model;
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

// "model" first: it says which problem kind "solver" must take.
void ReadModelAndSolver(const internal::Reader& in, const internal::Json& object,
                        const std::string& prefix, ExplicitStepperOptions* options) {
  if (object.contains("model")) {
    const std::string model = in.String(object.at("model"), prefix + "model");
    if (!ParseExplicitModel(model, &options->model)) {
      in.Fail(prefix + "model",
              "must be \"cone\", \"pyramid\", \"relaxed\", \"convex\" or "
              "\"soft\", not \"" +
                  model + "\"");
    }
  }
  if (!object.contains("solver")) {
    if (options->model == ExplicitModel::Convex) options->solver = kConvexDefaultSolver;
    return;
  }
  if (!ModelTakesSolver(options->model, options->solver)) {
    const char* kind = options->model == ExplicitModel::Cone     ? "frictional contact"
                       : options->model == ExplicitModel::Convex ? "convex-model"
                                                                 : "linear";
    in.Fail(prefix + "solver", "unknown solver '" + options->solver + "' for the " +
                                   ToString(options->model) + " model (expected a " + kind +
                                   " solver: " + ModelSolverList(options->model) + ")");
  }
}

void ReadSoft(const internal::Reader& in, const internal::Json& object, const std::string& prefix,
              ExplicitStepperOptions* options) {
  if (object.contains("soft")) {
    const internal::Json& soft = object.at("soft");
    const std::string path = prefix + "soft";
    in.OnlyKeys(soft, path, {"stiffness", "damping"});
    options->soft_stiffness = in.Positive(soft, path, "stiffness");
    options->soft_damping = in.Number(soft, path, "damping", 0.0);
    if (!(options->soft_damping >= 0.0)) in.Fail(path + ".damping", "must be >= 0");
  }
  if (options->model == ExplicitModel::Soft && !(options->soft_stiffness > 0.0)) {
    in.Fail(prefix + "soft",
            "the soft model needs \"soft\": {\"stiffness\": K_p, \"damping\": K_d}");
  }
}

class ExplicitConfig final : public StepperConfigOf<ExplicitStepperOptions> {
 public:
  std::unique_ptr<StepperConfig> Clone() const override {
    return std::make_unique<ExplicitConfig>(*this);
  }
  std::vector<std::string> OwnKeys() const override {
    return {"model", "contact_margin", "friction_directions", "restitution_velocity", "soft"};
  }
  void Read(const internal::Reader& in, const internal::Json& object, const std::string& path,
            const std::string& prefix) override {
    ExplicitStepperOptions& o = options;
    internal::ReadStepperSettings(in, object, path, prefix, /*h_required=*/true, 0, &o);
    ReadModelAndSolver(in, object, prefix, &o);
    o.contact_margin = in.Number(object, path, "contact_margin", o.contact_margin);
    if (!(o.contact_margin > 0.0)) in.Fail(prefix + "contact_margin", "must be > 0");
    o.friction_directions = static_cast<int>(
        in.Integer(object, path, "friction_directions", o.friction_directions, 3, 64));
    o.restitution_velocity =
        in.Number(object, path, "restitution_velocity", o.restitution_velocity);
    if (!(o.restitution_velocity >= 0.0)) in.Fail(prefix + "restitution_velocity", "must be >= 0");
    ReadSoft(in, object, prefix, &o);
    std::string why;
    if (!o.IsValid(&why)) in.Fail(path, why);
  }
  std::string variant() const override {
    if (options.model == ExplicitModel::Soft) return "soft";
    return SolverVariant{ToString(options.model), options.solver, !options.warm_start}.ToString();
  }
  std::string SetVariant(const std::string& variant) override {
    return ReadExplicitVariant(variant, &options);
  }
  std::string VariantGrammar() const override { return ExplicitVariantGrammar(); }
  // The pyramid's gamma rows have a zero diagonal; the relaxed cone's LCP takes every solver.
  std::vector<std::string> DefaultVariants() const override {
    std::vector<std::string> variants;
    internal::AppendComparedVariants("cone/", ProblemKind::GlobalFriction, false, &variants);
    internal::AppendComparedVariants("pyramid/", ProblemKind::Linear, true, &variants);
    internal::AppendComparedVariants("relaxed/", ProblemKind::Linear, false, &variants);
    variants.push_back(std::string("convex/") + kConvexDefaultSolver);
    return variants;
  }
  std::unique_ptr<Stepper> MakeStepper(const std::vector<Body>& bodies, const ContactLawTable& laws,
                                       const std::vector<Actuator>& /*actuators*/) const override {
    return std::make_unique<ExplicitStepper>(bodies, laws, options);
  }
};

}  // namespace

std::unique_ptr<StepperConfig> MakeExplicitConfig() { return std::make_unique<ExplicitConfig>(); }

bool IsExplicitVariant(const std::string& variant) {
  return internal::ReadsVariant(&ReadExplicitVariant, variant);
}

void ApplyExplicitVariant(const std::string& variant, ExplicitStepperOptions* options) {
  internal::ApplyVariantOrThrow(&ReadExplicitVariant, variant, options);
}

}  // namespace ncpkit
