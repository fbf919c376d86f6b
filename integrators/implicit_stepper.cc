#include "integrators/implicit_stepper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "integrators/implicit_derivative.h"
#include "integrators/json_reader.h"
#include "integrators/worker_pool.h"
#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/mcp/auto_solve.h"
#include "solvers/mcp/problem_builder.h"

namespace ncpkit {
namespace {

// Fraction of the tolerance below which a warm start is accepted without a Newton step.
constexpr double kWarmStartAcceptance = 1e-2;
// Active-set restarts of FB Newton after a stall (SolverOptions::active_set_restarts): with 3
// every dropped column measured in docs/reliability.md ("Ordinary stacks") is solved; with 5 the
// ten-box column whose landing needed 4 (each restart lowering the stalled point) no longer goes
// through the chain, and more change nothing there (the restarts stop at the first that does not
// lower it).
constexpr int kActiveSetRestarts = 5;
// How many more FB Newton runs from the best point follow the chain while each lowers it
// (RunAgain).
constexpr int kMaxRunsAgain = 3;
// How many times a step is solved again with the pairs its solution overran (OverrunPairs).
constexpr int kMaxSearchRounds = 2;
// The variant whose islands are solved by FB Newton from every start, then by the AutoSolver's
// chain from every start where FB Newton fails, then by FB Newton from the best points found
// (SolveFromStarts, RunChain, RunAgain).
constexpr char kAutoName[] = "auto";

void AddPair(ProblemBuilder* b, const ContactPairStep* s, int nu_f, int nu_g, int geometry,
             int forces) {
  VisitPairResidual(*s, [&](auto tag) {
    using Residual = typename decltype(tag)::type;
    constexpr int G = Residual::kGeometrySize;
    constexpr int P = Residual::kForceSize;
    constexpr int R = Residual::kNumResiduals;
    if constexpr (Residual::kGMoves) {
      b->AddResidualBlock<R, 6, 6, G, P>(Residual{s}, {geometry, forces, nu_f, nu_g},
                                         {nu_f, nu_g, geometry, forces});
    } else {
      b->AddResidualBlock<R, 6, G, P>(Residual{s}, {geometry, forces, nu_f},
                                      {nu_f, geometry, forces});
    }
  });
}

// The Newton-Euler functor reading its data through a pointer that the stepper updates.
struct NewtonEulerRef {
  const NewtonEulerBlock* data;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    return (*data)(x, r);
  }
};

// A state relative to a pair's local origin.
RigidBodyState Local(RigidBodyState state, const Eigen::Vector3d& origin) {
  state.position -= origin;
  return state;
}

void ShiftPoints(const Eigen::Vector3d& by, Eigen::VectorXd* geometry) {
  geometry->head<3>() += by;
  geometry->segment<3>(3) += by;
}

}  // namespace

// One island's MCP, kept while its bodies and pairs do not change: its functors read the step's
// data through pointers into this struct, which the stepper refreshes every step. Each island has
// its own solver and start point, so that islands can be solved on any thread.
struct ImplicitStepper::IslandProblem {
  std::vector<int> bodies;                 // its moving bodies
  std::vector<std::pair<int, int>> pairs;  // (F, G) of each of its pairs
  std::vector<int> pair_index;             // each pair's index in this step's pairs_
  ProblemBuilder builder;
  std::vector<int> nu_block;                                 // per body of the island
  std::vector<int> geometry_block, force_block;              // per pair of the island
  std::vector<std::unique_ptr<NewtonEulerBlock>> body_data;  // per body of the island
  std::vector<std::unique_ptr<ContactPairStep>> pair_data;   // per pair of the island
  std::unique_ptr<ComplementaritySolver> solver;
  // auto: the AutoSolver's chain, where `solver` fails from every start.
  std::unique_ptr<AutoSolver> fallback;
  AutoSolver::Summary fallback_summary;
  Eigen::VectorXd z, best_z;
  Eigen::VectorXd chain_best_z;  // the chain's best point (RunChain)
  bool contacts_change = false;
  SolverSummary summary;  // the best start's, iterations summed over the starts
  std::string report;     // its full report (keep_solver_reports)
  int attempts = 0;
  bool finite = true;  // z is finite (else the island's bodies do not move)
};

bool ImplicitStepperOptions::IsValid(std::string* why) const {
  return Check()
      .Require(IsSolverName(solver, ProblemKind::Mixed),
               "unknown solver '" + solver + "' (expected one of " +
                   SolverNameList(ProblemKind::Mixed) + ")")
      .Require(max_iterations >= 1, "max_iterations", max_iterations, "must be >= 1")
      .Require(std::isfinite(contact_margin) && contact_margin >= 0.0, "contact_margin",
               contact_margin, "must be >= 0 and finite")
      .Done(why);
}

namespace {

// The contact formulation intersects each shape's smooth inequalities (shapes.h), which only
// the built-in kinds have, and its residuals are compiled for 1, 3 or 6 of them a shape.
void RequireInequalityForm(const Body& body) {
  if (body.shape.NumInequalities() == 0) {
    throw InputError("implicit stepper: body '" + body.name + "' is a " + body.shape.Name() +
                     ", which has no inequality form (the implicit stepper takes planes, "
                     "boxes, spheres, ellipsoids, cylinders, capsules and convex shapes of at "
                     "most 6 faces; the explicit and quasistatic steppers take every "
                     "registered shape)");
  }
  if (body.shape.NumInequalities() > kPolyhedronInequalities) {
    throw InputError("implicit stepper: body '" + body.name + "' is a convex shape of " +
                     std::to_string(body.shape.NumInequalities()) +
                     " faces; the implicit stepper takes convex shapes of at most " +
                     std::to_string(kPolyhedronInequalities) +
                     " (the explicit and quasistatic steppers take any)");
  }
}

}  // namespace

ImplicitStepper::ImplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                                 const ImplicitStepperOptions& options)
    : bodies_(std::move(bodies)), laws_(std::move(laws)), options_(options) {
  RequireValidOptions(options_, "implicit stepper");
  ValidateBodies(bodies_, /*dynamic=*/true);
  for (const Body& body : bodies_) RequireInequalityForm(body);
  std::string why;
  if (bodies_.size() > 1 && !laws_.IsValid(&why)) throw InputError(why);
  std::vector<std::string> names;
  for (const Body& body : bodies_) names.push_back(body.name);
  laws_by_index_ = ContactLawsByIndex(laws_, names);
  thickest_layer_ = laws_.MaxThickness();
  SolverOptions solver_options;
  solver_options.tolerance = options_.tolerance;
  solver_options.max_iterations = options_.max_iterations;
  solver_options.warm_start = true;  // every attempt hands the solver its start point
  solver_options.record_history = options_.keep_solver_reports;
  solver_options.project_onto_bounds = true;
  // A resting contact's warm start is refined once its residual reaches 1 % of the
  // tolerance, so rounding errors do not accumulate over the steps.
  solver_options.start_acceptance = kWarmStartAcceptance;
  // Chord steps on the island's last factorization suit a start near the last solution: the
  // warm start. (From a cold start, cylinder_manipulation's steps failed 368 of 500 with them.)
  solver_options.reuse_factorization = options_.warm_start;
  // The step's problem is solved as built: its rows reach the equilibration spread (impulses
  // against multipliers) but are well posed, and a rescaled iteration only moves the answer
  // within the tolerance (semismooth_newton.h).
  solver_options.equilibrate = false;
  // A lightly loaded sticking contact's slip row (mu^2 p_n^2 - |p_t|^2, of order p_n^2) is far
  // below its multiplier sigma, and FB Newton closes the row instead of sigma and stalls; a
  // restart with the worst such pair flipped solves it (docs/reliability.md, "Ordinary
  // stacks").
  solver_options.active_set_restarts = kActiveSetRestarts;
  // A landing box face's coplanar corners make the Newton matrix singular at every iterate;
  // skipping the Newton direction once it has failed saves a factorization an iteration there
  // (docs/solvers.md: a ten-box landing 72 factorizations instead of 120, brick pyramids 2.2x
  // less solving, fewer failed steps on pushed rows).
  solver_options.skip_failed_newton = true;
  solver_options_ = solver_options;
  solver_ = CreateSolver(options_.solver, ProblemKind::Mixed, solver_options);
  const size_t n = bodies_.size();
  nu_start_.assign(n, Vector6d::Zero());
  nu_coast_.assign(n, Vector6d::Zero());
  nu_.assign(n, Vector6d::Zero());
  beyond_free_.assign(n, 0.0);
  end_pose_.resize(n);
  all_remembered_.assign(n, 1);
  chain_failed_.assign(n, 0);
  fixed_.resize(n);
  held_.assign(n, 0);
  supports_.assign(n, 0);
  fall_.assign(n, 0.0);
  end_fall_.assign(n, 0.0);
  own_load_.assign(n, 0.0);
  load_.assign(n, 0.0);
  carried_.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) fixed_[i] = bodies_[i].fixed ? 1 : 0;
  memory_layout_ = std::make_unique<internal::ImplicitMemoryLayout>(bodies_, laws_, laws_by_index_);
  spare_by_body_.assign(n, -1);
  nu_of_body_.assign(n, -1);
  pool_ = std::make_unique<internal::WorkerPool>(options_.threads);
}

