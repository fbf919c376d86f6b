#include "integrators/explicit/step_derivative.h"

#include <ceres/jet.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "contact/contact_feature.h"
#include "contact/contact_frame.h"
#include "integrators/explicit_stepper.h"
#include "integrators/internal/pose_jets.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {
namespace {

// Jets seeded with `nominal` and unit derivatives from dual part `first` on.
template <class J, int N>
Eigen::Matrix<J, N, 1> Seeded(const Eigen::Matrix<double, N, 1>& nominal, int first) {
  Eigen::Matrix<J, N, 1> out;
  for (int k = 0; k < N; ++k) out[k] = J(nominal[k], first + k);
  return out;
}

// Per body: vec(M) (column-major) and f = M nu + [h m g + u_lin; -h omega x I omega + u_ang],
// from [theta, v, omega, m, h, u]; the body's inertia scales with its mass.
template <class T>
void MassAndMomentum(const Body& body, const Eigen::Matrix3d& R0, const Eigen::Vector3d& gravity,
                     const T* in, T* out) {
  const Vec3<T> theta(in[0], in[1], in[2]), v(in[3], in[4], in[5]), omega(in[6], in[7], in[8]);
  const T m = in[9], h = in[10];
  const Mat3<T> R = Turned(R0, theta);
  const Mat3<T> inertia =
      R * (body.mass.body_inertia.cast<T>() * (m / T(body.mass.mass))) * R.transpose();
  Eigen::Map<Eigen::Matrix<T, 6, 6>> M(out);
  M.setZero();
  M.template topLeftCorner<3, 3>() = Mat3<T>::Identity() * m;
  M.template bottomRightCorner<3, 3>() = inertia;
  const Vec3<T> spin = inertia * omega;
  const Vec3<T> linear = m * v + h * m * gravity.cast<T>();
  const Vec3<T> angular = spin - h * omega.cross(spin);
  for (int k = 0; k < 3; ++k) {
    out[36 + k] = linear[k] + in[11 + k];
    out[39 + k] = angular[k] + in[14 + k];
  }
}

// The rows [d^T, ((p - c) x d)^T] for d = n, t1, t2 (contact/contact_frame.h).
template <class T>
Eigen::Matrix<T, 3, 6> FrameRows(const Vec3<T> (&d)[3], const Vec3<T>& p, const Vec3<T>& c) {
  Eigen::Matrix<T, 3, 6> rows;
  const Vec3<T> arm = p - c;
  for (int k = 0; k < 3; ++k) {
    rows.template block<1, 3>(k, 0) = d[k].transpose();
    rows.template block<1, 3>(k, 3) = arm.cross(d[k]).transpose();
  }
  return rows;
}

// What a contact's local function needs besides its inputs.
struct ContactSetting {
  const ExplicitContact& contact;
  const ContactFeature& feature;  // the contact's, expanded (FeatureId::Expand)
  const RigidBodyState& a;
  const RigidBodyState& b;
  double restitution_velocity;
  bool restitution;         // the law's coefficient is > 0
  bool moving_a, moving_b;  // whether the bodies can move (a fixed one's inputs are constant)
};

// Per contact: [rows_a (3 x 6), rows_b, b_N] from [x_a, theta_a, x_b, theta_b, nu_a, nu_b, e,
// h] (changes from the start of the step), as the explicit stepper forms them
// (ExplicitStepper::FrameRowsOf and NormalOffset) with the contact's features at the changed
// poses and its tangents turned with its normal.
template <class T>
void ContactRows(const ContactSetting& s, bool described, const T* in, T* out) {
  const ExplicitContact& c = s.contact;
  // A fixed body's pose is constant: its rotation needs no turn on Jets.
  const auto pose = [in](const RigidBodyState& state, bool moving, int first) {
    const Eigen::Matrix3d R = state.orientation.toRotationMatrix();
    return FeaturePose<T>{
        state.position.cast<T>() + Vec3<T>(in[first], in[first + 1], in[first + 2]),
        moving ? Turned(R, Vec3<T>(in[first + 3], in[first + 4], in[first + 5]))
               : Mat3<T>(R.cast<T>())};
  };
  const FeaturePose<T> pa = pose(s.a, s.moving_a, 0), pb = pose(s.b, s.moving_b, 6);
  FeatureContact<T> e;
  if (!described || !EvaluateContactFeature(s.feature, pa, pb, &e)) {
    e = {c.point.point_a.cast<T>(), c.point.point_b.cast<T>(), c.point.normal.cast<T>(),
         T(c.point.distance)};
  }
  // The stepper's tangents (ContactTangentBasis) as the normal turns: the pyramid and relaxed
  // models' edges are fixed in them.
  Vec3<T> frame[3] = {e.normal, Vec3<T>(), Vec3<T>()};
  TangentsAbout(TangentAxis(c.point.normal), e.normal, &frame[1], &frame[2]);
  const Eigen::Matrix<T, 3, 6> rows_a = -FrameRows(frame, e.point_a, pa.position);
  const Eigen::Matrix<T, 3, 6> rows_b = FrameRows(frame, e.point_b, pb.position);
  const T h = in[25];
  T offset = e.distance / h;
  if (s.restitution) {
    Eigen::Matrix<T, 6, 1> nu_a, nu_b;
    for (int k = 0; k < 6; ++k) {
      nu_a[k] = in[12 + k];
      nu_b[k] = in[18 + k];
    }
    const T approach = rows_a.row(0).dot(nu_a) + rows_b.row(0).dot(nu_b);
    // The branch the step took, from the values alone.
    if (approach < T(-s.restitution_velocity) && offset + approach < T(0)) {
      offset = std::min(offset, in[24] * approach);
    }
  }
  Eigen::Map<Eigen::Matrix<T, 3, 6>> map_a(out), map_b(out + 18);
  map_a = rows_a;
  map_b = rows_b;
  out[36] = offset;
}

Vector6d Twist(const RigidBodyState& s) {
  Vector6d nu;
  nu << s.linear_velocity, s.angular_velocity;
  return nu;
}

std::string PairName(const std::vector<Body>& bodies, const ExplicitContact& c) {
  return bodies[c.body_a].name + "-" + bodies[c.body_b].name;
}

}  // namespace

