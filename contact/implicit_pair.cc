#include "contact/implicit_pair.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

// A multiplier l_i (i != k1) above this counts as positive: the l_i are ratios of gradient
// weights, of order 1 when the inequality is active.
constexpr double kActiveMultiplier = 1e-6;

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

// The other inequalities of F active at a1 (an edge or a vertex): weights l_i >= 0 that make
// grad f_k1 + sum l_i grad f_i parallel to -d, by least squares.
void EdgeAndVertexWeights(const ContactPairStep& s, const Eigen::Vector3d& a1,
                          const Eigen::Vector3d& d, const Eigen::Vector3d& grad_f,
                          ImplicitPairState* state) {
  const int m = s.shape_f.NumInequalities();
  std::vector<int> active;
  std::vector<Eigen::Vector3d> grads;
  const double scale = 1e-9 * std::max(1.0, s.shape_f.BoundingRadius());
  for (int i = 0; i < m; ++i) {
    Eigen::Vector3d g;
    if (i == state->k1 || InequalityAt(s.shape_f, s.state_f, a1, i, &g) < -scale) continue;
    active.push_back(i);
    grads.push_back(g);
  }
  if (active.empty()) return;
  // Unknowns [l_i..., lambda]: sum l_i grad_i + lambda d = -grad f_k1.
  Eigen::MatrixXd A(3, active.size() + 1);
  for (size_t k = 0; k < active.size(); ++k) A.col(k) = grads[k];
  A.col(active.size()) = d;
  const Eigen::VectorXd x = A.colPivHouseholderQr().solve(-grad_f);
  for (size_t k = 0; k < active.size(); ++k) {
    if (std::isfinite(x[k])) state->geometry[6 + active[k]] = std::max(0.0, x[k]);
  }
}

// Start impulses: where the shapes touch (or will within the step), the weight over one step
// as p_n and sliding friction against the current slip; else none. A start with p_n = p = 0
// makes the friction rows' Jacobian singular.
void StartImpulses(const ContactPairStep& s, const Eigen::Vector3d& a1, const Eigen::Vector3d& d,
                   double separation, double weight, ImplicitPairState* state) {
  const ContactLaw& law = s.law;
  Eigen::VectorXd& forces = state->forces;
  const Eigen::Vector3d v_f =
      s.state_f.linear_velocity + s.state_f.angular_velocity.cross(a1 - s.state_f.position);
  const Eigen::Vector3d v_g =
      s.state_g.linear_velocity + s.state_g.angular_velocity.cross(a1 - s.state_g.position);
  const Eigen::Vector3d slip = v_f - v_g;
  const double approach = std::max(0.0, -d.dot(slip));
  const double p_n = separation <= s.h * approach + 1e-6 ? std::max(weight, 1e-6) : 0.0;
  Eigen::Vector3d t, o;
  state->helper = HelperAxis(d, Eigen::Vector3d::Zero());
  TangentFrame(d, state->helper, &t, &o);
  const double v[3] = {
      t.dot(slip), o.dot(slip),
      law.torsion ? d.dot(s.state_f.angular_velocity - s.state_g.angular_velocity) : 0.0};
  const double e2[3] = {law.e_t * law.e_t, law.e_o * law.e_o, law.e_r * law.e_r};
  const double speed = std::sqrt(e2[0] * v[0] * v[0] + e2[1] * v[1] * v[1] + e2[2] * v[2] * v[2]);
  if (law.compliant()) {
    forces[ForceBlock::kDeflection] = std::max(0.0, law.thickness - separation);
    forces[ForceBlock::kLayerImpulse] = p_n;
  } else {
    forces[ForceBlock::kNormal] = p_n;
  }
  if (law.elastic_friction()) {
    forces[ForceBlock::kSlip] = 1.0;  // alpha: inside the friction ellipsoid
  } else if (speed > 1e-9) {
    // Maximal dissipation against the slip: sigma = |slip|_E, p = -mu P e^2 v / sigma.
    forces[ForceBlock::kSlip] = speed;
    for (int k = 0; k < 3; ++k) {
      forces[ForceBlock::kTangent + k] = -law.mu * p_n * e2[k] * v[k] / speed;
    }
  } else {
    forces[ForceBlock::kSlip] = 1e-3;
  }
}

}  // namespace