ImplicitStepper::~ImplicitStepper() = default;

const ComplementaritySolver& ImplicitStepper::island_solver(int k) const {
  return *islands_.at(k)->solver;
}

std::string ImplicitStepper::variant() const {
  return SolverVariant{"", options_.solver, !options_.warm_start}.ToString();
}

const std::vector<const char*>& ImplicitStepper::PairColumns() const {
  static const std::vector<const char*> kColumns = {"ax", "ay",       "az",  "pn", "pt", "po",
                                                    "pr", "n_active", "gap", "nx", "ny", "nz"};
  return kColumns;
}

void ImplicitStepper::TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const {
  rows->clear();
  for (const ContactRecord& c : dynamic_cast<const ImplicitStepRecord&>(record).contacts) {
    PairRow row;
    row.body_a = c.body_f;
    row.body_b = c.body_g;
    const double values[12] = {c.ecp.x(), c.ecp.y(),    c.ecp.z(),    c.p_n,
                               c.p_t,     c.p_o,        c.p_r,        double(c.n_active_f),
                               c.gap,     c.normal.x(), c.normal.y(), c.normal.z()};
    std::copy(values, values + 12, row.values);
    rows->push_back(row);
  }
}

// One marker per active pair: F's equivalent contact point, the normal impulse's direction on F.
void ImplicitStepper::ContactMarkers(const StepRecord& record,
                                     std::vector<ContactMarker>* markers) const {
  markers->clear();
  for (const ContactRecord& c : dynamic_cast<const ImplicitStepRecord&>(record).contacts) {
    markers->push_back({c.ecp, c.normal, c.p_n});
  }
}

// The free velocities of every body this step (gravity and the applied impulses, no contact),
// from which each island's Newton iteration starts (a body whose contacts are all remembered
// starts from its last twist instead, PrepareAttempt); and the twists the bodies coast at
// (the same without gravity), from which the pairs of the step are found. Gravity is left out
// there: a body resting on others does not fall, and at large steps its h g over two steps
// would bring every body of a column into a speculative pair with every other one and with the
// ground; what it moves a falling body within a step (h^2 g, 1 mm at h = 0.01 s) is within the
// margin, and OverrunPairs checks the pairs of bodies that end the step further.
void ImplicitStepper::FreeVelocities(const std::vector<Vector6d>& applied_impulses) {
  const double h = options_.h;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const Body& body = bodies_[i];
    if (body.fixed) {
      nu_start_[i].setZero();
      nu_coast_[i].setZero();
      continue;
    }
    nu_coast_[i] << body.state.linear_velocity, body.state.angular_velocity;
    if (!applied_impulses.empty()) {
      const Vector6d& impulse = applied_impulses[i];
      nu_coast_[i].head<3>() += impulse.head<3>() / body.mass.mass;
      if (!impulse.tail<3>().isZero()) {
        nu_coast_[i].tail<3>() +=
            WorldInertia(body.mass, body.state.orientation).inverse() * impulse.tail<3>();
      }
    }
    nu_start_[i] = nu_coast_[i];
    nu_start_[i].head<3>() += h * options_.gravity;
  }
}

// How fast any point of F or G can move by turning about its centre as they coast.
double ImplicitStepper::Turning(int f, int g) const {
  double speed = nu_coast_[f].tail<3>().norm() * bodies_[f].shape.BoundingRadius();
  if (!bodies_[g].fixed) speed += nu_coast_[g].tail<3>().norm() * bodies_[g].shape.BoundingRadius();
  return speed;
}

// How far F and G can close along the unit axis (pointing from G towards F) in two steps as they
// coast (FreeVelocities) if their other contacts may stop either of them: each centre's approach
// towards the other along the axis, plus their turning. Boxes falling together close when the
// lower one lands, and that landing is not in their velocities; motion across the axis does not
// close a gap along it.
double ImplicitStepper::Closing(int f, int g, const Eigen::Vector3d& axis) const {
  const double approach = std::max(0.0, -nu_coast_[f].head<3>().dot(axis)) +
                          std::max(0.0, nu_coast_[g].head<3>().dot(axis));
  return 2.0 * options_.h * (approach + Turning(f, g));
}

// Whether F and G are more than `enough` apart at the given poses beyond what they can close in
// two steps (with `closing`, Closing): whether on one of a few axes the
// separation minus the closing along it exceeds `enough`. The axes are the line of centres and
// the boxes' face normals (a plane: only its normal), enough to prove neighbours in a grid apart
// whatever their diagonal offsets; a separation along any axis proves the shapes apart.
bool ImplicitStepper::Apart(int f, int g, const RigidBodyState& pose_f,
                            const RigidBodyState& pose_g, bool closing, double enough) const {
  const Shape& F = bodies_[f].shape;
  const Shape& G = bodies_[g].shape;
  const auto apart_along = [&](const Eigen::Vector3d& axis) {
    return SeparationAlongAxis(F, pose_f, G, pose_g, axis) - (closing ? Closing(f, g, axis) : 0.0) >
           enough;
  };
  if (G.kind == ShapeKind::HalfSpace) return apart_along(PlaneNormal(pose_g));
  const Eigen::Vector3d between = pose_f.position - pose_g.position;
  if (between.norm() == 0.0) return false;
  if (apart_along(between.normalized())) return true;
  for (const auto& [shape, pose] : {std::make_pair(&F, &pose_f), std::make_pair(&G, &pose_g)}) {
    if (shape->kind != ShapeKind::Box) continue;
    const Eigen::Matrix3d axes = pose->orientation.toRotationMatrix();
    for (int i = 0; i < 3; ++i) {
      const double side = axes.col(i).dot(between);
      if (side != 0.0 && apart_along((side > 0.0 ? 1.0 : -1.0) * Eigen::Vector3d(axes.col(i)))) {
        return true;
      }
    }
  }
  return false;
}

