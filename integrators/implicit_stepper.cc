#include "integrators/implicit_stepper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "solvers/problem_builder.h"
#include "solvers/solver_registry.h"

namespace ncpkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A multiplier l_i (i != k1) above this counts as positive: the l_i are ratios of gradient
// weights, of order 1 when the inequality is active.
constexpr double kActiveMultiplier = 1e-6;
// Fraction of the tolerance below which a warm start is accepted without a Newton step.
constexpr double kWarmStartAcceptance = 1e-2;

Eigen::Vector3d WorldSupport(const Shape& shape, const RigidBodyState& state,
                             const Eigen::Vector3d& direction, double flat = 1e-9) {
  const Eigen::Matrix3d R = state.orientation.toRotationMatrix();
  return state.position + R * shape.SupportPoint(R.transpose() * direction, flat);
}

// The pose after one step with the current twist (a guess of the end-of-step pose).
RigidBodyState PredictedState(const RigidBodyState& state, double h) {
  RigidBodyState predicted = state;
  Vector6d nu;
  nu << state.linear_velocity, state.angular_velocity;
  AdvanceState(h, nu, &predicted);
  return predicted;
}

Eigen::Vector3d PlaneNormal(const RigidBodyState& state) {
  return state.orientation.toRotationMatrix().col(2);
}

// f_i and its gradient at a world point for a body in `state`.
double InequalityAt(const Shape& shape, const RigidBodyState& state, const Eigen::Vector3d& x,
                    int i, Eigen::Vector3d* grad) {
  const Eigen::Matrix3d R = state.orientation.toRotationMatrix();
  const Eigen::Vector3d xi = R.transpose() * (x - state.position);
  Eigen::Vector3d g;
  shape.Gradient(i, xi.data(), g.data());
  if (grad) *grad = R * g;
  return shape.Inequality(i, xi.data());
}

// The inequality of `shape` active at its support point in direction -n (n points from the
// other body towards this one) whose outward normal is most opposed to n.
int FacingInequality(const Shape& shape, const RigidBodyState& state, const Eigen::Vector3d& n) {
  const Eigen::Vector3d x = WorldSupport(shape, state, -n);
  const double scale = 1e-9 * std::max(1.0, shape.BoundingRadius());
  int best = 0;
  double best_alignment = -kInf;
  for (int i = 0; i < shape.NumInequalities(); ++i) {
    Eigen::Vector3d g;
    const double value = InequalityAt(shape, state, x, i, &g);
    if (value < -scale || g.norm() == 0.0) continue;
    const double alignment = -n.dot(g) / g.norm();
    if (alignment > best_alignment) {
      best_alignment = alignment;
      best = i;
    }
  }
  return best;
}

// The tangent-frame seed: the previous one while it stays well away from n (so that the frame,
// and with it the warm start of p_t and p_o, does not jump between steps), else the world axis
// least aligned with n (ties to the lower index).
Eigen::Vector3d HelperAxis(const Eigen::Vector3d& n, const Eigen::Vector3d& previous) {
  if (previous.norm() > 0.5 && std::abs(previous.dot(n)) < 0.9) return previous;
  int best = 0;
  for (int k = 1; k < 3; ++k) {
    if (std::abs(n[k]) < std::abs(n[best]) - 1e-9) best = k;
  }
  return Eigen::Vector3d::Unit(best);
}

// The unit tangents t, o of the contact frame for normal n and seed e (as PairFrame builds
// them).
void TangentFrame(const Eigen::Vector3d& n, const Eigen::Vector3d& e, Eigen::Vector3d* t,
                  Eigen::Vector3d* o) {
  *t = (e - e.dot(n) * n).normalized();
  *o = n.cross(*t);
}

template <int M, int N, bool kMovingG, bool kCompliant>
void AddPairBlocks(ProblemBuilder* b, const ContactPairStep* s, int nu_f, int nu_g, int geometry,
                   int forces) {
  using Residual = ImplicitContactResidual<M, N, kMovingG, kCompliant>;
  constexpr int G = Residual::kGeometrySize;
  constexpr int P = Residual::kForceSize;
  constexpr int R = Residual::kNumResiduals;
  if constexpr (kMovingG) {
    b->AddResidualBlock<R, 6, 6, G, P>(Residual{s}, {geometry, forces, nu_f, nu_g},
                                       {nu_f, nu_g, geometry, forces});
  } else {
    b->AddResidualBlock<R, 6, G, P>(Residual{s}, {geometry, forces, nu_f},
                                    {nu_f, geometry, forces});
  }
}