ExplicitStepDerivative::~ExplicitStepDerivative() = default;

ExplicitStepDerivative::ExplicitStepDerivative(const ExplicitStepData& step) {
  h_ = step.options.h;
  entries_per_body_ = 12;
  for (size_t i = 0; i < step.bodies.size(); ++i) {
    if (!step.bodies[i].fixed) moving_bodies_.push_back(static_cast<int>(i));
  }
  command_size_ = 6 * static_cast<int>(moving_bodies_.size());
  AddParameters(step);
  LinearizeBodies(step);
  LinearizeContacts(step);
  BuildProblem(step);
}

void ExplicitStepDerivative::AddParameters(const ExplicitStepData& step) {
  parameter_names_ = {"h", "mu", "restitution"};
  std::map<std::pair<std::string, std::string>, int> pair_slot;
  for (const auto& [names, law] : step.law_table.overrides()) {
    pair_slot[names] = static_cast<int>(parameter_names_.size());
    const std::string pair = "(" + names.first + "," + names.second + ")";
    parameter_names_.push_back("mu" + pair);
    parameter_names_.push_back("restitution" + pair);
  }
  bodies_.resize(moving_bodies_.size());
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    bodies_[k].body = moving_bodies_[k];
    bodies_[k].mass_slot = static_cast<int>(parameter_names_.size());
    parameter_names_.push_back(step.bodies[moving_bodies_[k]].name + ".mass");
  }
  contacts_.resize(step.contacts.size());
  std::vector<int> slot_of_body(step.bodies.size(), -1);
  for (size_t k = 0; k < moving_bodies_.size(); ++k) slot_of_body[moving_bodies_[k]] = k;
  for (size_t c = 0; c < step.contacts.size(); ++c) {
    const ExplicitContact& contact = step.contacts[c];
    ContactTerms& t = contacts_[c];
    t.slot_a = slot_of_body[contact.body_a];
    t.slot_b = slot_of_body[contact.body_b];
    const auto found = pair_slot.find(
        std::minmax(step.bodies[contact.body_a].name, step.bodies[contact.body_b].name));
    t.mu_slot = found == pair_slot.end() ? 1 : found->second;
    t.restitution_slot = t.mu_slot + 1;
  }
}