// Whether F and G can touch within the next two steps: no axis of Apart proves them more than
// the margin apart. A pair left out is then apart at the end of the step unless gravity or the
// impulses move its bodies further (OverrunPairs checks).
bool ImplicitStepper::Near(int f, int g) const {
  const Body& F = bodies_[f];
  const Body& G = bodies_[g];
  if (G.shape.kind != ShapeKind::HalfSpace) {
    // The bounding spheres first: most candidates of the broad phase end there.
    const double distance = (F.state.position - G.state.position).norm();
    // (Closing along any axis is at most both centres' speeds plus their turning.)
    const double reach =
        options_.contact_margin + thickest_layer_ +
        2.0 * options_.h *
            (nu_coast_[f].head<3>().norm() + nu_coast_[g].head<3>().norm() + Turning(f, g));
    if (distance > F.shape.BoundingRadius() + G.shape.BoundingRadius() + reach) return false;
  }
  // A quasi-rigid layer touches before the cores do.
  return !Apart(f, g, F.state, G.state, /*closing=*/true,
                options_.contact_margin + laws_by_index_.Get(f, g).thickness);
}

// The active pairs of this step (bounding-volume test), and the step's islands for them.
void ImplicitStepper::FindPairs() {
  pairs_.clear();
  left_out_.clear();
  // Candidates from the broad phase, each body's bounding sphere grown by how far it can travel
  // in two steps and half the margin, then Near on each.
  const int num_bodies = static_cast<int>(bodies_.size());
  spheres_.resize(num_bodies);
  for (int i = 0; i < num_bodies; ++i) {
    const Body& body = bodies_[i];
    BoundingSphere& sphere = spheres_[i];
    sphere.centre = body.state.position;
    sphere.fixed = body.fixed;
    const double radius = body.shape.BoundingRadius();
    const Vector6d& nu = nu_start_[i];
    const double travel =
        body.fixed ? 0.0 : 2.0 * options_.h * (nu.head<3>().norm() + nu.tail<3>().norm() * radius);
    sphere.radius = radius + travel + 0.5 * (options_.contact_margin + thickest_layer_);
  }
  broad_phase_.Find(spheres_, &candidates_);
  for (const auto& [i, j] : candidates_) {
    const int f = bodies_[i].fixed ? j : i;
    const int g = bodies_[i].fixed ? i : j;
    (Near(f, g) ? pairs_ : left_out_).emplace_back(f, g);
  }
  SetPairs();
}

// Sizes the per-pair workspace for pairs_ and finds its islands.
void ImplicitStepper::SetPairs() {
  next_memory_.resize(pairs_.size());
  reads_memory_.resize(pairs_.size());
  origin_.resize(pairs_.size());
  rest_.resize(pairs_.size());
  same_pairs_ = remembered_pairs_ == pairs_;
  has_pair_.assign(bodies_.size(), 0);
  for (const auto& [f, g] : pairs_) has_pair_[f] = has_pair_[g] = 1;
  FindIslands();
}

// Moves into the step's problem the pairs left out of it that the solution would overrun: at the
// islands' end-of-step twists, no axis of Apart proves them apart any more. Near proved every
// pair left out apart by more than the margin as they coast, so only pairs whose bodies end the
// step moved by more than the margin beyond their coasting (by gravity or impulses) are checked.
// Returns whether any pair joined; pairs_ stays in the broad phase's order.
bool ImplicitStepper::OverrunPairs() {
  if (left_out_.empty()) return false;
  const double h = options_.h;
  for (const auto& island : islands_) {
    for (size_t k = 0; k < island->bodies.size(); ++k) {
      const int i = island->bodies[k];
      nu_[i] =
          island->z.allFinite()
              ? Vector6d(island->z.segment<6>(island->builder.block_offset(island->nu_block[k])))
              : Vector6d::Zero();
      const Vector6d change = nu_[i] - nu_coast_[i];
      beyond_free_[i] = h * (change.head<3>().norm() +
                             change.tail<3>().norm() * bodies_[i].shape.BoundingRadius());
    }
  }
  const auto beyond = [&](int f, int g) {
    return beyond_free_[f] + (bodies_[g].fixed ? 0.0 : beyond_free_[g]);
  };
  // A resting scene checks nothing: its end poses are only computed when a pair needs them.
  if (std::none_of(left_out_.begin(), left_out_.end(), [&](const std::pair<int, int>& p) {
        return beyond(p.first, p.second) > options_.contact_margin;
      })) {
    return false;
  }
  for (const auto& island : islands_) {
    for (int i : island->bodies) {
      end_pose_[i] = bodies_[i].state;
      AdvanceState(h, nu_[i], &end_pose_[i]);
    }
  }
  const size_t before = pairs_.size();
  size_t kept = 0;
  for (const auto& [f, g] : left_out_) {
    const RigidBodyState& pose_g = bodies_[g].fixed ? bodies_[g].state : end_pose_[g];
    if (beyond(f, g) <= options_.contact_margin ||
        Apart(f, g, end_pose_[f], pose_g, /*closing=*/false, laws_by_index_.Get(f, g).thickness)) {
      left_out_[kept++] = {f, g};
    } else {
      pairs_.emplace_back(f, g);
    }
  }
  left_out_.resize(kept);
  if (pairs_.size() == before) return false;
  const auto key = [](const std::pair<int, int>& p) {
    return std::pair<int, int>(std::min(p.first, p.second), std::max(p.first, p.second));
  };
  std::sort(
      pairs_.begin(), pairs_.end(),
      [&](const std::pair<int, int>& x, const std::pair<int, int>& y) { return key(x) < key(y); });
  SetPairs();
  return true;
}

// The islands of the active pairs, each with the last step's problem when it had the same bodies
// and pairs (found by its first body), else a new one.
void ImplicitStepper::FindIslands() {
  finder_.Find(fixed_, pairs_, /*one_island=*/!options_.islands, /*lone_bodies=*/true);
  std::swap(spare_, islands_);
  islands_.clear();
  for (size_t s = 0; s < spare_.size(); ++s)
    spare_by_body_[spare_[s]->bodies[0]] = static_cast<int>(s);
  for (int k = 0; k < finder_.num_islands(); ++k) {
    const internal::IslandView view = finder_.island(k);
    const int s = spare_by_body_[view.bodies[0]];
    if (s >= 0 && spare_[s] != nullptr && Matches(*spare_[s], view)) {
      islands_.push_back(std::move(spare_[s]));
    } else {
      islands_.push_back(BuildIsland(view));
    }
    for (int j = 0; j < view.num_links; ++j) islands_.back()->pair_index[j] = view.links[j];
  }
  for (const auto& spare : spare_) {
    if (spare != nullptr) spare_by_body_[spare->bodies[0]] = -1;
  }
  for (const auto& island : islands_) spare_by_body_[island->bodies[0]] = -1;
  spare_.clear();
  if (restored_) GiveBackCarry();
}

// After Restore(): every island's solver carries what the snapshot's island of the same bodies
// and pairs carried, or nothing.
void ImplicitStepper::GiveBackCarry() {
  // Found by the island's first body, as FindIslands() finds the last step's problems: a body
  // is in one island at most, so this is linear in the islands, not quadratic.
  std::vector<int> carry_by_body(bodies_.size(), -1);
  for (size_t c = 0; c < restored_carry_.size(); ++c) {
    carry_by_body[restored_carry_[c].bodies[0]] = static_cast<int>(c);
  }
  for (const auto& island : islands_) {
    const int c = carry_by_body[island->bodies[0]];
    const SolverMemory* memory = nullptr;
    if (c >= 0 && restored_carry_[c].bodies == island->bodies &&
        restored_carry_[c].pairs == island->pairs) {
      memory = restored_carry_[c].memory.get();
    }
    island->solver->RestoreMemory(memory);
  }
  restored_carry_.clear();
  restored_ = false;
}

bool ImplicitStepper::Matches(const IslandProblem& problem,
                              const internal::IslandView& island) const {
  if (static_cast<int>(problem.bodies.size()) != island.num_bodies ||
      static_cast<int>(problem.pairs.size()) != island.num_links) {
    return false;
  }
  for (int k = 0; k < island.num_bodies; ++k) {
    if (problem.bodies[k] != island.bodies[k]) return false;
  }
  for (int j = 0; j < island.num_links; ++j) {
    if (problem.pairs[j] != pairs_[island.links[j]]) return false;
  }
  return true;
}