template <int M, int N>
void AddPairMN(ProblemBuilder* b, const ContactPairStep* s, int nu_f, int nu_g, int geometry,
               int forces) {
  const bool compliant = s->law.compliant();
  if (s->g_moves) {
    if (compliant) {
      AddPairBlocks<M, N, true, true>(b, s, nu_f, nu_g, geometry, forces);
    } else {
      AddPairBlocks<M, N, true, false>(b, s, nu_f, nu_g, geometry, forces);
    }
  } else if (compliant) {
    AddPairBlocks<M, N, false, true>(b, s, nu_f, nu_g, geometry, forces);
  } else {
    AddPairBlocks<M, N, false, false>(b, s, nu_f, nu_g, geometry, forces);
  }
}

template <int M>
void AddPairM(ProblemBuilder* b, const ContactPairStep* s, int nu_f, int nu_g, int geometry,
              int forces) {
  switch (s->shape_g.NumInequalities()) {
    case 1:
      return AddPairMN<M, 1>(b, s, nu_f, nu_g, geometry, forces);
    case 3:
      return AddPairMN<M, 3>(b, s, nu_f, nu_g, geometry, forces);
    case 6:
      return AddPairMN<M, 6>(b, s, nu_f, nu_g, geometry, forces);
  }
  throw std::logic_error("unsupported number of inequalities");
}

void AddPair(ProblemBuilder* b, const ContactPairStep* s, int nu_f, int nu_g, int geometry,
             int forces) {
  switch (s->shape_f.NumInequalities()) {
    case 1:
      return AddPairM<1>(b, s, nu_f, nu_g, geometry, forces);
    case 3:
      return AddPairM<3>(b, s, nu_f, nu_g, geometry, forces);
    case 6:
      return AddPairM<6>(b, s, nu_f, nu_g, geometry, forces);
  }
  throw std::logic_error("unsupported number of inequalities");
}

// The Newton-Euler functor reading its data through a pointer that the stepper updates.
struct NewtonEulerRef {
  const NewtonEulerBlock* data;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    return (*data)(x, r);
  }
};

}  // namespace

// One step's MCP, kept while the set of active pairs does not change: its functors read the
// step's data through pointers into this struct, which the stepper refreshes every step.
struct ImplicitStepper::StepProblem {
  std::vector<std::pair<int, int>> pairs;  // (F, G) of each active pair
  ProblemBuilder builder;
  std::vector<int> nu_block;                                 // per body, -1 if fixed
  std::vector<int> geometry_block, force_block;              // per pair
  std::vector<std::unique_ptr<NewtonEulerBlock>> body_data;  // per body (null if fixed)
  std::vector<std::unique_ptr<ContactPairStep>> pair_data;   // per pair
};

bool ImplicitStepperOptions::IsValid(std::string* why) const {
  std::ostringstream os;
  if (!(std::isfinite(h) && h > 0.0)) {
    os << "h = " << h << " must be positive and finite";
  } else if (!gravity.allFinite()) {
    os << "gravity must be finite";
  } else if (!IsSolverName(solver, ProblemKind::Mixed)) {
    os << "unknown solver '" << solver << "'";
  } else if (!(tolerance > 0.0)) {
    os << "tolerance = " << tolerance << " must be positive";
  } else if (max_iterations < 1) {
    os << "max_iterations = " << max_iterations << " must be >= 1";
  } else if (!(std::isfinite(contact_margin) && contact_margin >= 0.0)) {
    os << "contact_margin = " << contact_margin << " must be >= 0";
  }
  if (why) *why = os.str();
  return os.str().empty();
}

void ContactLawTable::Set(const std::string& a, const std::string& b, const ContactLaw& law) {
  overrides_[std::minmax(a, b)] = law;
}

const ContactLaw& ContactLawTable::Get(const std::string& a, const std::string& b) const {
  auto it = overrides_.find(std::minmax(a, b));
  return it == overrides_.end() ? default_law : it->second;
}

