#include "integrators/quasistatic_derivative.h"

#include <ceres/jet.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "contact/contact_feature.h"
#include "integrators/internal/pose_jets.h"
#include "integrators/quasistatic_stepper.h"
#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/sensitivity/linear_sensitivity.h"

namespace ncpkit::internal {
namespace {

// A contact's local inputs: the poses of A and B (position, world-frame turn), its friction
// coefficient, and the prescribed actuators' motion of A and of B in the step (a twist each).
constexpr int kPoseA = 0, kPoseB = 6, kMu = 12, kDriftA = 13, kDriftB = 19, kContactInputs = 25;
// A body's: its turn and its mass.
constexpr int kBodyInputs = 4;
using BodyJet = ceres::Jet<double, kBodyInputs>;

// The friction frame's directions on T, as SetFrictionFrame (contact/linearized_contact.h)
// chooses them at the nominal normal `n0`: the same world axis or plane normal, so that the
// directions turn with the normal.
template <class T>
std::vector<Vec3<T>> FrictionDirections(const Eigen::Vector3d& plane_normal, int count,
                                        const Eigen::Vector3d& n0, const Vec3<T>& n) {
  using std::sqrt;
  std::vector<Vec3<T>> out;
  if (plane_normal.squaredNorm() > 0.0 && plane_normal.cross(n0).norm() > 1e-9) {
    Vec3<T> t = plane_normal.cast<T>().cross(n);
    t /= sqrt(t.dot(t));
    return {t, Vec3<T>(-t)};
  }
  int k = 0;
  for (int j = 1; j < 3; ++j) {
    if (std::abs(n0[j]) < std::abs(n0[k]) - 1e-12) k = j;
  }
  const Vec3<T> e = Eigen::Vector3d::Unit(k).cast<T>();
  Vec3<T> t = e - e.dot(n) * n;
  t /= sqrt(t.dot(t));
  const Vec3<T> o = n.cross(t);
  for (int j = 0; j < count; ++j) {
    const double angle = 2.0 * M_PI * j / count;
    out.push_back(T(std::cos(angle)) * t + T(std::sin(angle)) * o);
  }
  return out;
}

std::string ContactName(const std::vector<Body>& bodies, const LinearizedContact& c, int i) {
  return bodies[c.a].name + "-" + bodies[c.b].name + " #" + std::to_string(i);
}

}  // namespace

QuasistaticStepDerivative::~QuasistaticStepDerivative() = default;

QuasistaticStepDerivative::QuasistaticStepDerivative(const QuasistaticStepData& step) {
  n_ = step.balance.size();
  z_ = step.z;
  AddNames(step);
  LinearizeBodies(step);
  LinearizeActuators(step);
  LinearizeContacts(step);
  LinearizeSlacks(step);
  Solve(step);
  ReadModes(step);
}

void QuasistaticStepDerivative::AddNames(const QuasistaticStepData& step) {
  entries_per_body_ = 6;
  const int nb = static_cast<int>(step.bodies.size());
  slot_of_body_.assign(nb, -1);
  for (int b = 0; b < nb; ++b) {
    if (step.bodies[b].fixed || step.actuated[b]) continue;
    slot_of_body_[b] = static_cast<int>(moving_bodies_.size());
    moving_bodies_.push_back(b);
    columns_.push_back(step.balance.body_columns(b));
  }
  for (const Actuator& a : step.actuators) {
    extra_state_names_.push_back(a.name + ".q");
    actuator_columns_.push_back(
        step.balance.actuator_column(static_cast<int>(&a - step.actuators.data())));
  }
  command_size_ = static_cast<int>(step.actuators.size());
  parameter_names_ = {"mu"};
  std::map<std::pair<std::string, std::string>, int> pair_slot;
  for (const auto& [names, law] : step.law_table.overrides()) {
    pair_slot[names] = static_cast<int>(parameter_names_.size());
    parameter_names_.push_back("mu(" + names.first + "," + names.second + ")");
  }
  mass_slot_.assign(nb, -1);
  for (int b = 0; b < nb; ++b) {
    if (step.bodies[b].fixed) continue;
    mass_slot_[b] = static_cast<int>(parameter_names_.size());
    parameter_names_.push_back(step.bodies[b].name + ".mass");
  }
  for (const LinearizedContact& c : step.contacts) {
    const auto found = pair_slot.find(std::minmax(step.bodies[c.a].name, step.bodies[c.b].name));
    mu_slot_.push_back(found == pair_slot.end() ? 0 : found->second);
  }
  inputs_ = state_size() + parameter_size() + command_size_;
}

// How a body's pose moves with [s, p, u]: an unactuated body's with its own state entries, an
// actuated one's with its actuators' positions (their twists), a fixed one's not at all.
QuasistaticStepDerivative::InputMap QuasistaticStepDerivative::PoseMap(
    const QuasistaticStepData& step, int body) const {
  InputMap map(6);
  if (slot_of_body_[body] >= 0) {
    for (int k = 0; k < 6; ++k) map[k].push_back({6 * slot_of_body_[body] + k, 1.0});
    return map;
  }
  const int actuator_entries = 6 * static_cast<int>(moving_bodies_.size());
  for (size_t a = 0; a < step.actuators.size(); ++a) {
    const Actuator& act = step.actuators[a];
    if (!act.Moves(body)) continue;
    const Vector6d twist = ActuatorTwist(act, step.start[body].position,
                                         ActuatedTranslation(step.actuators, step.q_start, body));
    for (int k = 0; k < 6; ++k) {
      if (twist[k] != 0.0) map[k].push_back({actuator_entries + static_cast<int>(a), twist[k]});
    }
  }
  return map;
}

// How the prescribed actuators' motion of a body in the step, twist (q_cmd(t + h) - q), moves
// with the commands and positions.
QuasistaticStepDerivative::InputMap QuasistaticStepDerivative::DriftMap(
    const QuasistaticStepData& step, int body) const {
  InputMap map(6);
  const int actuator_entries = 6 * static_cast<int>(moving_bodies_.size());
  const int commands = state_size() + parameter_size();
  for (size_t a = 0; a < step.actuators.size(); ++a) {
    const Actuator& act = step.actuators[a];
    if (!act.prescribed || !act.Moves(body)) continue;
    const Vector6d twist = ActuatorTwist(act, step.start[body].position,
                                         ActuatedTranslation(step.actuators, step.q_start, body));
    for (int k = 0; k < 6; ++k) {
      if (twist[k] == 0.0) continue;
      map[k].push_back({commands + static_cast<int>(a), twist[k]});
      map[k].push_back({actuator_entries + static_cast<int>(a), -twist[k]});
    }
  }
  return map;
}

// d[axis_a x (p - pivot - T)] = axis_a x (dp - dT): the body's position moves with every
// actuator by its twist's linear part, and the prismatic ones' share of it, dT, moves the pivot
// too; what remains is the revolute actuators' axis_a' x (p - pivot_a' - T) per unit of q_a'.
std::vector<QuasistaticStepDerivative::TurningTwist> QuasistaticStepDerivative::TurningTwists(
    const QuasistaticStepData& step, int body) const {
  std::vector<TurningTwist> out;
  const int actuator_entries = 6 * static_cast<int>(moving_bodies_.size());
  const Eigen::Vector3d translation = ActuatedTranslation(step.actuators, step.q_start, body);
  for (size_t a = 0; a < step.actuators.size(); ++a) {
    const Actuator& act = step.actuators[a];
    if (act.kind != ActuatorKind::Revolute || !act.Moves(body)) continue;
    TurningTwist turning;
    turning.column = actuator_columns_[a];
    if (act.prescribed) turning.prescribed = act.command(step.t1) - step.q_start[a];
    for (size_t other = 0; other < step.actuators.size(); ++other) {
      const Actuator& by = step.actuators[other];
      if (by.kind != ActuatorKind::Revolute || !by.Moves(body)) continue;
      const Vector6d twist = ActuatorTwist(by, step.start[body].position, translation);
      turning.inputs.push_back(actuator_entries + static_cast<int>(other));
      turning.by_input.push_back(act.axis.cross(twist.head<3>()));
    }
    out.push_back(std::move(turning));
  }
  return out;
}

void QuasistaticStepDerivative::AddRow(int row, const Eigen::VectorXd& local, const InputMap& map) {
  for (int k = 0; k < local.size(); ++k) {
    if (local[k] == 0.0) continue;
    for (const auto& [input, coefficient] : map[k]) {
      triplets_.emplace_back(row, input, local[k] * coefficient);
    }
  }
}

// F_delta of an unactuated body: (eps/h^2) diag(m I, R I R^T) delta_b - m g, the inertia scaling
// with the mass, in its turn and mass.
void QuasistaticStepDerivative::LinearizeBodies(const QuasistaticStepData& step) {
  const double reg = step.options.regularization / (step.options.h * step.options.h);
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    const int b = moving_bodies_[k];
    const Body& body = step.bodies[b];
    const std::array<int, 6>& cols = columns_[k];
    const Vec3<BodyJet> theta(BodyJet(0.0, 0), BodyJet(0.0, 1), BodyJet(0.0, 2));
    const BodyJet m(body.mass.mass, 3);
    const Mat3<BodyJet> R = Turned(step.start[b].orientation.toRotationMatrix(), theta);
    const Mat3<BodyJet> inertia =
        R * (body.mass.body_inertia.cast<BodyJet>() * (m / body.mass.mass)) * R.transpose();
    Eigen::Matrix<BodyJet, 6, 1> delta = Eigen::Matrix<BodyJet, 6, 1>::Zero();
    for (int l = 0; l < 6; ++l) {
      if (cols[l] >= 0) delta[l] = BodyJet(step.z[cols[l]]);
    }
    InputMap map(kBodyInputs);
    for (int l = 0; l < 3; ++l) map[l].push_back({6 * static_cast<int>(k) + 3 + l, 1.0});
    map[3].push_back({state_size() + mass_slot_[b], 1.0});
    for (int l = 0; l < 6; ++l) {
      if (cols[l] < 0) continue;
      BodyJet f = l < 3 ? BodyJet(reg) * m * delta[l] - m * step.options.gravity[l]
                        : BodyJet(reg) * inertia.row(l - 3).dot(delta.tail<3>());
      AddRow(cols[l], f.v, map);
    }
  }
}