std::unique_ptr<ImplicitStepper::IslandProblem> ImplicitStepper::BuildIsland(
    const internal::IslandView& island) {
  auto problem = std::make_unique<IslandProblem>();
  problem->bodies.assign(island.bodies, island.bodies + island.num_bodies);
  for (int j = 0; j < island.num_links; ++j) problem->pairs.push_back(pairs_[island.links[j]]);
  problem->pair_index.resize(island.num_links);
  if (options_.solver == kAutoName) {
    problem->solver = CreateSolver("fb-newton", ProblemKind::Mixed, solver_options_);
    AutoSolver::Options chain;
    chain.tolerance = options_.tolerance;
    chain.max_iterations = options_.max_iterations;
    chain.restarts = false;  // the stepper's own starts take their place
    problem->fallback = std::make_unique<AutoSolver>(chain);
  } else {
    problem->solver = CreateSolver(options_.solver, ProblemKind::Mixed, solver_options_);
  }
  ProblemBuilder& builder = problem->builder;
  builder.set_name("implicit step");
  // (nu_of_body_ is set for the island's bodies only and reset below: a scene of many small
  // islands builds each in time proportional to its own size.)
  for (const int i : problem->bodies) {
    const int block = builder.AddVariableBlock(6, -kInf, kInf);
    nu_of_body_[i] = block;
    problem->nu_block.push_back(block);
    problem->body_data.push_back(std::make_unique<NewtonEulerBlock>());
    builder.AddResidualBlock<6, 6>(NewtonEulerRef{problem->body_data.back().get()}, block, {block});
  }
  for (const auto& [f, g] : problem->pairs) {
    auto data = std::make_unique<ContactPairStep>();
    data->shape_f = bodies_[f].shape;
    data->shape_g = bodies_[g].shape;
    data->g_moves = !bodies_[g].fixed;
    data->law = laws_.Get(bodies_[f].name, bodies_[g].name);
    const int geometry_size = 6 + data->shape_f.NumInequalities() + data->shape_g.NumInequalities();
    Eigen::VectorXd lower = Eigen::VectorXd::Zero(geometry_size);
    lower.head<6>().setConstant(-kInf);
    const int geometry =
        builder.AddVariableBlock(lower, Eigen::VectorXd::Constant(geometry_size, kInf),
                                 Eigen::VectorXd::Zero(geometry_size));
    const int force_size = ForceBlock::Size(data->law.compliant());
    Eigen::VectorXd force_lower = Eigen::VectorXd::Zero(force_size);
    Eigen::VectorXd force_upper = Eigen::VectorXd::Constant(force_size, kInf);
    force_lower.segment<3>(ForceBlock::kTangent).setConstant(-kInf);
    // alpha in [0, 1]
    if (data->law.elastic_friction()) force_upper[ForceBlock::kSlip] = 1.0;
    const int forces =
        builder.AddVariableBlock(force_lower, force_upper, Eigen::VectorXd::Zero(force_size));
    AddPair(&builder, data.get(), nu_of_body_[f], data->g_moves ? nu_of_body_[g] : -1, geometry,
            forces);
    problem->geometry_block.push_back(geometry);
    problem->force_block.push_back(forces);
    problem->pair_data.push_back(std::move(data));
  }
  for (const int i : problem->bodies) nu_of_body_[i] = -1;
  return problem;
}

// The Newton-Euler data of every moving body of the island, and its free-flight start twist.
void ImplicitStepper::SetBodyData(IslandProblem* island,
                                  const std::vector<Vector6d>& applied_impulses) {
  const double h = options_.h;
  for (size_t k = 0; k < island->bodies.size(); ++k) {
    const int i = island->bodies[k];
    const Body& body = bodies_[i];
    NewtonEulerBlock& ne = *island->body_data[k];
    ne.step.h = h;
    ne.step.mass = body.mass;
    ne.step.state = body.state;
    ne.step.force = body.mass.mass * options_.gravity;
    ne.step.applied_impulse =
        applied_impulses.empty() ? Vector6d::Zero() : Vector6d(applied_impulses[i]);
    ne.world_inertia = WorldInertia(body.mass, body.state.orientation);
  }
}

const ImplicitPairState* ImplicitStepper::Remembered(int pair) const {
  if (same_pairs_) return &memory_[pair];
  // Both lists are in the broad phase's order: by (lower, higher) body index.
  const auto key = [](const std::pair<int, int>& p) {
    return std::pair<int, int>(std::min(p.first, p.second), std::max(p.first, p.second));
  };
  const auto it = std::lower_bound(
      remembered_pairs_.begin(), remembered_pairs_.end(), key(pairs_[pair]),
      [&](const std::pair<int, int>& p, const std::pair<int, int>& k) { return key(p) < k; });
  if (it == remembered_pairs_.end() || *it != pairs_[pair]) return nullptr;
  return &memory_[it - remembered_pairs_.begin()];
}

// Start values of the island's pair j for an attempt (see PrepareAttempt). Each pair's problem
// is posed relative to an origin of its own, F's position at the start of the step: its unknowns
// (the contact points) and the poses it reads are then of the size of the bodies, not of their
// distance from the world origin, so far from it a step is as accurate as near it. Twists do
// not depend on the origin. The remembered contact points stay in world coordinates.
void ImplicitStepper::PreparePair(IslandProblem* island, int attempt, int j) {
  const double h = options_.h;
  const int k = island->pair_index[j];
  const int f = pairs_[k].first, g = pairs_[k].second;  // (the lambda below uses them)
  ContactPairStep& s = *island->pair_data[j];
  s.h = h;
  origin_[k] = bodies_[f].state.position;
  s.state_f = Local(bodies_[f].state, origin_[k]);
  s.state_g = Local(bodies_[g].state, origin_[k]);
  const ImplicitPairState* remembered = Remembered(k);
  const bool warm = attempt == 0 && remembered != nullptr;
  if (!warm) {
    // (A fixed body is shared by islands: only the island's own bodies are written.)
    all_remembered_[f] = 0;
    if (s.g_moves) all_remembered_[g] = 0;
  }
  const Eigen::Vector3d* last_normal = remembered ? &remembered->normal : nullptr;
  // The pair at the free-flight prediction of both poses.
  const auto predicted = [&]() {
    ContactPairStep at_prediction = s;
    at_prediction.state_f = Local(PredictedState(bodies_[f].state, h), origin_[k]);
    if (s.g_moves) at_prediction.state_g = Local(PredictedState(bodies_[g].state, h), origin_[k]);
    return at_prediction;
  };
  const double mass_f = bodies_[f].mass.mass;
  ImplicitPairState& state = next_memory_[k];
  if (warm) {
    state = *remembered;
    ShiftPoints(-origin_[k], &state.geometry);
    CarryForward(s, predicted(), mass_f, options_.gravity, &state);
  } else if (attempt == 3) {
    // A face or edge that turns flat against G within the step: start from its centre.
    const double turn = 2.0 * h *
                        (bodies_[f].state.angular_velocity.norm() +
                         (s.g_moves ? bodies_[g].state.angular_velocity.norm() : 0.0));
    state = StartValues(s, mass_f, options_.gravity, last_normal, std::max(1e-9, turn));
  } else if (attempt == 2) {
    state = StartValues(predicted(), mass_f, options_.gravity, last_normal);
  } else {
    state = StartValues(s, mass_f, options_.gravity);
  }
  reads_memory_[k] = remembered != nullptr ? 1 : 0;
  if (remembered != nullptr) {
    // The layer's state is physical, not a guess: keep it whatever the start.
    state.deflection = remembered->deflection;
    state.elastic = remembered->elastic;
  }
  AlignWithStep(&state, &s);
  const ProblemBuilder& builder = island->builder;
  island->z.segment(builder.block_offset(island->geometry_block[j]), state.geometry.size()) =
      state.geometry;
  island->z.segment(builder.block_offset(island->force_block[j]), state.forces.size()) =
      state.forces;
}