double SeparationAlongAxis(const Shape& f, const RigidBodyState& pose_f, const Shape& g,
                           const RigidBodyState& pose_g, const Eigen::Vector3d& axis) {
  const double low_f = axis.dot(WorldSupport(f, pose_f, -axis));
  const double high_g = g.kind == ShapeKind::HalfSpace ? axis.dot(pose_g.position)
                                                       : axis.dot(WorldSupport(g, pose_g, axis));
  return low_f - high_g;
}

ImplicitStepper::ImplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                                 const ImplicitStepperOptions& options)
    : bodies_(std::move(bodies)), laws_(std::move(laws)), options_(options) {
  std::string why;
  if (!options_.IsValid(&why)) throw std::invalid_argument("stepper options: " + why);
  for (const Body& body : bodies_) {
    if (!body.shape.IsValid(&why)) throw std::invalid_argument(body.name + ": " + why);
    if (!body.fixed && !body.mass.IsValid(&why)) {
      throw std::invalid_argument(body.name + ": " + why);
    }
    if (!body.fixed && body.shape.kind == ShapeKind::HalfSpace) {
      throw std::invalid_argument(body.name + ": a plane must be fixed");
    }
    const RigidBodyState& s = body.state;
    if (!s.position.allFinite() || !s.orientation.coeffs().allFinite() ||
        !s.linear_velocity.allFinite() || !s.angular_velocity.allFinite()) {
      throw std::invalid_argument(body.name + ": initial state has a non-finite value");
    }
    if (std::abs(s.orientation.norm() - 1.0) > 1e-6) {
      throw std::invalid_argument(body.name + ": orientation is not a unit quaternion");
    }
  }
  for (size_t i = 0; i < bodies_.size(); ++i) {
    for (size_t j = i + 1; j < bodies_.size(); ++j) {
      if (bodies_[i].name == bodies_[j].name) {
        throw std::invalid_argument("two bodies are named '" + bodies_[i].name + "'");
      }
      if (!laws_.Get(bodies_[i].name, bodies_[j].name).IsValid(&why)) {
        throw std::invalid_argument("contact " + bodies_[i].name + "-" + bodies_[j].name + ": " +
                                    why);
      }
    }
  }
  SolverOptions solver_options;
  solver_options.tolerance = options_.tolerance;
  solver_options.max_iterations = options_.max_iterations;
  solver_options.warm_start = true;  // every attempt hands the solver its start point
  solver_options.record_history = options_.keep_solver_reports;
  solver_options.project_onto_bounds = true;
  // A resting contact's warm start is refined once its residual reaches 1 % of the
  // tolerance, so rounding errors do not accumulate over the steps.
  solver_options.start_acceptance = kWarmStartAcceptance;
  solver_ = CreateSolver(options_.solver, ProblemKind::Mixed, solver_options);
}

ImplicitStepper::~ImplicitStepper() = default;