// F of an actuator's column: K delta - K (q_cmd - q) - sum over its bodies of m g . twist.
void QuasistaticStepDerivative::LinearizeActuators(const QuasistaticStepData& step) {
  const int actuator_entries = 6 * static_cast<int>(moving_bodies_.size());
  const int commands = state_size() + parameter_size();
  for (size_t a = 0; a < step.actuators.size(); ++a) {
    const int col = actuator_columns_[a];
    if (col < 0) continue;
    const Actuator& act = step.actuators[a];
    triplets_.emplace_back(col, commands + static_cast<int>(a), -act.stiffness);
    triplets_.emplace_back(col, actuator_entries + static_cast<int>(a), act.stiffness);
    for (int b : act.bodies) {
      const Vector6d twist = ActuatorTwist(act, step.start[b].position,
                                           ActuatedTranslation(step.actuators, step.q_start, b));
      triplets_.emplace_back(col, state_size() + mass_slot_[b],
                             -step.options.gravity.dot(twist.head<3>()));
    }
    // A revolute actuator's lever turns with the revolute actuators of its bodies.
    for (int b : act.bodies) {
      for (const TurningTwist& turning : TurningTwists(step, b)) {
        if (turning.column != col) continue;
        for (size_t k = 0; k < turning.inputs.size(); ++k) {
          triplets_.emplace_back(
              col, turning.inputs[k],
              -step.bodies[b].mass.mass * step.options.gravity.dot(turning.by_input[k]));
        }
      }
    }
  }
}