// Start points. Attempt 0: warm start from the previous step (if enabled; pairs new to the step
// start as in attempt 1); attempt 1: start values from the shapes at the current poses, with
// impulses from the columns' loads (StartFromLoads); attempt 2: from the free-flight prediction
// of the poses; attempt 3: from the centre of a face or edge of F that turns flat against G
// within the step.
void ImplicitStepper::PrepareAttempt(IslandProblem* island, int attempt) {
  for (const int i : island->bodies) all_remembered_[i] = 1;
  for (size_t j = 0; j < island->pairs.size(); ++j) {
    PreparePair(island, attempt, static_cast<int>(j));
  }
  if (attempt <= 1) StartFromLoads(island, attempt == 0);
  const ProblemBuilder& builder = island->builder;
  for (size_t k = 0; k < island->bodies.size(); ++k) {
    const int i = island->bodies[k];
    Vector6d start = nu_start_[i];
    if (attempt == 0 && has_pair_[i] && all_remembered_[i]) {
      start << bodies_[i].state.linear_velocity, bodies_[i].state.angular_velocity;
    }
    island->z.segment<6>(builder.block_offset(island->nu_block[k])) = start;
  }
}

namespace {

// The impulse a start puts on a touching pair: p_n, or the compliant layer's p_c.
int PressingImpulse(const ContactPairStep& pair) {
  return pair.law.compliant() ? ForceBlock::kLayerImpulse : ForceBlock::kNormal;
}

}  // namespace

// The island's pair j's force block in the start point.
Eigen::Ref<Eigen::VectorXd> ImplicitStepper::StartForces(IslandProblem* island, int j) {
  const ProblemBuilder& builder = island->builder;
  return island->z.segment(builder.block_offset(island->force_block[j]),
                           builder.block_size(island->force_block[j]));
}

// Which body of each pair rests on which, and which bodies are held up (StartFromLoads).
void ImplicitStepper::FindHeldBodies(IslandProblem* island, const Eigen::Vector3d& up) {
  const double h = options_.h, g = options_.gravity.norm();
  for (size_t k = 0; k < island->bodies.size(); ++k) {
    const int i = island->bodies[k];
    held_[i] = island->body_data[k]->step.applied_impulse.isZero(0.0) ? 0 : 1;
    fall_[i] = std::max(0.0, -up.dot(bodies_[i].state.linear_velocity)) + g * h;
    supports_[i] = 0;
  }
  const int num_pairs = static_cast<int>(island->pairs.size());
  for (int j = 0; j < num_pairs; ++j) {
    const int k = island->pair_index[j];
    const double c = next_memory_[k].normal.dot(up);
    rest_[k] = c > 0.5 ? 1 : (c < -0.5 ? -1 : 0);
    const bool pressed = StartForces(island, j)[PressingImpulse(*island->pair_data[j])] > 0.0;
    if (!pressed) rest_[k] *= 2;  // resting only if it closes once the body below stops
  }
  // Up the columns, a layer a pass.
  for (bool changed = true; changed;) {
    changed = false;
    for (int j = 0; j < num_pairs; ++j) {
      const int k = island->pair_index[j];
      if (rest_[k] == 0) continue;
      const auto [upper, lower] = RestingBodies(*island, j);
      if (!Held(lower) || Held(upper)) continue;
      if (std::abs(rest_[k]) == 2) {
        if (std::abs(StartGap(k)) > h * ClosingSpeed(*island, j, up) + 1e-6) continue;
        rest_[k] /= 2;
      }
      held_[upper] = 1;
      changed = true;
    }
  }
  for (int j = 0; j < num_pairs; ++j) {
    if (Supports(*island, j)) ++supports_[RestingBodies(*island, j).first];
  }
}

// The speed (m/s) at which the island's pair j closes by the end of a free step if its lower
// body stops: the upper body's velocity at the contact point plus the step's gravity, towards
// the lower body along the start normal. A tumbling body's corner can rise while its centre
// falls.
double ImplicitStepper::ClosingSpeed(const IslandProblem& island, int j,
                                     const Eigen::Vector3d& up) const {
  const int k = island.pair_index[j];
  const int upper = RestingBodies(island, j).first;
  const RigidBodyState& state = bodies_[upper].state;
  const Eigen::Vector3d point = next_memory_[k].geometry.head<3>() + origin_[k];
  const Eigen::Vector3d velocity = state.linear_velocity +
                                   state.angular_velocity.cross(point - state.position) -
                                   options_.h * options_.gravity.norm() * up;
  const Eigen::Vector3d towards_upper =
      rest_[k] > 0 ? next_memory_[k].normal : Eigen::Vector3d(-next_memory_[k].normal);
  return std::max(0.0, -towards_upper.dot(velocity));
}

// The separation of pair k's start points along its start normal (m).
double ImplicitStepper::StartGap(int k) const {
  const ImplicitPairState& state = next_memory_[k];
  return state.normal.dot(state.geometry.head<3>() - state.geometry.segment<3>(3));
}