Eigen::Vector3d WorldSupport(const Shape& shape, const RigidBodyState& state,
                             const Eigen::Vector3d& direction, double flat) {
  const Eigen::Matrix3d R = state.orientation.toRotationMatrix();
  return state.position + R * shape.SupportPoint(R.transpose() * direction, flat);
}

double SeparationAlongAxis(const Shape& f, const RigidBodyState& pose_f, const Shape& g,
                           const RigidBodyState& pose_g, const Eigen::Vector3d& axis) {
  const double low_f = axis.dot(WorldSupport(f, pose_f, -axis));
  const double high_g = g.kind == ShapeKind::HalfSpace ? axis.dot(pose_g.position)
                                                       : axis.dot(WorldSupport(g, pose_g, axis));
  return low_f - high_g;
}

Eigen::Vector3d PlaneNormal(const RigidBodyState& state) {
  return state.orientation.toRotationMatrix().col(2);
}

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

// The axis from G towards F along which the shapes lie farthest apart, among the line of their
// centres and the face normals of boxes: for a face on a face (a box on a box, turned or offset)
// the face's normal, along which the separation is exact, where the line of centres tilts with
// the offset.
Eigen::Vector3d SeparatingAxis(const ContactPairStep& s, const Eigen::Vector3d& centres) {
  Eigen::Vector3d best = centres;
  double best_separation = SeparationAlongAxis(s.shape_f, s.state_f, s.shape_g, s.state_g, centres);
  for (const auto* pose : {&s.state_f, &s.state_g}) {
    const Shape& shape = pose == &s.state_f ? s.shape_f : s.shape_g;
    if (shape.kind != ShapeKind::Box) continue;
    const Eigen::Matrix3d R = pose->orientation.toRotationMatrix();
    for (int c = 0; c < 3; ++c) {
      const Eigen::Vector3d axis =
          R.col(c).dot(centres) < 0.0 ? Eigen::Vector3d(-R.col(c)) : Eigen::Vector3d(R.col(c));
      const double separation =
          SeparationAlongAxis(s.shape_f, s.state_f, s.shape_g, s.state_g, axis);
      if (separation > best_separation) {
        best_separation = separation;
        best = axis;
      }
    }
  }
  return best;
}

ImplicitPairState StartValues(const ContactPairStep& s, double mass_f,
                              const Eigen::Vector3d& gravity, const Eigen::Vector3d* direction,
                              double flat) {
  Eigen::Vector3d d;  // from G towards F
  if (direction != nullptr) {
    d = *direction;
  } else if (s.shape_g.kind == ShapeKind::HalfSpace) {
    d = PlaneNormal(s.state_g);
  } else {
    d = s.state_f.position - s.state_g.position;
    d = d.norm() > 0.0 ? Eigen::Vector3d(d.normalized()) : Eigen::Vector3d::UnitZ();
    d = SeparatingAxis(s, d);
  }
  const int m = s.shape_f.NumInequalities(), n = s.shape_g.NumInequalities();
  ImplicitPairState state;
  state.normal = d;
  state.k1 = FacingInequality(s.shape_f, s.state_f, d);
  const Eigen::Vector3d a1 = WorldSupport(s.shape_f, s.state_f, -d, flat);
  Eigen::Vector3d a2;
  if (s.shape_g.kind == ShapeKind::HalfSpace) {
    a2 = a1 - d * d.dot(a1 - s.state_g.position);
  } else {
    a2 = WorldSupport(s.shape_g, s.state_g, d);
  }
  state.geometry = Eigen::VectorXd::Zero(6 + m + n);
  state.geometry << a1, a2, Eigen::VectorXd::Zero(m + n);
  Eigen::Vector3d grad_f;
  InequalityAt(s.shape_f, s.state_f, a1, state.k1, &grad_f);
  const double separation = d.dot(a1 - a2);
  if (grad_f.norm() > 0.0) {
    state.geometry[6 + state.k1] = std::max(0.0, separation) / grad_f.norm();
  }
  EdgeAndVertexWeights(s, a1, d, grad_f, &state);
  const int j = n == 1 ? 0 : FacingInequality(s.shape_g, s.state_g, -d);
  Eigen::Vector3d grad_g;
  InequalityAt(s.shape_g, s.state_g, a2, j, &grad_g);
  if (grad_g.norm() > 0.0) state.geometry[6 + m + j] = grad_f.norm() / grad_g.norm();
  state.forces = Eigen::VectorXd::Zero(ForceBlock::Size(s.law.compliant()));
  StartImpulses(s, a1, d, separation, mass_f * gravity.norm() * s.h, &state);
  return state;
}