void QuasistaticStepDerivative::LinearizeContacts(const QuasistaticStepData& step) {
  std::vector<std::vector<int>> rows(step.contacts.size());
  for (size_t r = 0; r < step.rows.size(); ++r) rows[step.rows[r].contact].push_back(r);
  for (size_t i = 0; i < step.contacts.size(); ++i) {
    if (!rows[i].empty()) LinearizeContact(step, static_cast<int>(i), rows[i]);
  }
}

// The DLC's slack rows mu c_n - sum_j c_f,j: their derivative in mu.
void QuasistaticStepDerivative::LinearizeSlacks(const QuasistaticStepData& step) {
  for (const auto& [contact, sigma, normal] : step.slacks) {
    triplets_.emplace_back(sigma, state_size() + mu_slot_[contact], step.z[normal]);
  }
}

namespace {

// A contact on Jets of its local inputs: its point, normal and distance from its features, and
// its friction frame's directions d_j.
template <class J>
struct ContactOnJets {
  Eigen::Matrix<J, kContactInputs, 1> in;
  FeatureContact<J> at;
  std::vector<Vec3<J>> d;
  // A row's direction: n, n + mu d_j or d_j.
  Vec3<J> Direction(const QuasistaticRow& row) const {
    if (row.kind == 'n') return at.normal;
    if (row.kind == 'p') return d[row.j];
    return d.empty() ? at.normal : Vec3<J>(at.normal + in[kMu] * d[row.j]);
  }
};

// `active`: the inputs seeded, one dual part each (the others are constant: a fixed body's pose,
// the drift of a body no prescribed actuator moves).
template <class J>
ContactOnJets<J> EvaluateContact(const QuasistaticStepData& step, int i,
                                 const std::vector<int>& active) {
  const LinearizedContact& c = step.contacts[i];
  ContactOnJets<J> out;
  for (int k = 0; k < kContactInputs; ++k) out.in[k] = J(k == kMu ? c.mu : 0.0);
  for (size_t slot = 0; slot < active.size(); ++slot) {
    out.in[active[slot]] = J(active[slot] == kMu ? c.mu : 0.0, static_cast<int>(slot));
  }
  const auto pose = [&](int body, int first) {
    return FeaturePose<J>{
        step.start[body].position.template cast<J>() + out.in.template segment<3>(first),
        Turned(step.start[body].orientation.toRotationMatrix(),
               Vec3<J>(out.in.template segment<3>(first + 3)))};
  };
  const ContactFeature feature =
      c.geometry.feature.Expand(step.bodies[c.a].shape, step.bodies[c.b].shape);
  if (!EvaluateContactFeature(feature, pose(c.a, kPoseA), pose(c.b, kPoseB), &out.at)) {
    throw InputError("quasistatic step derivatives: contact " + ContactName(step.bodies, c, i) +
                     " is of a kind whose motion with the poses is not described "
                     "(docs/derivatives.md \"Contact geometry\")");
  }
  if (!c.directions.empty()) {
    out.d = FrictionDirections(step.options.plane_normal, static_cast<int>(c.directions.size()),
                               c.geometry.normal, out.at.normal);
  }
  return out;
}

// A row of a contact on Jets: u . (displacement of B's point - A's) as a coefficient per column
// of delta, and its constant (prescribed motion, and the distance but for pyramid rows).
template <class J>
struct RowOnJets {
  std::map<int, J> coefficient;
  J constant;
};

template <class J>
RowOnJets<J> ContactRow(const QuasistaticStepData& step, const LinearizedContact& c,
                        const ContactOnJets<J>& jets, const QuasistaticRow& spec) {
  const int ends[2] = {c.b, c.a};
  const Vec3<J> points[2] = {jets.at.point_b, jets.at.point_a};
  const int drift[2] = {kDriftB, kDriftA};
  const int body_pose[2] = {kPoseB, kPoseA};
  const Vec3<J> u = jets.Direction(spec);
  RowOnJets<J> row;
  row.constant = spec.kind == 'p' ? J(0.0) : jets.at.distance;
  for (int side = 0; side < 2; ++side) {
    const int b = ends[side];
    const double sign = side == 0 ? 1.0 : -1.0;
    const Vec3<J> lever = points[side] - (step.start[b].position.template cast<J>() +
                                          Vec3<J>(jets.in.template segment<3>(body_pose[side])));
    const Vec3<J> moment = lever.cross(u);
    const auto along = [&](const Eigen::Matrix<J, 6, 1>& T) {
      return u.dot(T.template head<3>()) + moment.dot(T.template tail<3>());
    };
    for (const auto& [col, T] : step.balance.motion(b)) {
      auto [it, added] = row.coefficient.try_emplace(col, J(0.0));
      it->second += sign * along(T.template cast<J>());
    }
    const Eigen::Matrix<J, 6, 1> moved =
        step.balance.drift(b).cast<J>() + jets.in.template segment<6>(drift[side]);
    row.constant += sign * along(moved);
  }
  return row;
}

// The features must give back the step's own row; else the derivative would be another
// problem's.
template <class J>
bool ReproducesRow(const QuasistaticStepData& step, int index, const RowOnJets<J>& row) {
  const double q = step.problem.q()[index];
  bool same = std::abs(row.constant.a - q) <= 1e-7 * (1.0 + std::abs(q));
  for (const auto& [col, a] : row.coefficient) {
    const double m = step.problem.sparse_columns().coeff(index, col);
    same = same && std::abs(a.a - m) <= 1e-7 * (1.0 + std::abs(a.a));
  }
  return same;
}

}  // namespace