// Each held body's load from the top of its column down: the momentum it loses in the step,
// plus its share of the loads of the bodies resting on it. A body ends the step falling at most
// as fast as what it rests on plus the speed that closes the gap between them (fixed bodies stay
// still), so a box dropped onto one that lands is only slowed; up the column first, then the
// loads down, a pass per layer (at most one per body).
void ImplicitStepper::CarryLoads(IslandProblem* island) {
  const int num_pairs = static_cast<int>(island->pairs.size());
  const double h = options_.h;
  for (const int i : island->bodies) end_fall_[i] = fall_[i];
  for (size_t pass = 0; pass < island->bodies.size(); ++pass) {
    bool changed = false;
    for (int j = 0; j < num_pairs; ++j) {
      if (!Supports(*island, j)) continue;
      const auto [upper, lower] = RestingBodies(*island, j);
      const double below = fixed_[lower] != 0 ? 0.0 : end_fall_[lower];
      const double bound = below + std::max(0.0, StartGap(island->pair_index[j])) / h;
      if (bound < end_fall_[upper]) {
        end_fall_[upper] = bound;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (const int i : island->bodies) {
    own_load_[i] = bodies_[i].mass.mass * std::max(0.0, fall_[i] - end_fall_[i]);
    load_[i] = own_load_[i];
  }
  for (size_t pass = 0; pass < island->bodies.size(); ++pass) {
    for (const int i : island->bodies) carried_[i] = 0.0;
    for (int j = 0; j < num_pairs; ++j) {
      const auto [upper, lower] = RestingBodies(*island, j);
      if (Supports(*island, j) && fixed_[lower] == 0) {
        carried_[lower] += load_[upper] / supports_[upper];
      }
    }
    bool changed = false;
    for (const int i : island->bodies) {
      const double load = own_load_[i] + carried_[i];
      changed = changed || load != load_[i];
      load_[i] = load;
    }
    if (!changed) break;
  }
}

// (upper, lower) of the island's pair j: the body that rests on the other, by rest_.
std::pair<int, int> ImplicitStepper::RestingBodies(const IslandProblem& island, int j) const {
  const auto [f, g] = island.pairs[j];
  return rest_[island.pair_index[j]] > 0 ? std::pair<int, int>(f, g) : std::pair<int, int>(g, f);
}

// The island's pair j carries its upper body's load: it rests, and the lower body is held.
bool ImplicitStepper::Supports(const IslandProblem& island, int j) const {
  return std::abs(rest_[island.pair_index[j]]) == 1 && Held(RestingBodies(island, j).second);
}

// Cold starts put F's weight over one step on every pair that touches or closes within the step
// at the current velocities: right for one body resting on the ground, and wrong both ways in a
// column. Boxes touching each other in free fall press with zero impulse, and Newton started from
// the weight stalls on their faces' free contact point; a box falling onto one that stops in this
// step closes its gap although both move alike now; the bottom of a resting or landing column
// carries the weight and momentum of everything above it. So the start follows the column: a body
// is held when it rests on a fixed or held body (the normal within 60 degrees of up, touching, or
// closing within the step once the body below stops) or is pushed by an applied impulse; each held
// body's load is shared among the pairs it rests on; side contacts of held bodies keep their
// start, and every other pair starts without impulse. With keep_remembered, warm-started pairs
// keep their start, and island->contacts_change says whether the warm start and the loads
// disagree on which of them press.
void ImplicitStepper::StartFromLoads(IslandProblem* island, bool keep_remembered) {
  island->contacts_change = false;
  const double g = options_.gravity.norm();
  if (!(g > 0.0)) return;
  FindHeldBodies(island, -options_.gravity / g);
  CarryLoads(island);
  const int num_pairs = static_cast<int>(island->pairs.size());
  for (int j = 0; j < num_pairs; ++j) {
    const int k = island->pair_index[j];
    auto p = StartForces(island, j);
    const int n = PressingImpulse(*island->pair_data[j]);
    if (keep_remembered && Remembered(k) != nullptr) {
      if (rest_[k] != 0 && Supports(*island, j) != (p[n] > 0.0)) island->contacts_change = true;
      continue;
    }
    const auto [f, other] = island->pairs[j];
    if (Supports(*island, j)) {
      const int upper = RestingBodies(*island, j).first;
      const double share = load_[upper] / supports_[upper];
      if (!std::isfinite(share)) continue;  // (absurd velocities): the shapes' start stays
      if (p[n] > 0.0) {  // friction against the slip, scaled with the normal impulse
        for (int a = ForceBlock::kTangent; a <= ForceBlock::kSpin; ++a) p[a] *= share / p[n];
      }
      p[n] = share;
    } else if (rest_[k] != 0 || !(Held(f) || Held(other)) || StartGap(k) > 0.0) {
      // Side pairs apart at the start press only if something pushes them together.
      for (int a = ForceBlock::kNormal; a <= ForceBlock::kSpin; ++a) p[a] = 0.0;
      p[n] = 0.0;
    }
  }
}

// The order of an island's starts: the start from the loads goes before the warm start where
// the two disagree on which pairs press (a landing, a column lifting off), since the warm start
// then needs many iterations or fails.
struct ImplicitStepper::StartOrder {
  int attempts[4] = {};
  int count = 0;
};

// What the attempts of one island's step have given so far.
struct ImplicitStepper::AttemptTally {
  int total_iterations = 0, best_attempt = -1, tried = 0, prepared = -1;
  // The chain's best attempt and its natural residual (RunChain; -1 until one is finite).
  int chain_best_attempt = -1;
  double chain_best_residual = kInf;
  bool from_best_point = false;   // the last attempt started from the best point found ...
  bool from_chain_point = false;  // ... and that point was the chain's
  int runs_again = 0;             // runs from the best point after those two (RunAgain)
  bool chain_skipped = false;     // the chain failed on these bodies earlier in the step
};

// Runs `solver` from each start in `order` until one solves the island, keeping the best point
// (island->best_z, island->summary). True if one solved it.
template <class Solve>
bool ImplicitStepper::TryStarts(IslandProblem* island, const StartOrder& order, AttemptTally* tally,
                                const Solve& solve) {
  SolverSummary& best = island->summary;
  for (int k = 0; k < order.count; ++k) {
    const int attempt = order.attempts[k];
    if (attempt != tally->prepared) PrepareAttempt(island, attempt);
    tally->prepared = attempt;
    // Only the warm start is near the solution whose matrix the solver kept.
    if (attempt != 0) island->solver->RestoreMemory(nullptr);
    ++tally->tried;
    const SolverSummary& summary = solve();
    tally->total_iterations += summary.iterations;
    if (tally->best_attempt < 0 || !(summary.natural_residual >= best.natural_residual)) {
      tally->best_attempt = attempt;
      best = summary;
      island->best_z = island->z;
      if (options_.keep_solver_reports) island->report = summary.FullReport();
    }
    if (summary.IsSolved()) return true;
  }
  return false;
}

// A step that fails from one start is retried from the next; the best point is kept. With
// `auto`, FB Newton (configured for the step's problem) runs from every start first, and only an
// island it does not solve goes through the AutoSolver's chain from each start in turn.
void ImplicitStepper::SolveFromStarts(IslandProblem* island, int first_attempt, int last_attempt) {
  SolverSummary& best = island->summary;
  AttemptTally tally;
  StartOrder order;
  for (int a = first_attempt; a <= last_attempt; ++a) order.attempts[order.count++] = a;
  if (first_attempt == 0 && last_attempt >= 1) {
    PrepareAttempt(island, 0);
    tally.prepared = 0;
    if (island->contacts_change) std::swap(order.attempts[0], order.attempts[1]);
  }
  bool solved = TryStarts(island, order, &tally, [island]() -> const SolverSummary& {
    return island->solver->Solve(island->builder, &island->z);
  });
  const int first_phase = tally.tried;
  // The chain costs seconds on a hopeless island; once it has failed on a body's island in this
  // step, the step's later rounds (with more pairs, OverrunPairs) do not run it again there.
  const auto chain_failed = [&](int i) { return chain_failed_[i] != 0; };
  if (!solved && island->fallback) {
    tally.chain_skipped = std::any_of(island->bodies.begin(), island->bodies.end(), chain_failed);
    if (!tally.chain_skipped) solved = RunChain(island, order, &tally);
    if (!solved) {
      for (const int i : island->bodies) chain_failed_[i] = 1;
    }
  }
  if (tally.best_attempt != tally.prepared && !solved) PrepareAttempt(island, tally.best_attempt);
  island->z = island->best_z;
  best.iterations = tally.total_iterations;
  best.solver = solver_->name();
  island->attempts = tally.tried;
  DescribeAttempts(tally, first_phase, island->solver->name(), &best);
  island->finite = island->z.allFinite();
  if (!island->finite) {
    // A non-finite result moves nothing: the island's bodies keep their state.
    best.status = Status::NumericalFailure;
    best.message = "the step's result is not finite; the bodies were not moved" +
                   std::string(best.message.empty() ? "" : "; ") + best.message;
  }
}

// auto's second phase: the AutoSolver's chain from each start and, if none solves the island,
// FB Newton from the best point found (the chain's methods leave some islands just above the
// tolerance, 1e-10-1e-9 on pushed rows, where FB Newton from their point reaches it). Where that
// point is FB Newton's own and FB Newton fails from it again, it runs once more from the chain's
// best point: its restarts can leave a stalled point lower than the chain's, from which it stalls
// again where the chain's would have led it to the solution (a brick pyramid,
// docs/reliability.md). Where those runs lowered the best point without solving the island,
// RunAgain.
bool ImplicitStepper::RunChain(IslandProblem* island, const StartOrder& order,
                               AttemptTally* tally) {
  if (TryStarts(island, order, tally, [island, tally]() -> const SolverSummary& {
        island->fallback_summary = island->fallback->Solve(island->builder, &island->z);
        const double residual = island->fallback_summary.natural_residual;
        if (residual < tally->chain_best_residual) {
          tally->chain_best_residual = residual;
          tally->chain_best_attempt = tally->prepared;
          island->chain_best_z = island->z;
        }
        return island->fallback_summary;
      })) {
    return true;
  }
  const bool chain_was_best = tally->chain_best_attempt < 0 ||
                              !(tally->chain_best_residual > island->summary.natural_residual);
  tally->from_best_point = true;
  tally->from_chain_point = chain_was_best;
  const double before_runs = island->summary.natural_residual;
  if (FromPoint(island, tally->best_attempt, island->best_z, tally)) return true;
  if (!chain_was_best) {
    tally->from_chain_point = true;
    if (FromPoint(island, tally->chain_best_attempt, island->chain_best_z, tally)) return true;
  }
  return island->summary.natural_residual < before_runs && RunAgain(island, tally);
}

// One FB Newton run from `point`, with start `attempt`'s data.
bool ImplicitStepper::FromPoint(IslandProblem* island, int attempt, const Eigen::VectorXd& point,
                                AttemptTally* tally) {
  StartOrder start;
  start.attempts[start.count++] = attempt;
  return TryStarts(island, start, tally, [island, &point]() -> const SolverSummary& {
    island->z = point;
    return island->solver->Solve(island->builder, &island->z);
  });
}

// FB Newton again from the best point while each run lowers it, after runs from the best points
// lowered it without solving the island: a run that stalls on its way down can leave a point
// from which a fresh run converges (a pushed row, docs/reliability.md). Unless one solves the
// island, its best point, summary and solver memory (the matrix the next step's chord steps
// start from) stay as they were, so that a step that still fails fails as before.
bool ImplicitStepper::RunAgain(IslandProblem* island, AttemptTally* tally) {
  const SolverSummary kept = island->summary;
  const Eigen::VectorXd kept_z = island->best_z;
  const std::string kept_report = island->report;
  const int kept_attempt = tally->best_attempt;
  const std::shared_ptr<const SolverMemory> kept_memory = island->solver->SaveMemory();
  tally->from_chain_point = false;
  for (int run = 0; run < kMaxRunsAgain; ++run) {
    const double before = island->summary.natural_residual;
    ++tally->runs_again;
    if (FromPoint(island, tally->best_attempt, island->best_z, tally)) return true;
    if (!(island->summary.natural_residual < before)) break;
  }
  island->summary = kept;
  island->best_z = kept_z;
  island->report = kept_report;
  tally->best_attempt = kept_attempt;
  island->solver->RestoreMemory(kept_memory.get());
  return false;
}

// Adds to the island's message which start solved it, or that none did.
void ImplicitStepper::DescribeAttempts(const AttemptTally& tally, int first_phase,
                                       const std::string& first_solver, SolverSummary* best) {
  if (tally.tried <= 1) return;  // one start solved it (the usual step): nothing to add
  const std::string start = "start " + std::to_string(tally.best_attempt);
  const std::string starts = std::to_string(first_phase) + " start(s)";
  std::string note;
  if (tally.tried > first_phase && !best->IsSolved()) {
    note = "no start solved it (" + first_solver + ", then the chain, from " + starts + ", then " +
           first_solver + " from the best point); the best, " + start + ", is kept";
  } else if (tally.tried > first_phase && tally.from_best_point) {
    const std::string again =
        tally.runs_again == 0
            ? ""
            : ", run again " + std::to_string(tally.runs_again) + " time(s) from where it stopped";
    note = "solved by " + first_solver + " from " +
           (tally.from_chain_point ? "the chain's best point (" : "its own best point (") + start +
           again + "), after " + first_solver + " and the chain failed from " + starts;
  } else if (tally.tried > first_phase) {
    note = "from " + start + ", after " + first_solver + " failed from " + starts;
  } else {
    note = best->IsSolved() ? "solved from " + start + " after " + std::to_string(tally.tried - 1) +
                                  " failed start(s)"
                            : "no start solved it (" + std::to_string(tally.tried) +
                                  " tried); the best, " + start + ", is kept";
    if (tally.chain_skipped) note += " (the chain failed on these bodies earlier in the step)";
  }
  if (!note.empty()) best->message += (best->message.empty() ? "" : "; ") + note;
}

void ImplicitStepper::SolveIsland(IslandProblem* island,
                                  const std::vector<Vector6d>& applied_impulses) {
  island->z.setZero(island->builder.size());
  SetBodyData(island, applied_impulses);
  const int first_attempt = options_.warm_start ? 0 : 1;
  SolveFromStarts(island, first_attempt, island->pairs.empty() ? first_attempt : 3);
}

// The step's summary, attempts, size and solver report from its islands'.
void ImplicitStepper::SummarizeIslands() {
  const int num_islands = static_cast<int>(islands_.size());
  record_.islands = num_islands;
  record_.problem_size = 0;
  record_.attempts = 0;
  for (const auto& island : islands_) {
    record_.problem_size += island->builder.size();
    record_.attempts = std::max(record_.attempts, island->attempts);
    if (options_.keep_solver_reports) record_.solver_report += island->report;
  }
  if (num_islands == 0) {
    record_.summary = SolverSummary();
    record_.summary.solver = solver_->name();
    record_.summary.status = Status::Converged;
    record_.summary.natural_residual = 0.0;
    record_.summary.message = "no moving body";
    record_.failed_islands = 0;
    return;
  }
  record_.failed_islands = internal::CombineIslandSummaries(
      num_islands, [&](int k) -> const SolverSummary& { return islands_[k]->summary; },
      &record_.summary);
}

// The contact quantities of the island's pair j at its solution, into the record and the
// memory of the next step.
void ImplicitStepper::RecordContact(const IslandProblem& island, int j) {
  const ProblemBuilder& builder = island.builder;
  const int k = island.pair_index[j];
  const auto [f, g] = pairs_[k];
  const ContactPairStep& s = *island.pair_data[j];
  const int geometry_block = island.geometry_block[j];
  const int force_block = island.force_block[j];
  const auto geometry =
      island.z.segment(builder.block_offset(geometry_block), builder.block_size(geometry_block));
  const auto forces =
      island.z.segment(builder.block_offset(force_block), builder.block_size(force_block));
  const PairFrame<double> frame(s, nu_[f].data(), s.g_moves ? nu_[g].data() : nullptr,
                                geometry.data());
  ContactRecord c = ReadContact(s, frame, geometry, forces);
  c.body_f = f;
  c.body_g = g;
  c.ecp += origin_[k];
  ImplicitPairState& state = next_memory_[k];
  state.geometry = geometry;
  ShiftPoints(origin_[k], &state.geometry);
  state.forces = forces;
  if (c.normal.allFinite() && c.normal.norm() > 0.5) state.normal = c.normal;
  state.deflection = c.deflection;
  state.elastic = ElasticDisplacement(s, frame, forces, c.p_n);
  record_.contacts.push_back(c);
}

// Advances the bodies of every island with a finite result and reads the contact quantities at
// the solutions, in the order of the step's pairs.
void ImplicitStepper::ApplySolution() {
  for (const auto& island : islands_) {
    for (size_t k = 0; k < island->bodies.size(); ++k) {
      nu_[island->bodies[k]] =
          island->finite
              ? Vector6d(island->z.segment<6>(island->builder.block_offset(island->nu_block[k])))
              : Vector6d::Zero();
    }
  }
  for (size_t k = 0; k < pairs_.size(); ++k) {
    const IslandProblem& island = *islands_[finder_.island_of_link(static_cast<int>(k))];
    if (island.finite) RecordContact(island, finder_.local_index(static_cast<int>(k)));
  }
  for (const auto& island : islands_) {
    if (!island->finite) continue;
    for (size_t k = 0; k < island->bodies.size(); ++k) {
      AdvanceState(options_.h, nu_[island->bodies[k]], &bodies_[island->bodies[k]].state);
    }
  }
  for (ContactRecord& c : record_.contacts) {
    const Body& F = bodies_[c.body_f];
    const Body& G = bodies_[c.body_g];
    const Eigen::Vector3d axis =
        G.shape.kind == ShapeKind::HalfSpace ? PlaneNormal(G.state) : c.normal;
    c.gap = SeparationAlongAxis(F.shape, F.state, G.shape, G.state, axis);
    record_.max_penetration = std::max(record_.max_penetration, -c.gap);
  }
  std::swap(memory_, next_memory_);
  remembered_pairs_ = pairs_;
  next_memory_.resize(pairs_.size());
}

void ImplicitStepper::FinishStep(double seconds) {
  time_ += options_.h;
  record_.time = time_;
  record_.num_contacts = static_cast<int>(record_.contacts.size());
  record_.step_seconds = seconds;
}

const ImplicitStepRecord& ImplicitStepper::Step(const std::vector<Vector6d>& applied_impulses) {
  const auto clock_start = std::chrono::steady_clock::now();
  const size_t num_bodies = bodies_.size();
  if (!applied_impulses.empty() && applied_impulses.size() != num_bodies) {
    throw InputError("applied impulses: " + std::to_string(applied_impulses.size()) +
                     " given for " + std::to_string(num_bodies) + " bodies");
  }
  for (const Vector6d& impulse : applied_impulses) {
    if (!impulse.allFinite()) throw InputError("applied impulse is not finite");
  }
  record_.contacts.clear();
  record_.max_penetration = 0.0;
  record_.solver_report.clear();
  std::fill(chain_failed_.begin(), chain_failed_.end(), 0);
  FreeVelocities(applied_impulses);
  FindPairs();
  auto solve = [&](int island, int /*worker*/) {
    SolveIsland(islands_[island].get(), applied_impulses);
  };
  pool_->Run(static_cast<int>(islands_.size()), solve);
  // A pair left out that the solution overruns joins the problem, which is solved again; each
  // round admits at least one pair, and two are enough unless the impulses change a lot.
  for (int round = 0; round < kMaxSearchRounds && OverrunPairs(); ++round) {
    pool_->Run(static_cast<int>(islands_.size()), solve);
  }
  SummarizeIslands();
  ApplySolution();
  FinishStep(internal::SecondsSince(clock_start));
  derivable_ = true;
  return record_;
}

std::unique_ptr<StepDerivative> ImplicitStepper::LastStepDerivative() const {
  if (!derivable_) {
    throw InputError(
        "implicit stepper: no step taken since it was made or restored, so none to "
        "differentiate");
  }
  if (!record_.summary.IsSolved()) {
    throw InputError("implicit stepper: the step at t = " + std::to_string(record_.time) +
                     " was not solved (" + record_.summary.message + "), so it has no derivative");
  }
  internal::ImplicitStepData data{
      bodies_, laws_, options_.h, options_.gravity, memory_layout_.get(), {}};
  for (const auto& island : islands_) {
    internal::ImplicitIslandData view;
    view.builder = &island->builder;
    view.z = &island->z;
    view.bodies = island->bodies;
    view.nu_block = island->nu_block;
    for (const auto& body : island->body_data) view.body_steps.push_back(&body->step);
    view.pairs = island->pairs;
    view.pair_index = island->pair_index;
    view.geometry_block = island->geometry_block;
    view.force_block = island->force_block;
    for (const auto& pair : island->pair_data) view.pair_steps.push_back(pair.get());
    for (const int k : island->pair_index) {
      view.memory_slot.push_back(memory_layout_->Find(pairs_[k].first, pairs_[k].second));
      view.reads_memory.push_back(reads_memory_[k]);
    }
    data.islands.push_back(std::move(view));
  }
  return std::make_unique<internal::ImplicitStepDerivative>(data);
}

namespace {

struct ImplicitSnapshot : StepperSnapshot {
  std::vector<RigidBodyState> states;
  std::vector<ImplicitPairState> memory;
  std::vector<internal::SolverCarry> carry;
  std::vector<std::pair<int, int>> pairs;
  double time = 0.0;
  const void* owner = nullptr;
};

}  // namespace

std::unique_ptr<StepperSnapshot> ImplicitStepper::Save() const {
  auto snapshot = std::make_unique<ImplicitSnapshot>();
  for (const Body& b : bodies_) snapshot->states.push_back(b.state);
  snapshot->memory = memory_;
  snapshot->pairs = remembered_pairs_;
  for (const auto& island : islands_) {
    snapshot->carry.push_back({island->bodies, island->pairs, island->solver->SaveMemory()});
  }
  snapshot->time = time_;
  snapshot->owner = this;
  return snapshot;
}

void ImplicitStepper::SetBodyState(int i, const RigidBodyState& state) {
  internal::RequireSettableBodyState("implicit", bodies_, i, state);
  bodies_[i].state = state;
  derivable_ = false;
}

void ImplicitStepper::Restore(const StepperSnapshot& snapshot) {
  const auto* s = dynamic_cast<const ImplicitSnapshot*>(&snapshot);
  if (s == nullptr || s->owner != this) {
    throw InputError("implicit stepper: a snapshot of another stepper cannot be restored");
  }
  for (size_t i = 0; i < bodies_.size(); ++i) bodies_[i].state = s->states[i];
  memory_ = s->memory;
  remembered_pairs_ = s->pairs;
  restored_carry_ = s->carry;
  restored_ = true;
  time_ = s->time;
  derivable_ = false;
}

// ---------------------------------------------------------------------------------------------
// Scene files and variants

namespace {

std::string ReadImplicitVariant(const std::string& variant, ImplicitStepperOptions* options) {
  SolverVariant parsed;
  std::string why;
  if (!SplitSolverVariant(variant, &parsed, &why) || !parsed.model.empty() ||
      !IsSolverName(parsed.solver, ProblemKind::Mixed)) {
    return "unknown solver '" + variant + "' (expected one of " +
           SolverNameList(ProblemKind::Mixed) + ", or any of them with -cold: no warm start)";
  }
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

class ImplicitConfig final : public StepperConfigOf<ImplicitStepperOptions> {
 public:
  std::unique_ptr<StepperConfig> Clone() const override {
    return std::make_unique<ImplicitConfig>(*this);
  }
  std::vector<std::string> OwnKeys() const override { return {"contact_margin"}; }
  void Read(const internal::Reader& in, const internal::Json& object, const std::string& path,
            const std::string& prefix) override {
    internal::ReadStepperSettings(in, object, path, prefix, /*h_required=*/true, 1, &options);
    if (!IsSolverName(options.solver, ProblemKind::Mixed)) {
      in.Fail(prefix + "solver", "unknown solver '" + options.solver + "'");
    }
    options.contact_margin = in.Number(object, path, "contact_margin", options.contact_margin);
    if (options.contact_margin < 0.0) in.Fail(prefix + "contact_margin", "must be >= 0");
    std::string why;
    if (!options.IsValid(&why)) in.Fail(path, why);
  }
  std::string variant() const override {
    return SolverVariant{"", options.solver, !options.warm_start}.ToString();
  }
  std::string SetVariant(const std::string& variant) override {
    return ReadImplicitVariant(variant, &options);
  }
  std::string VariantGrammar() const override {
    return "<solver>[-cold] with one of " + SolverNameList(ProblemKind::Mixed);
  }
  // Every solver of mixed problems compared by default, and the first one cold.
  std::vector<std::string> DefaultVariants() const override {
    std::vector<std::string> variants;
    internal::AppendComparedVariants("", ProblemKind::Mixed, false, &variants);
    if (!variants.empty()) variants.push_back(variants.front() + "-cold");
    return variants;
  }
  std::unique_ptr<Stepper> MakeStepper(const std::vector<Body>& bodies, const ContactLawTable& laws,
                                       const std::vector<Actuator>& /*actuators*/) const override {
    return std::make_unique<ImplicitStepper>(bodies, laws, options);
  }
};

}  // namespace

std::unique_ptr<StepperConfig> MakeImplicitConfig() { return std::make_unique<ImplicitConfig>(); }

bool IsSolverVariant(const std::string& variant) {
  return internal::ReadsVariant(&ReadImplicitVariant, variant);
}

void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options) {
  internal::ApplyVariantOrThrow(&ReadImplicitVariant, variant, options);
}

}  // namespace ncpkit