void ExplicitStepDerivative::LinearizeBodies(const ExplicitStepData& step) {
  using Jet = ceres::Jet<double, kBodyInputs>;
  for (BodyTerms& terms : bodies_) {
    const int i = terms.body;
    const Body& body = step.bodies[i];
    const RigidBodyState& s = step.start[i];
    Eigen::Matrix<double, kBodyInputs, 1> nominal;
    nominal << Eigen::Vector3d::Zero(), s.linear_velocity, s.angular_velocity, body.mass.mass,
        step.options.h, step.applied.empty() ? Vector6d::Zero() : step.applied[i];
    const Eigen::Matrix<Jet, kBodyInputs, 1> in = Seeded<Jet>(nominal, 0);
    Jet out[kBodyOutputs];
    MassAndMomentum(body, s.orientation.toRotationMatrix(), step.options.gravity, in.data(), out);
    for (int r = 0; r < kBodyOutputs; ++r) terms.jacobian.row(r) = out[r].v.transpose();
    terms.inverse_mass = step.workspace.inverse_mass[i];
    terms.pose.Linearize(step.workspace.velocity[i], h_);
  }
}

namespace {

// The contact's local Jacobian (kContactOutputs x kContactInputs) with Jets of N components, one
// per input in `active` (the others constant: a fixed body's pose and twist, the twists and the
// restitution coefficient without restitution), so a contact with the ground costs a quarter of
// one between two bodies with restitution.
template <int kOutputs, int N, int kInputs>
void ContactJacobian(const ContactSetting& setting, bool described,
                     const Eigen::Matrix<double, kInputs, 1>& nominal,
                     const std::vector<int>& active, Eigen::MatrixXd* jacobian) {
  using Jet = ceres::Jet<double, N>;
  Eigen::Matrix<Jet, kInputs, 1> in;
  for (int k = 0; k < kInputs; ++k) in[k] = Jet(nominal[k]);
  for (int slot = 0; slot < N; ++slot) in[active[slot]] = Jet(nominal[active[slot]], slot);
  Jet out[kOutputs];
  ContactRows(setting, described, in.data(), out);
  jacobian->resize(kOutputs, N);
  for (int r = 0; r < kOutputs; ++r) jacobian->row(r) = out[r].v.transpose();
}

}  // namespace

void ExplicitStepDerivative::LinearizeContacts(const ExplicitStepData& step) {
  std::vector<int> active;
  for (size_t c = 0; c < step.contacts.size(); ++c) {
    const ExplicitContact& contact = step.contacts[c];
    ContactTerms& terms = contacts_[c];
    terms.described = contact.point.feature.kind != ContactFeature::Kind::kNone;
    terms.name = PairName(step.bodies, contact) + " #" + std::to_string(c);
    if (!terms.described) ++undescribed_;
    const ContactLaw& law = step.laws.Get(contact.body_a, contact.body_b);
    const RigidBodyState& a = step.start[contact.body_a];
    const RigidBodyState& b = step.start[contact.body_b];
    Eigen::Matrix<double, kContactInputs, 1> nominal;
    nominal << Eigen::Matrix<double, 12, 1>::Zero(), Twist(a), Twist(b), law.restitution,
        step.options.h;
    const ContactFeature feature = contact.point.feature.Expand(step.bodies[contact.body_a].shape,
                                                                step.bodies[contact.body_b].shape);
    const ContactSetting setting{contact,
                                 feature,
                                 a,
                                 b,
                                 step.options.restitution_velocity,
                                 law.restitution > 0.0,
                                 terms.slot_a >= 0,
                                 terms.slot_b >= 0};
    terms.rows_a = terms.slot_a >= 0 ? step.workspace.rows_a[c] : Matrix36::Zero();
    terms.rows_b = terms.slot_b >= 0 ? step.workspace.rows_b[c] : Matrix36::Zero();
    // The inputs that can move: each moving body's pose (and twist with restitution), e, h.
    active.clear();
    for (int side = 0; side < 2; ++side) {
      if ((side == 0 ? terms.slot_a : terms.slot_b) < 0) continue;
      for (int k = 0; k < 6; ++k) active.push_back(6 * side + k);
      if (!setting.restitution) continue;
      for (int k = 0; k < 6; ++k) active.push_back(12 + 6 * side + k);
    }
    if (setting.restitution) active.push_back(24);
    active.push_back(25);
    terms.active.assign(active.begin(), active.end());
    switch (active.size()) {
      case 7:  // one moving body
        ContactJacobian<kContactOutputs, 7>(setting, terms.described, nominal, active,
                                            &terms.jacobian);
        break;
      case 13:  // two
        ContactJacobian<kContactOutputs, 13>(setting, terms.described, nominal, active,
                                             &terms.jacobian);
        break;
      case 14:  // one, with restitution
        ContactJacobian<kContactOutputs, 14>(setting, terms.described, nominal, active,
                                             &terms.jacobian);
        break;
      default:  // two, with restitution
        ContactJacobian<kContactOutputs, kContactInputs>(setting, terms.described, nominal, active,
                                                         &terms.jacobian);
    }
  }
}