QuasistaticStepDerivative::InputMap QuasistaticStepDerivative::ContactMap(
    const QuasistaticStepData& step, int i) const {
  const LinearizedContact& c = step.contacts[i];
  InputMap map(kContactInputs);
  const InputMap maps[4] = {PoseMap(step, c.a), PoseMap(step, c.b), DriftMap(step, c.a),
                            DriftMap(step, c.b)};
  for (int k = 0; k < 6; ++k) {
    map[kPoseA + k] = maps[0][k];
    map[kPoseB + k] = maps[1][k];
    map[kDriftA + k] = maps[2][k];
    map[kDriftB + k] = maps[3][k];
  }
  map[kMu].push_back({state_size() + mu_slot_[i], 1.0});
  return map;
}

namespace {

// A contact's entries of dF/dx: per entry its row of F and its derivative in the contact's local
// inputs (kContactInputs), from Jets of N components seeded on `active`. Throws InputError where
// the features do not give back the step's own row (the derivative would be another problem's).
// *directions: each row's direction u at the step's poses.
template <int N>
void ContactEntries(const QuasistaticStepData& step, int i, const std::vector<int>& rows,
                    const std::vector<int>& active,
                    std::vector<std::pair<int, Eigen::VectorXd>>* entries,
                    std::vector<Eigen::Vector3d>* directions) {
  using J = ceres::Jet<double, N>;
  const LinearizedContact& c = step.contacts[i];
  const ContactOnJets<J> jets = EvaluateContact<J>(step, i, active);
  const auto local = [&](const J& x) {
    Eigen::VectorXd out = Eigen::VectorXd::Zero(kContactInputs);
    for (size_t slot = 0; slot < active.size(); ++slot) out[active[slot]] = x.v[slot];
    return out;
  };
  for (const int r : rows) {
    const int index = step.rows[r].index;
    const RowOnJets<J> row = ContactRow(step, c, jets, step.rows[r]);
    const Vec3<J> u = jets.Direction(step.rows[r]);
    directions->emplace_back(u.x().a, u.y().a, u.z().a);
    if (!ReproducesRow(step, index, row)) {
      throw InputError("quasistatic step derivatives: contact " + ContactName(step.bodies, c, i) +
                       ": its features do not reproduce its row");
    }
    J residual = row.constant;
    for (const auto& [col, a] : row.coefficient) {
      residual += a * step.z[col];
      entries->emplace_back(col, local(-step.z[index] * a));
    }
    entries->emplace_back(index, local(residual));
  }
}

}  // namespace