int ImplicitStepper::BodyIndex(const std::string& name) const {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool ImplicitStepper::Near(int f, int g) const {
  // Bounding spheres first, then the shapes' separation along the line of centres (a plane:
  // along its normal); either proves the pair cannot touch within the next two steps.
  const Body& F = bodies_[f];
  const Body& G = bodies_[g];
  const double h = options_.h;
  const double radius_f = F.shape.BoundingRadius();
  double travel =
      2.0 * h * (F.state.linear_velocity.norm() + F.state.angular_velocity.norm() * radius_f);
  if (G.shape.kind == ShapeKind::HalfSpace) {
    const Eigen::Vector3d normal = PlaneNormal(G.state);
    return SeparationAlongAxis(F.shape, F.state, G.shape, G.state, normal) <=
           options_.contact_margin + travel;
  }
  const double radius_g = G.shape.BoundingRadius();
  if (!G.fixed) {
    travel +=
        2.0 * h * (G.state.linear_velocity.norm() + G.state.angular_velocity.norm() * radius_g);
  }
  const Eigen::Vector3d between = F.state.position - G.state.position;
  const double reach = options_.contact_margin + travel;
  if (between.norm() > radius_f + radius_g + reach) return false;
  if (between.norm() == 0.0) return true;
  return SeparationAlongAxis(F.shape, F.state, G.shape, G.state, between.normalized()) <= reach;
}

ImplicitStepper::PairMemory ImplicitStepper::Initialize(const ContactPairStep& s, double mass_f,
                                                        const Eigen::Vector3d* direction,
                                                        double flat) const {
  Eigen::Vector3d d;  // from G towards F
  if (direction != nullptr) {
    d = *direction;
  } else if (s.shape_g.kind == ShapeKind::HalfSpace) {
    d = PlaneNormal(s.state_g);
  } else {
    d = s.state_f.position - s.state_g.position;
    d = d.norm() > 0.0 ? Eigen::Vector3d(d.normalized()) : Eigen::Vector3d::UnitZ();
  }
  const int m = s.shape_f.NumInequalities(), n = s.shape_g.NumInequalities();
  PairMemory memory;
  memory.normal = d;
  memory.k1 = FacingInequality(s.shape_f, s.state_f, d);
  const Eigen::Vector3d a1 = WorldSupport(s.shape_f, s.state_f, -d, flat);
  Eigen::Vector3d a2;
  if (s.shape_g.kind == ShapeKind::HalfSpace) {
    a2 = a1 - d * d.dot(a1 - s.state_g.position);
  } else {
    a2 = WorldSupport(s.shape_g, s.state_g, d);
  }
  memory.geometry = Eigen::VectorXd::Zero(6 + m + n);
  memory.geometry << a1, a2, Eigen::VectorXd::Zero(m + n);
  Eigen::Vector3d grad_f;
  InequalityAt(s.shape_f, s.state_f, a1, memory.k1, &grad_f);
  const double separation = d.dot(a1 - a2);
  if (grad_f.norm() > 0.0)
    memory.geometry[6 + memory.k1] = std::max(0.0, separation) / grad_f.norm();
  // The other inequalities active at a1 (an edge or a vertex): weights l_i >= 0 that make
  // grad f_k1 + sum l_i grad f_i parallel to -d, by least squares.
  {
    std::vector<int> active;
    std::vector<Eigen::Vector3d> grads;
    const double scale = 1e-9 * std::max(1.0, s.shape_f.BoundingRadius());
    for (int i = 0; i < m; ++i) {
      Eigen::Vector3d g;
      if (i == memory.k1 || InequalityAt(s.shape_f, s.state_f, a1, i, &g) < -scale) continue;
      active.push_back(i);
      grads.push_back(g);
    }
    if (!active.empty()) {
      // Unknowns [l_i..., lambda]: sum l_i grad_i + lambda d = -grad f_k1.
      Eigen::MatrixXd A(3, active.size() + 1);
      for (size_t k = 0; k < active.size(); ++k) A.col(k) = grads[k];
      A.col(active.size()) = d;
      const Eigen::VectorXd x = A.colPivHouseholderQr().solve(-grad_f);
      for (size_t k = 0; k < active.size(); ++k) {
        if (std::isfinite(x[k])) memory.geometry[6 + active[k]] = std::max(0.0, x[k]);
      }
    }
  }
  const int j = n == 1 ? 0 : FacingInequality(s.shape_g, s.state_g, -d);
  Eigen::Vector3d grad_g;
  InequalityAt(s.shape_g, s.state_g, a2, j, &grad_g);
  if (grad_g.norm() > 0.0) memory.geometry[6 + m + j] = grad_f.norm() / grad_g.norm();
  memory.forces = Eigen::VectorXd::Zero(s.law.compliant() ? 7 : 5);

  // Impulses: where the shapes touch (or will within the step), the weight over one step as
  // p_n and sliding friction against the current slip; else none. A start with p_n = p = 0
  // makes the friction rows' Jacobian singular.
  const ContactLaw& law = s.law;
  const Eigen::Vector3d v_f =
      s.state_f.linear_velocity + s.state_f.angular_velocity.cross(a1 - s.state_f.position);
  const Eigen::Vector3d v_g =
      s.state_g.linear_velocity + s.state_g.angular_velocity.cross(a1 - s.state_g.position);
  const Eigen::Vector3d slip = v_f - v_g;
  const double approach = std::max(0.0, -d.dot(slip));
  const double weight = mass_f * options_.gravity.norm() * s.h;
  const double p_n = separation <= s.h * approach + 1e-6 ? std::max(weight, 1e-6) : 0.0;
  Eigen::Vector3d t, o;
  memory.helper = HelperAxis(d, Eigen::Vector3d::Zero());
  TangentFrame(d, memory.helper, &t, &o);
  const double v[3] = {
      t.dot(slip), o.dot(slip),
      law.torsion ? d.dot(s.state_f.angular_velocity - s.state_g.angular_velocity) : 0.0};
  const double e2[3] = {law.e_t * law.e_t, law.e_o * law.e_o, law.e_r * law.e_r};
  const double speed = std::sqrt(e2[0] * v[0] * v[0] + e2[1] * v[1] * v[1] + e2[2] * v[2] * v[2]);
  if (law.compliant()) {
    memory.forces[5] = std::max(0.0, law.thickness - separation);
    memory.forces[6] = p_n;
  } else {
    memory.forces[0] = p_n;
  }
  if (law.elastic_friction()) {
    memory.forces[4] = 1.0;  // alpha: inside the friction ellipsoid
  } else if (speed > 1e-9) {
    // Maximal dissipation against the slip: sigma = |slip|_E, p = -mu P e^2 v / sigma.
    memory.forces[4] = speed;
    for (int k = 0; k < 3; ++k) memory.forces[1 + k] = -law.mu * p_n * e2[k] * v[k] / speed;
  } else {
    memory.forces[4] = 1e-3;
  }
  return memory;
}

std::unique_ptr<ImplicitStepper::StepProblem> ImplicitStepper::BuildProblem(
    const std::vector<std::pair<int, int>>& pairs) const {
  auto problem = std::make_unique<StepProblem>();
  problem->pairs = pairs;
  ProblemBuilder& builder = problem->builder;
  builder.set_name("implicit step");
  const int num_bodies = static_cast<int>(bodies_.size());
  problem->nu_block.assign(num_bodies, -1);
  problem->body_data.resize(num_bodies);
  for (int i = 0; i < num_bodies; ++i) {
    if (bodies_[i].fixed) continue;
    problem->nu_block[i] = builder.AddVariableBlock(6, -kInf, kInf);
    problem->body_data[i] = std::make_unique<NewtonEulerBlock>();
    builder.AddResidualBlock<6, 6>(NewtonEulerRef{problem->body_data[i].get()},
                                   problem->nu_block[i], {problem->nu_block[i]});
  }
  for (const auto& [f, g] : pairs) {
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
    const int force_size = data->law.compliant() ? 7 : 5;
    Eigen::VectorXd force_lower = Eigen::VectorXd::Zero(force_size);
    Eigen::VectorXd force_upper = Eigen::VectorXd::Constant(force_size, kInf);
    force_lower.segment<3>(1).setConstant(-kInf);
    if (data->law.elastic_friction()) force_upper[4] = 1.0;  // alpha in [0, 1]
    const int forces =
        builder.AddVariableBlock(force_lower, force_upper, Eigen::VectorXd::Zero(force_size));
    AddPair(&builder, data.get(), problem->nu_block[f], data->g_moves ? problem->nu_block[g] : -1,
            geometry, forces);
    problem->geometry_block.push_back(geometry);
    problem->force_block.push_back(forces);
    problem->pair_data.push_back(std::move(data));
  }
  return problem;
}

StepRecord ImplicitStepper::Step(const std::vector<Vector6d>& applied_impulses) {
  const auto clock_start = std::chrono::steady_clock::now();
  const double h = options_.h;
  const int num_bodies = static_cast<int>(bodies_.size());
  if (!applied_impulses.empty() && static_cast<int>(applied_impulses.size()) != num_bodies) {
    throw std::invalid_argument("applied impulses: " + std::to_string(applied_impulses.size()) +
                                " given for " + std::to_string(num_bodies) + " bodies");
  }
  for (const Vector6d& impulse : applied_impulses) {
    if (!impulse.allFinite()) throw std::invalid_argument("applied impulse is not finite");
  }

  // The active pairs (bounding-volume test), and the step's problem for them.
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < num_bodies; ++i) {
    for (int j = i + 1; j < num_bodies; ++j) {
      if (bodies_[i].fixed && bodies_[j].fixed) continue;
      const int f = bodies_[i].fixed ? j : i;
      const int g = bodies_[i].fixed ? i : j;
      if (Near(f, g)) pairs.emplace_back(f, g);
    }
  }
  if (!problem_ || problem_->pairs != pairs) problem_ = BuildProblem(pairs);
  StepProblem& problem = *problem_;
  ProblemBuilder& builder = problem.builder;
  Eigen::VectorXd z = Eigen::VectorXd::Zero(builder.size());

  std::vector<Vector6d> nu_start(num_bodies, Vector6d::Zero());
  for (int i = 0; i < num_bodies; ++i) {
    const Body& body = bodies_[i];
    if (body.fixed) continue;
    NewtonEulerBlock& ne = *problem.body_data[i];
    ne.step.h = h;
    ne.step.mass = body.mass;
    ne.step.state = body.state;
    ne.step.force = body.mass.mass * options_.gravity;
    ne.step.applied_impulse =
        applied_impulses.empty() ? Vector6d::Zero() : Vector6d(applied_impulses[i]);
    ne.world_inertia = WorldInertia(body.mass, body.state.orientation);
    // Start from the free-flight prediction; bodies whose contacts all have a remembered
    // solution start from the previous twist instead (below), consistent with those impulses.
    nu_start[i] << body.state.linear_velocity + h * options_.gravity +
                       ne.step.applied_impulse.head<3>() / body.mass.mass,
        body.state.angular_velocity +
            ne.world_inertia.inverse() * ne.step.applied_impulse.tail<3>();
  }
  // Start points. Attempt 0: warm start from the previous step (if enabled); attempt 1: start
  // values from the shapes at the current poses; attempt 2: from the free-flight prediction of
  // the poses; attempt 3: from the centre of a face or edge of F that turns flat against G
  // within the step. A step that fails from one start is retried from the next.
  std::map<std::pair<int, int>, PairMemory> next_memory;
  // Each pair's problem is posed relative to an origin of its own, F's position at the start of
  // the step: its unknowns (the contact points) and the poses it reads are then of the size of
  // the bodies, not of their distance from the world origin, so far from it a step is as
  // accurate as near it. Twists do not depend on the origin. The remembered contact points
  // stay in world coordinates.
  std::vector<Eigen::Vector3d> origin(pairs.size());
  const auto shift_points = [](const Eigen::Vector3d& by, Eigen::VectorXd* geometry) {
    geometry->head<3>() += by;
    geometry->segment<3>(3) += by;
  };
  auto prepare = [&](int attempt, Eigen::VectorXd* z) {
    std::vector<char> all_remembered(num_bodies, 1);
    next_memory.clear();
    for (size_t k = 0; k < pairs.size(); ++k) {
      const int f = pairs[k].first, g = pairs[k].second;  // (lambdas below use them)
      ContactPairStep& s = *problem.pair_data[k];
      s.h = h;
      origin[k] = bodies_[f].state.position;
      const auto local = [&](RigidBodyState state) {
        state.position -= origin[k];
        return state;
      };
      s.state_f = local(bodies_[f].state);
      s.state_g = local(bodies_[g].state);
      auto remembered = memory_.find({f, g});
      const bool known = remembered != memory_.end();
      const bool warm = attempt == 0 && known;
      if (!warm) all_remembered[f] = all_remembered[g] = 0;
      const Eigen::Vector3d* last_normal = known ? &remembered->second.normal : nullptr;
      // The pair at the free-flight prediction of both poses.
      const auto predicted_pair = [&]() {
        ContactPairStep at_prediction = s;
        at_prediction.state_f = local(PredictedState(bodies_[f].state, h));
        if (s.g_moves) at_prediction.state_g = local(PredictedState(bodies_[g].state, h));
        return at_prediction;
      };
      PairMemory memory;
      if (warm) {
        memory = remembered->second;
        shift_points(-origin[k], &memory.geometry);
        // Carry the remembered points along with F's material point over one step; if the
        // carried point is no longer a lowest point of F towards G at the predicted pose (the
        // contact feature is changing: a vertex about to hit), start from that pose's support
        // point instead.
        const RigidBodyState& state = s.state_f;
        const Eigen::Vector3d a1 = memory.geometry.head<3>();
        const Eigen::Vector3d shift =
            h * (state.linear_velocity + state.angular_velocity.cross(a1 - state.position));
        memory.geometry.head<3>() += shift;
        memory.geometry.segment<3>(3) += shift;
        const ContactPairStep at_prediction = predicted_pair();
        const Eigen::Vector3d n = memory.normal;
        const Eigen::Vector3d lowest = WorldSupport(s.shape_f, at_prediction.state_f, -n);
        if (n.dot(memory.geometry.head<3>() - lowest) > 1e-3 * s.shape_f.BoundingRadius()) {
          const PairMemory seeded = Initialize(at_prediction, bodies_[f].mass.mass, &n);
          memory.geometry = seeded.geometry;
          memory.k1 = seeded.k1;
        }
      } else if (attempt == 3) {
        // A face or edge that turns flat against G within the step: start from its centre.
        const double turn = 2.0 * h *
                            (bodies_[f].state.angular_velocity.norm() +
                             (s.g_moves ? bodies_[g].state.angular_velocity.norm() : 0.0));
        memory = Initialize(s, bodies_[f].mass.mass, last_normal, std::max(1e-9, turn));
      } else if (attempt == 2) {
        memory = Initialize(predicted_pair(), bodies_[f].mass.mass, last_normal);
      } else {
        memory = Initialize(s, bodies_[f].mass.mass);
      }
      if (remembered != memory_.end()) {
        // The layer's state is physical, not a guess: keep it whatever the start.
        memory.deflection = remembered->second.deflection;
        memory.elastic = remembered->second.elastic;
      }
      const int m = s.shape_f.NumInequalities();
      const int k1 = FacingInequality(s.shape_f, s.state_f, memory.normal);
      if (k1 != memory.k1) {
        const double scale = memory.geometry[6 + memory.k1];
        memory.geometry.segment(6, m).setZero();
        memory.geometry[6 + k1] = scale;
        memory.k1 = k1;
      }
      s.k1 = k1;
      const Eigen::Vector3d helper = HelperAxis(memory.normal, memory.helper);
      if (helper != memory.helper && memory.helper.norm() > 0.5) {
        // Express the remembered tangential impulse in the new frame.
        Eigen::Vector3d t_old, o_old, t_new, o_new;
        TangentFrame(memory.normal, memory.helper, &t_old, &o_old);
        TangentFrame(memory.normal, helper, &t_new, &o_new);
        const Eigen::Vector3d tangential = memory.forces[1] * t_old + memory.forces[2] * o_old;
        memory.forces[1] = tangential.dot(t_new);
        memory.forces[2] = tangential.dot(o_new);
      }
      memory.helper = helper;
      s.helper = helper;
      s.previous_deflection = memory.deflection;
      s.elastic = memory.elastic;
      z->segment(builder.block_offset(problem.geometry_block[k]), memory.geometry.size()) =
          memory.geometry;
      z->segment(builder.block_offset(problem.force_block[k]), memory.forces.size()) =
          memory.forces;
      next_memory[{f, g}] = memory;
    }
    for (int i = 0; i < num_bodies; ++i) {
      if (problem.nu_block[i] < 0) continue;
      const bool has_pair = std::any_of(
          pairs.begin(), pairs.end(), [i](const auto& p) { return p.first == i || p.second == i; });
      const Body& body = bodies_[i];
      Vector6d start = nu_start[i];
      if (attempt == 0 && has_pair && all_remembered[i]) {
        start << body.state.linear_velocity, body.state.angular_velocity;
      }
      z->segment<6>(builder.block_offset(problem.nu_block[i])) = start;
    }
  };

  StepRecord record;
  record.problem_size = builder.size();
  const int first_attempt = options_.warm_start ? 0 : 1;
  const int last_attempt = pairs.empty() ? first_attempt : 3;
  int total_iterations = 0, best_attempt = -1;
  Eigen::VectorXd best_z;
  SolverSummary best;
  std::string best_report;
  for (int attempt = first_attempt; attempt <= last_attempt; ++attempt) {
    prepare(attempt, &z);
    const SolverSummary& summary = solver_->Solve(builder, &z);
    const std::string report = options_.keep_solver_reports ? summary.FullReport() : std::string();
    total_iterations += summary.iterations;
    if (best_attempt < 0 || !(summary.natural_residual >= best.natural_residual)) {
      best_attempt = attempt;
      best = summary;
      best_z = z;
      best_report = report;
    }
    if (summary.IsSolved()) break;
  }
  if (best_attempt != last_attempt && !best.IsSolved()) prepare(best_attempt, &z);  // its data
  z = best_z;
  record.summary = best;
  record.solver_report = best_report;
  record.summary.iterations = total_iterations;
  if (best.IsSolved() && best_attempt != first_attempt) {
    record.summary.message += (record.summary.message.empty() ? "" : "; ") +
                              std::string("solved from start ") + std::to_string(best_attempt) +
                              " after " + std::to_string(best_attempt - first_attempt) +
                              " failed start(s)";
  } else if (!best.IsSolved() && last_attempt > first_attempt) {
    record.summary.message +=
        (record.summary.message.empty() ? "" : "; ") + std::string("no start solved it (") +
        std::to_string(last_attempt - first_attempt + 1) + " tried); the best, start " +
        std::to_string(best_attempt) + ", is kept";
  }

  // A non-finite result is a failed step that moves nothing: the bodies keep their state.
  if (!z.allFinite()) {
    record.summary.status = Status::NumericalFailure;
    record.summary.message = "the step's result is not finite; the bodies were not moved" +
                             std::string(record.summary.message.empty() ? "" : "; ") +
                             record.summary.message;
    time_ += h;
    record.time = time_;
    record.step_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
    return record;
  }

  // Advance the bodies and read the contact quantities at the solution.
  std::vector<Vector6d> nu(num_bodies, Vector6d::Zero());
  for (int i = 0; i < num_bodies; ++i) {
    if (problem.nu_block[i] >= 0) nu[i] = z.segment<6>(builder.block_offset(problem.nu_block[i]));
  }
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [f, g] = pairs[k];
    const ContactPairStep& s = *problem.pair_data[k];
    const int geometry_block = problem.geometry_block[k], force_block = problem.force_block[k];
    const Eigen::VectorXd geometry =
        z.segment(builder.block_offset(geometry_block), builder.block_size(geometry_block));
    const Eigen::VectorXd forces =
        z.segment(builder.block_offset(force_block), builder.block_size(force_block));
    PairFrame<double> frame(s, nu[f].data(), s.g_moves ? nu[g].data() : nullptr, geometry.data());
    ContactRecord c;
    c.body_f = f;
    c.body_g = g;
    c.k1 = s.k1;
    c.ecp = geometry.head<3>() + origin[k];
    c.normal = Eigen::Vector3d(frame.n[0], frame.n[1], frame.n[2]);
    const bool compliant = s.law.compliant();
    c.p_n = forces[0] + (compliant ? forces[6] : 0.0);
    c.p_t = forces[1];
    c.p_o = forces[2];
    c.p_r = forces[3];
    c.deflection = compliant ? forces[5] : 0.0;
    const int m = s.shape_f.NumInequalities(), n = s.shape_g.NumInequalities();
    c.n_active_f = 1;
    for (int i = 0; i < m; ++i) {
      if (i != s.k1 && geometry[6 + i] > kActiveMultiplier) ++c.n_active_f;
    }
    for (int j = 0; j < n; ++j) {
      if (geometry[6 + m + j] > kActiveMultiplier) ++c.n_active_g;
    }
    PairMemory& memory = next_memory[{f, g}];
    memory.geometry = geometry;
    shift_points(origin[k], &memory.geometry);
    memory.forces = forces;
    if (c.normal.allFinite() && c.normal.norm() > 0.5) memory.normal = c.normal;
    memory.deflection = c.deflection;
    memory.elastic.setZero();
    if (s.law.elastic_friction() && c.p_n > 0.0) {
      const ContactLaw& law = s.law;
      const double er2 = law.e_r * law.e_r;
      const double v[3] = {frame.v_t, frame.v_o, frame.w_n};
      const double stiffness[3] = {law.tangential_stiffness, law.tangential_stiffness,
                                   law.tangential_stiffness * er2};
      const double damping[3] = {law.tangential_damping, law.tangential_damping,
                                 law.tangential_damping * er2};
      for (int a = 0; a < 3; ++a) {
        memory.elastic[a] = (-forces[1 + a] / h - damping[a] * v[a]) / stiffness[a];
      }
      if (!law.torsion) memory.elastic[2] = 0.0;
    }
    record.contacts.push_back(c);
  }
  for (int i = 0; i < num_bodies; ++i) {
    if (!bodies_[i].fixed) AdvanceState(h, nu[i], &bodies_[i].state);
  }
  for (ContactRecord& c : record.contacts) {
    const Body& F = bodies_[c.body_f];
    const Body& G = bodies_[c.body_g];
    const Eigen::Vector3d axis =
        G.shape.kind == ShapeKind::HalfSpace ? PlaneNormal(G.state) : c.normal;
    c.gap = SeparationAlongAxis(F.shape, F.state, G.shape, G.state, axis);
    record.max_penetration = std::max(record.max_penetration, -c.gap);
  }
  memory_ = std::move(next_memory);
  time_ += h;
  record.time = time_;
  record.step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return record;
}

}  // namespace ncpkit