void ExplicitStepDerivative::BuildProblem(const ExplicitStepData& step) {
  const ExplicitWorkspace& w = step.workspace;
  // Local: the problem (with its reduction's workspace) is not needed after the sensitivity is
  // built, and a reverse pass keeps every step's derivative.
  GlobalFrictionContactProblem problem;
  for (const BodyTerms& b : bodies_) {
    const Vector6d momentum = w.mass_matrix[b.body] * w.start_velocity[b.body];
    problem.AddBlock(w.mass_matrix[b.body], w.inverse_mass[b.body], momentum);
  }
  r_.resize(3 * static_cast<Eigen::Index>(step.contacts.size()));
  for (size_t c = 0; c < step.contacts.size(); ++c) {
    const ExplicitContact& contact = step.contacts[c];
    problem.AddContact(w.mu[c], Eigen::Vector3d(w.normal_offset[c], 0.0, 0.0));
    Eigen::Matrix<double, 6, 3> rows;
    if (contacts_[c].slot_a >= 0) {
      rows = w.rows_a[c].transpose();
      problem.AddContactBlock(contacts_[c].slot_a, rows);
    }
    if (contacts_[c].slot_b >= 0) {
      rows = w.rows_b[c].transpose();
      problem.AddContactBlock(contacts_[c].slot_b, rows);
    }
    r_.segment<3>(3 * c) = contact.impulse;
  }
  problem.Finalize();
  problem.Velocity(r_, &nu_plus_);
  sensitivity_ = step.model.Sensitivity(problem, r_, w);
  determined_ = sensitivity_->determined;
  contact_modes_ = sensitivity_->modes;
  for (const int c : sensitivity_->degenerate) {
    degenerate_contacts_.push_back(contacts_[c].name);
  }
}

namespace {

double At(const Eigen::VectorXd& v, int i) { return v.size() == 0 ? 0.0 : v[i]; }

template <int N>
Eigen::Matrix<double, N, 1> Segment(const Eigen::VectorXd& v, int first) {
  if (v.size() == 0) return Eigen::Matrix<double, N, 1>::Zero();
  return v.segment<N>(first);
}

}  // namespace

Eigen::Matrix<double, ExplicitStepDerivative::kBodyInputs, 1> ExplicitStepDerivative::BodyInput(
    int k, const Eigen::VectorXd& ds, const Eigen::VectorXd& dp, const Eigen::VectorXd& du) const {
  Eigen::Matrix<double, kBodyInputs, 1> in;
  in << Segment<9>(ds, 12 * k + 3), At(dp, bodies_[k].mass_slot), At(dp, 0), Segment<6>(du, 6 * k);
  return in;
}

Eigen::Matrix<double, ExplicitStepDerivative::kContactInputs, 1>
ExplicitStepDerivative::ContactInput(const ContactTerms& c, const Eigen::VectorXd& ds,
                                     const Eigen::VectorXd& dp) const {
  Eigen::Matrix<double, kContactInputs, 1> in = Eigen::Matrix<double, kContactInputs, 1>::Zero();
  if (c.slot_a >= 0) {
    in.segment<6>(0) = Segment<6>(ds, 12 * c.slot_a);
    in.segment<6>(12) = Segment<6>(ds, 12 * c.slot_a + 6);
  }
  if (c.slot_b >= 0) {
    in.segment<6>(6) = Segment<6>(ds, 12 * c.slot_b);
    in.segment<6>(18) = Segment<6>(ds, 12 * c.slot_b + 6);
  }
  in[24] = At(dp, c.restitution_slot);
  in[25] = At(dp, 0);
  return in;
}