// What a contact's rows add to F: A delta + c on its rows, -A^T lambda on its bodies' columns.
// Only the local inputs that move with x are seeded (a box on the fixed ground: its pose and mu,
// 7 of the 25), and the Jets are sized to them.
void QuasistaticStepDerivative::LinearizeContact(const QuasistaticStepData& step, int i,
                                                 const std::vector<int>& rows) {
  const InputMap map = ContactMap(step, i);
  std::vector<int> active;
  for (int k = 0; k < kContactInputs; ++k) {
    if (!map[k].empty()) active.push_back(k);
  }
  std::vector<std::pair<int, Eigen::VectorXd>> entries;
  std::vector<Eigen::Vector3d> directions;
  if (active.size() <= 7) {
    ContactEntries<7>(step, i, rows, active, &entries, &directions);
  } else if (active.size() <= 13) {
    ContactEntries<13>(step, i, rows, active, &entries, &directions);
  } else if (active.size() <= 19) {
    ContactEntries<19>(step, i, rows, active, &entries, &directions);
  } else {
    ContactEntries<kContactInputs>(step, i, rows, active, &entries, &directions);
  }
  for (const auto& [row, local] : entries) AddRow(row, local, map);
  AddTurningTwists(step, i, rows, directions);
}

// A row's coefficient of a revolute actuator's column (or its constant, for a prescribed one)
// is sign u . twist: as the twist turns with the actuators' positions, it moves by sign u .
// d(twist), the row's F by that times delta's column (or the prescribed motion) and the column's
// F by minus that times the row's multiplier.
void QuasistaticStepDerivative::AddTurningTwists(const QuasistaticStepData& step, int i,
                                                 const std::vector<int>& rows,
                                                 const std::vector<Eigen::Vector3d>& directions) {
  const LinearizedContact& c = step.contacts[i];
  const int ends[2] = {c.b, c.a};
  for (int side = 0; side < 2; ++side) {
    if (!step.actuated[ends[side]]) continue;
    const double sign = side == 0 ? 1.0 : -1.0;
    for (const TurningTwist& turning : TurningTwists(step, ends[side])) {
      for (size_t r = 0; r < rows.size(); ++r) {
        const int index = step.rows[rows[r]].index;
        for (size_t k = 0; k < turning.inputs.size(); ++k) {
          const double d = sign * directions[r].dot(turning.by_input[k]);
          if (turning.column < 0) {
            triplets_.emplace_back(index, turning.inputs[k], d * turning.prescribed);
            continue;
          }
          triplets_.emplace_back(index, turning.inputs[k], d * z_[turning.column]);
          triplets_.emplace_back(turning.column, turning.inputs[k], -z_[index] * d);
        }
      }
    }
  }
}