void CarryForward(const ContactPairStep& s, const ContactPairStep& predicted, double mass_f,
                  const Eigen::Vector3d& gravity, ImplicitPairState* state) {
  const RigidBodyState& pose = s.state_f;
  const Eigen::Vector3d a1 = state->geometry.head<3>();
  const Eigen::Vector3d shift =
      s.h * (pose.linear_velocity + pose.angular_velocity.cross(a1 - pose.position));
  state->geometry.head<3>() += shift;
  state->geometry.segment<3>(3) += shift;
  const Eigen::Vector3d n = state->normal;
  const Eigen::Vector3d lowest = WorldSupport(s.shape_f, predicted.state_f, -n);
  if (n.dot(state->geometry.head<3>() - lowest) > 1e-3 * s.shape_f.BoundingRadius()) {
    const ImplicitPairState seeded = StartValues(predicted, mass_f, gravity, &n);
    state->geometry = seeded.geometry;
    state->k1 = seeded.k1;
  }
}

void AlignWithStep(ImplicitPairState* state, ContactPairStep* s) {
  const int m = s->shape_f.NumInequalities();
  const int k1 = FacingInequality(s->shape_f, s->state_f, state->normal);
  if (k1 != state->k1) {
    const double scale = state->geometry[6 + state->k1];
    state->geometry.segment(6, m).setZero();
    state->geometry[6 + k1] = scale;
    state->k1 = k1;
  }
  s->k1 = k1;
  const Eigen::Vector3d helper = HelperAxis(state->normal, state->helper);
  if (helper != state->helper && state->helper.norm() > 0.5) {
    // Express the remembered tangential impulse in the new frame.
    Eigen::Vector3d t_old, o_old, t_new, o_new;
    TangentFrame(state->normal, state->helper, &t_old, &o_old);
    TangentFrame(state->normal, helper, &t_new, &o_new);
    Eigen::VectorXd& forces = state->forces;
    const Eigen::Vector3d tangential =
        forces[ForceBlock::kTangent] * t_old + forces[ForceBlock::kOther] * o_old;
    forces[ForceBlock::kTangent] = tangential.dot(t_new);
    forces[ForceBlock::kOther] = tangential.dot(o_new);
  }
  state->helper = helper;
  s->helper = helper;
  s->previous_deflection = state->deflection;
  s->elastic = state->elastic;
}

ContactRecord ReadContact(const ContactPairStep& s, const PairFrame<double>& frame,
                          const Eigen::Ref<const Eigen::VectorXd>& geometry,
                          const Eigen::Ref<const Eigen::VectorXd>& forces) {
  ContactRecord c;
  c.k1 = s.k1;
  c.ecp = geometry.head<3>();
  c.normal = Eigen::Vector3d(frame.n[0], frame.n[1], frame.n[2]);
  const bool compliant = s.law.compliant();
  c.p_n = forces[ForceBlock::kNormal] + (compliant ? forces[ForceBlock::kLayerImpulse] : 0.0);
  c.p_t = forces[ForceBlock::kTangent];
  c.p_o = forces[ForceBlock::kOther];
  c.p_r = forces[ForceBlock::kSpin];
  c.deflection = compliant ? forces[ForceBlock::kDeflection] : 0.0;
  const int m = s.shape_f.NumInequalities(), n = s.shape_g.NumInequalities();
  c.n_active_f = 1;
  for (int i = 0; i < m; ++i) {
    if (i != s.k1 && geometry[6 + i] > kActiveMultiplier) ++c.n_active_f;
  }
  for (int j = 0; j < n; ++j) {
    if (geometry[6 + m + j] > kActiveMultiplier) ++c.n_active_g;
  }
  return c;
}

Eigen::Vector3d ElasticDisplacement(const ContactPairStep& s, const PairFrame<double>& frame,
                                    const Eigen::Ref<const Eigen::VectorXd>& forces,
                                    double normal_impulse) {
  Eigen::Vector3d elastic = Eigen::Vector3d::Zero();
  if (!s.law.elastic_friction() || !(normal_impulse > 0.0)) return elastic;
  ElasticDisplacement(s, NumbersOf(s), frame, forces.data(), elastic.data());
  return elastic;
}

}  // namespace ncpkit