void ExplicitStepDerivative::RequireDescribed(const Eigen::VectorXd* ds) const {
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& t = contacts_[c];
    if (t.described) continue;
    bool moved = ds == nullptr;
    for (const int slot : {t.slot_a, t.slot_b}) {
      if (ds != nullptr && slot >= 0 && ds->size() > 0) {
        moved = moved || ds->segment<6>(12 * slot).any();
      }
    }
    if (moved) {
      throw InputError("explicit step derivative: contact " + t.name +
                       " has no known surface features (" + std::to_string(undescribed_) +
                       " such contacts in the step), so the step has no derivative with respect "
                       "to its bodies' poses (docs/derivatives.md lists the pairs that do)");
    }
  }
}

Eigen::VectorXd ExplicitStepDerivative::TimesH(const Eigen::VectorXd& x) const {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(6 * static_cast<Eigen::Index>(bodies_.size()));
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& t = contacts_[c];
    if (t.slot_a >= 0) out.segment<6>(6 * t.slot_a) += t.rows_a.transpose() * x.segment<3>(3 * c);
    if (t.slot_b >= 0) out.segment<6>(6 * t.slot_b) += t.rows_b.transpose() * x.segment<3>(3 * c);
  }
  return out;
}

Eigen::VectorXd ExplicitStepDerivative::TimesHTranspose(const Eigen::VectorXd& v) const {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(3 * static_cast<Eigen::Index>(contacts_.size()));
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& t = contacts_[c];
    if (t.slot_a >= 0) out.segment<3>(3 * c) += t.rows_a * v.segment<6>(6 * t.slot_a);
    if (t.slot_b >= 0) out.segment<3>(3 * c) += t.rows_b * v.segment<6>(6 * t.slot_b);
  }
  return out;
}

Eigen::VectorXd ExplicitStepDerivative::TimesInverseMass(const Eigen::VectorXd& x) const {
  Eigen::VectorXd out(x.size());
  for (size_t k = 0; k < bodies_.size(); ++k) {
    out.segment<6>(6 * k) = bodies_[k].inverse_mass * x.segment<6>(6 * k);
  }
  return out;
}

void ExplicitStepDerivative::DataChange(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                        const Eigen::VectorXd& du, Eigen::VectorXd* inner,
                                        Eigen::VectorXd* dF, Eigen::VectorXd* dmu,
                                        Eigen::VectorXd* dW) const {
  const bool blocks = sensitivity_ != nullptr && sensitivity_->reads_delassus_blocks;
  inner->resize(6 * static_cast<Eigen::Index>(bodies_.size()));
  dF->setZero(3 * static_cast<Eigen::Index>(contacts_.size()));
  dmu->resize(static_cast<Eigen::Index>(contacts_.size()));
  dW->setZero(blocks ? 9 * static_cast<Eigen::Index>(contacts_.size()) : 0);
  // d(M^-1) = -M^-1 dM M^-1 per body, for the blocks.
  std::vector<Eigen::Matrix<double, 6, 6>> d_inverse(blocks ? bodies_.size() : 0);
  for (size_t k = 0; k < bodies_.size(); ++k) {
    const Eigen::Matrix<double, kBodyOutputs, 1> y = bodies_[k].jacobian * BodyInput(k, ds, dp, du);
    const Eigen::Map<const Eigen::Matrix<double, 6, 6>> dM(y.data());  // column-major vec(M)
    inner->segment<6>(6 * k) = y.tail<6>() - dM * nu_plus_.segment<6>(6 * k);
    if (blocks) d_inverse[k] = -bodies_[k].inverse_mass * dM * bodies_[k].inverse_mass;
  }
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& ct = contacts_[c];
    const Eigen::Matrix<double, kContactInputs, 1> in = ContactInput(ct, ds, dp);
    const Eigen::Matrix<double, kContactOutputs, 1> y = ct.jacobian * in(ct.active);
    const int slots[2] = {ct.slot_a, ct.slot_b};
    const Matrix36* rows[2] = {&ct.rows_a, &ct.rows_b};
    (*dF)[3 * c] = y[36];
    for (int side = 0; side < 2; ++side) {
      if (slots[side] < 0) continue;
      const Eigen::Map<const Matrix36> d_rows(y.data() + 18 * side);  // the change of H's rows
      dF->segment<3>(3 * c) += d_rows * nu_plus_.segment<6>(6 * slots[side]);
      inner->segment<6>(6 * slots[side]) += d_rows.transpose() * r_.segment<3>(3 * c);
      if (!blocks) continue;
      const BodyTerms& b = bodies_[slots[side]];
      const Eigen::Matrix3d half = d_rows * b.inverse_mass * rows[side]->transpose();
      Eigen::Map<Eigen::Matrix3d> block(dW->data() + 9 * c);
      block +=
          half + half.transpose() + *rows[side] * d_inverse[slots[side]] * rows[side]->transpose();
    }
    (*dmu)[c] = At(dp, ct.mu_slot);
  }
}