namespace {

// Per contact whether it presses (a normal or cone row's multiplier above rounding) and whether
// it slips (a relaxed cone row's residual, or the DLC's slip sigma, above rounding); and per
// index of z its contact (-1: delta's).
struct ContactStates {
  std::vector<char> pressed, slips;
  std::vector<int> contact_of_index;
};

ContactStates ReadContactStates(const QuasistaticStepData& step, const Eigen::VectorXd& z, int n) {
  const int nc = static_cast<int>(step.contacts.size());
  const Eigen::VectorXd w = step.problem.sparse_columns() * z + step.problem.q();
  const double force_scale = 1e-9 * (1.0 + z.tail(z.size() - n).lpNorm<Eigen::Infinity>());
  const double gap_scale = 1e-9 * (1.0 + w.tail(w.size() - n).lpNorm<Eigen::Infinity>());
  ContactStates out{std::vector<char>(nc, 0), std::vector<char>(nc, 0),
                    std::vector<int>(z.size(), -1)};
  for (const QuasistaticRow& row : step.rows) {
    out.contact_of_index[row.index] = row.contact;
    if (row.kind == 'p') continue;  // a DLC friction force
    out.pressed[row.contact] = out.pressed[row.contact] || z[row.index] > force_scale;
    if (row.kind == 'r') {
      out.slips[row.contact] = out.slips[row.contact] || std::abs(w[row.index]) > gap_scale;
    }
  }
  for (const auto& [contact, sigma, normal] : step.slacks) {
    out.contact_of_index[sigma] = contact;
    out.slips[contact] = z[sigma] > force_scale;
  }
  return out;
}

}  // namespace