Eigen::VectorXd ExplicitStepDerivative::PoseUpdate(const Eigen::VectorXd& ds,
                                                   const Eigen::VectorXd& dp,
                                                   const Eigen::VectorXd& dnu) const {
  Eigen::VectorXd out(state_size());
  const double dh = At(dp, 0);
  for (size_t k = 0; k < bodies_.size(); ++k) {
    out.segment<12>(12 * k) = bodies_[k].pose.Jvp(
        Segment<3>(ds, 12 * k), Segment<3>(ds, 12 * k + 3), dh, h_, dnu.segment<6>(6 * k));
  }
  return out;
}

Eigen::VectorXd ExplicitStepDerivative::Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                            const Eigen::VectorXd& du) const {
  if ((ds.size() != 0 && ds.size() != state_size()) ||
      (dp.size() != 0 && dp.size() != parameter_size()) ||
      (du.size() != 0 && du.size() != command_size())) {
    throw InputError("explicit step derivative: a change of " + std::to_string(ds.size()) + ", " +
                     std::to_string(dp.size()) + " and " + std::to_string(du.size()) +
                     " entries for a state of " + std::to_string(state_size()) + ", " +
                     std::to_string(parameter_size()) + " parameters and " +
                     std::to_string(command_size()) + " commands");
  }
  RequireDescribed(&ds);
  Eigen::VectorXd inner, dF, dmu, dW;
  DataChange(ds, dp, du, &inner, &dF, &dmu, &dW);
  if (!contacts_.empty()) {
    // The local problem's q = H^T M^-1 f + w moves by dF + H^T M^-1 inner; its solution by dr.
    inner += TimesH(sensitivity_->Jvp(dF + TimesHTranspose(TimesInverseMass(inner)), dmu, dW));
  }
  // d nu+ = M^-1 (df - dM nu+ + dH r + H dr).
  return PoseUpdate(ds, dp, TimesInverseMass(inner));
}