void QuasistaticStepDerivative::Solve(const QuasistaticStepData& step) {
  const int size = step.problem.size();
  // A tied row (zero multiplier, zero residual) is taken on its Free side: the contact holds.
  // A solver's vertex solution leaves a resting body's redundant corners tied, and the Bound
  // side lets them open or sink, which turns a box about the loaded diagonal: on two flush boxes
  // a step's state Jacobian had eigenvalues up to 1.44 against central differences that put the
  // tilt back (docs/derivatives.md "Steps"). A pressed contact that slips keeps its tied rows on
  // their Bound side: held, they would stop a slide that the data keep going (a prescribed
  // finger sliding across a box's face turned the box in the derivative, not in the steps).
  SensitivityOptions options;
  options.degenerate_side = DegenerateSide::Free;
  const ContactStates states = ReadContactStates(step, z_, n_);
  options.degenerate_sides.assign(static_cast<size_t>(size), DegenerateSide::Free);
  for (int index = n_; index < size; ++index) {
    const int c = states.contact_of_index[index];
    if (c >= 0 && states.pressed[c] && states.slips[c]) {
      options.degenerate_sides[index] = DegenerateSide::Bound;
    }
  }
  sensitivity_ = std::make_unique<LinearSensitivity>(step.problem, z_, options);
  G_.resize(size, inputs_);
  G_.setFromTriplets(triplets_.begin(), triplets_.end());
  triplets_.clear();
  triplets_.shrink_to_fit();
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    Eigen::Vector3d theta = Eigen::Vector3d::Zero();
    for (int l = 0; l < 3; ++l) {
      if (columns_[k][3 + l] >= 0) theta[l] = step.z[columns_[k][3 + l]];
    }
    turn_.push_back(theta.norm() > 0.0
                        ? Eigen::AngleAxisd(theta.norm(), theta.normalized()).toRotationMatrix()
                        : Eigen::Matrix3d::Identity());
    left_jacobian_.push_back(So3LeftJacobian(theta));
  }
}

// Each contact's mode: 'a' no force, 'f' frictionless and pressed, 's' no slip (every row of
// its relaxed cone active; the DLC's slip sigma zero), 'l' sliding; and the degenerate contacts.
void QuasistaticStepDerivative::ReadModes(const QuasistaticStepData& step) {
  const int nc = static_cast<int>(step.contacts.size());
  const ContactStates states = ReadContactStates(step, z_, n_);
  const std::vector<int>& contact_of_index = states.contact_of_index;
  for (int i = 0; i < nc; ++i) {
    contact_modes_ += !states.pressed[i]                    ? 'a'
                      : step.contacts[i].directions.empty() ? 'f'
                      : states.slips[i]                     ? 'l'
                                                            : 's';
  }
  std::vector<char> named(nc, 0);
  for (int index : sensitivity_->degenerate()) {
    const int i = index < n_ ? -1 : contact_of_index[index];
    if (i < 0 || named[i]) continue;
    named[i] = 1;
    degenerate_contacts_.push_back(ContactName(step.bodies, step.contacts[i], i));
  }
  // With eps > 0 the QP's delta is unique; the DLC's need not be: a free direction of the
  // linearized problem that moves delta leaves the step undetermined.
  const Eigen::MatrixXd free = sensitivity_->box().UndeterminedDirections();
  determined_ = free.cols() == 0 || free.topRows(n_).cwiseAbs().maxCoeff() <= 1e-8;
}