void ExplicitStepDerivative::DataGradient(const Eigen::VectorXd& F, const Eigen::VectorXd& w,
                                          const Eigen::VectorXd& mu, const Eigen::VectorXd& W,
                                          Gradient* out) const {
  // dL/dM per body from the Delassus blocks W_c = sum_s J_s M_s^-1 J_s^T: -M^-1 J^T G J M^-1.
  std::vector<Eigen::Matrix<double, 6, 6>> through_blocks(bodies_.size(),
                                                          Eigen::Matrix<double, 6, 6>::Zero());
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& ct = contacts_[c];
    Eigen::Matrix<double, kContactOutputs, 1> y = Eigen::Matrix<double, kContactOutputs, 1>::Zero();
    const Eigen::Vector3d rc = r_.segment<3>(3 * c), wc = w.segment<3>(3 * c);
    const int slots[2] = {ct.slot_a, ct.slot_b};
    const Matrix36* J[2] = {&ct.rows_a, &ct.rows_b};
    for (int side = 0; side < 2; ++side) {
      if (slots[side] < 0) continue;
      // dL/dH restricted to the contact's rows: F r^T + nu+ (dL/dw)^T, transposed.
      const Vector6d Fs = F.segment<6>(6 * slots[side]), nu = nu_plus_.segment<6>(6 * slots[side]);
      Eigen::Map<Matrix36> rows(y.data() + 18 * side);
      rows = rc * Fs.transpose() + wc * nu.transpose();
      if (W.size() == 0) continue;
      const Eigen::Map<const Eigen::Matrix3d> G(W.data() + 9 * c);
      const Eigen::Matrix<double, 6, 6>& P = bodies_[slots[side]].inverse_mass;
      rows += (G + G.transpose()) * *J[side] * P;
      through_blocks[slots[side]] -= P * J[side]->transpose() * G * *J[side] * P;
    }
    y[36] = wc[0];
    Eigen::Matrix<double, kContactInputs, 1> g = Eigen::Matrix<double, kContactInputs, 1>::Zero();
    g(ct.active) = ct.jacobian.transpose() * y;
    if (ct.slot_a >= 0) {
      out->state.segment<6>(12 * ct.slot_a) += g.segment<6>(0);
      out->state.segment<6>(12 * ct.slot_a + 6) += g.segment<6>(12);
    }
    if (ct.slot_b >= 0) {
      out->state.segment<6>(12 * ct.slot_b) += g.segment<6>(6);
      out->state.segment<6>(12 * ct.slot_b + 6) += g.segment<6>(18);
    }
    out->parameters[ct.restitution_slot] += g[24];
    out->parameters[0] += g[25];
    out->parameters[ct.mu_slot] += mu[c];
  }
  for (size_t k = 0; k < bodies_.size(); ++k) {
    Eigen::Matrix<double, kBodyOutputs, 1> y;
    const Vector6d Fk = F.segment<6>(6 * k), nu = nu_plus_.segment<6>(6 * k);
    Eigen::Map<Eigen::Matrix<double, 6, 6>> mass(y.data());
    mass = -Fk * nu.transpose() + through_blocks[k];  // dL/dM_k
    y.tail<6>() = Fk;
    const Eigen::Matrix<double, kBodyInputs, 1> g = bodies_[k].jacobian.transpose() * y;
    out->state.segment<9>(12 * k + 3) += g.head<9>();
    out->parameters[bodies_[k].mass_slot] += g[9];
    out->parameters[0] += g[10];
    out->commands.segment<6>(6 * k) += g.tail<6>();
  }
}

StepDerivative::Gradient ExplicitStepDerivative::Vjp(const Eigen::VectorXd& g) const {
  if (g.size() != state_size()) {
    throw InputError("explicit step derivative: a gradient of " + std::to_string(g.size()) +
                     " entries for a state of " + std::to_string(state_size()));
  }
  RequireDescribed(nullptr);
  Gradient out;
  out.state = Eigen::VectorXd::Zero(state_size());
  out.parameters = Eigen::VectorXd::Zero(parameter_size());
  out.commands = Eigen::VectorXd::Zero(command_size());
  // Through the pose update: the start pose directly, h, and d nu+.
  Eigen::VectorXd g_nu(6 * static_cast<Eigen::Index>(bodies_.size()));
  for (size_t k = 0; k < bodies_.size(); ++k) {
    const PoseUpdateTerms::Adjoint a =
        bodies_[k].pose.Vjp(g.segment<12>(12 * k), h_, &out.parameters[0]);
    out.state.segment<3>(12 * k) += a.x;
    out.state.segment<3>(12 * k + 3) += a.theta;
    g_nu.segment<6>(6 * k) = a.nu_plus;
  }
  // nu+ = M^-1 (H r + f): a = M^-1 g_nu is dL/df at fixed r, H^T a is dL/dr; through q =
  // H^T M^-1 f + w, the problem's gradient w of q adds M^-1 H w to dL/df.
  const Eigen::VectorXd a = TimesInverseMass(g_nu);
  Eigen::VectorXd w, mu, W;
  if (contacts_.empty()) {
    DataGradient(a, w, mu, W, &out);
    return out;
  }
  sensitivity_->Vjp(TimesHTranspose(a), &w, &mu, &W);
  DataGradient(a + TimesInverseMass(TimesH(w)), w, mu, W, &out);
  return out;
}

}  // namespace ncpkit::internal