Eigen::VectorXd QuasistaticStepDerivative::Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                               const Eigen::VectorXd& du) const {
  const int ns = state_size(), np = parameter_size();
  Eigen::VectorXd dx = Eigen::VectorXd::Zero(inputs_);
  if (ds.size()) dx.head(ns) = ds;
  if (dp.size()) dx.segment(ns, np) = dp;
  if (du.size()) dx.tail(command_size_) = du;
  LinearSensitivity::Tangent tangent;
  tangent.q = G_ * dx;
  const Eigen::VectorXd dz = sensitivity_->Jvp(tangent);
  const auto entry = [&](int col) { return col >= 0 ? dz[col] : 0.0; };
  Eigen::VectorXd out(ns);
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    const std::array<int, 6>& cols = columns_[k];
    const Eigen::Vector3d d_position(entry(cols[0]), entry(cols[1]), entry(cols[2]));
    const Eigen::Vector3d d_turn(entry(cols[3]), entry(cols[4]), entry(cols[5]));
    const int s = 6 * static_cast<int>(k);
    out.segment<3>(s) = dx.segment<3>(s) + d_position;
    out.segment<3>(s + 3) = turn_[k] * dx.segment<3>(s + 3) + left_jacobian_[k] * d_turn;
  }
  const int first = 6 * static_cast<int>(moving_bodies_.size());
  for (size_t a = 0; a < actuator_columns_.size(); ++a) {
    const int col = actuator_columns_[a];
    out[first + a] = col >= 0 ? dx[first + a] + dz[col] : dx[ns + np + a];
  }
  return out;
}

StepDerivative::Gradient QuasistaticStepDerivative::Vjp(const Eigen::VectorXd& g) const {
  const int ns = state_size(), np = parameter_size();
  Eigen::VectorXd gx = Eigen::VectorXd::Zero(inputs_);
  Eigen::VectorXd gz = Eigen::VectorXd::Zero(z_.size());
  const auto add = [&](int col, double value) {
    if (col >= 0) gz[col] += value;
  };
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    const std::array<int, 6>& cols = columns_[k];
    const int s = 6 * static_cast<int>(k);
    const Eigen::Vector3d g_turn = left_jacobian_[k].transpose() * g.segment<3>(s + 3);
    gx.segment<3>(s) += g.segment<3>(s);
    gx.segment<3>(s + 3) += turn_[k].transpose() * g.segment<3>(s + 3);
    for (int l = 0; l < 3; ++l) {
      add(cols[l], g[s + l]);
      add(cols[3 + l], g_turn[l]);
    }
  }
  const int first = 6 * static_cast<int>(moving_bodies_.size());
  for (size_t a = 0; a < actuator_columns_.size(); ++a) {
    const int col = actuator_columns_[a];
    if (col >= 0) {
      gx[first + a] += g[first + a];
      gz[col] += g[first + a];
    } else {
      gx[ns + np + a] += g[first + a];
    }
  }
  gx.noalias() += G_.transpose() * sensitivity_->Vjp(gz).q;
  Gradient out;
  out.state = gx.head(ns);
  out.parameters = gx.segment(ns, np);
  out.commands = gx.tail(command_size_);
  return out;
}

}  // namespace ncpkit::internal
