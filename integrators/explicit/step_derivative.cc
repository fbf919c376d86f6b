#include "integrators/explicit/step_derivative.h"

#include <ceres/jet.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "contact/contact_feature.h"
#include "integrators/explicit/contact_jets.h"
#include "integrators/explicit_stepper.h"
#include "integrators/internal/pose_jets.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {
namespace {

// Per body: the derivative of vec(M) (column-major) and f = M nu + [h m g + u_lin; -h omega x
// I omega + u_ang] with respect to [theta, v, omega, m, h, u] at theta = 0, the body's mass and
// h: M = diag(m I, I) with I = R I_b R^T (m / m_0), which a turn theta moves by
// [theta]x I - I [theta]x, and f's spin term by (I - h [omega]x I + h [I omega]x) d omega.
Eigen::Matrix<double, 42, 17> BodyJacobian(const Body& body, const RigidBodyState& s, double h,
                                           const Eigen::Vector3d& gravity) {
  Eigen::Matrix<double, 42, 17> J = Eigen::Matrix<double, 42, 17>::Zero();
  const double m = body.mass.mass;
  const Eigen::Matrix3d R = s.orientation.toRotationMatrix();
  const Eigen::Matrix3d I = R * body.mass.body_inertia * R.transpose();
  const Eigen::Vector3d& v = s.linear_velocity;
  const Eigen::Vector3d& w = s.angular_velocity;
  const Eigen::Vector3d spin = I * w;
  const auto entry = [](int row, int col) { return row + 6 * col; };  // vec(M)'s index
  for (int k = 0; k < 3; ++k) {
    // By theta_k: M's inertia block and f's spin term.
    const Eigen::Matrix3d skew = internal::Skew<double>(Eigen::Vector3d::Unit(k));
    const Eigen::Matrix3d dI = skew * I - I * skew;
    for (int c = 0; c < 3; ++c) {
      for (int r = 0; r < 3; ++r) J(entry(3 + r, 3 + c), k) = dI(r, c);
    }
    const Eigen::Vector3d d_spin = dI * w;
    J.block<3, 1>(39, k) = d_spin - h * w.cross(d_spin);
    // By m: the mass block and (the inertia scaling with the mass) the inertia block.
    J(entry(k, k), 9) = 1.0;
    for (int c = 0; c < 3; ++c) J(entry(3 + k, 3 + c), 9) = I(k, c) / m;
  }
  J.block<3, 3>(36, 3) = m * Eigen::Matrix3d::Identity();  // by v
  J.block<3, 3>(39, 6) = I - h * (internal::Skew<double>(w) * I - internal::Skew<double>(spin));
  J.block<3, 1>(36, 9) = v + h * gravity;
  J.block<3, 1>(39, 9) = (spin - h * w.cross(spin)) / m;
  J.block<3, 1>(36, 10) = m * gravity;  // by h
  J.block<3, 1>(39, 10) = -w.cross(spin);
  J.block<6, 6>(36, 11).setIdentity();  // by u
  return J;
}

// ContactRows' outputs and inputs (ExplicitStepDerivative's kContactOutputs, kContactInputs).
constexpr int kRowOutputs = 37, kRowInputs = 26;

// Per contact: [rows_a (3 x 6), rows_b, b_N] from [x_a, theta_a, x_b, theta_b, nu_a, nu_b, e,
// h] (changes from the start of the step), as the explicit stepper forms them
// (ExplicitStepper::FrameRowsOf and NormalOffset) with the contact's features at the changed
// poses and its tangents turned with its normal.
template <class T>
void ContactRows(const ContactSetting& s, bool described, const T* in, T* out) {
  const ContactJets<T> c = ContactAt(s, described, in);
  const Eigen::Matrix<T, 3, 6>& rows_a = c.rows_a;
  const Eigen::Matrix<T, 3, 6>& rows_b = c.rows_b;
  const T h = in[25];
  T offset = c.e.distance / h;
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

}  // namespace

// The changes of the contact's outputs (ContactRows without restitution) along one change of the
// poses (dx, dtheta per body, world frame) of a contact between a face and a point of the other
// body: the face's normal N moves by dtheta_F x N and its point Q by dx_F + dtheta_F x (Q - x_F);
// a vertex p by dx_V + dtheta_V x (p - x_V), a sphere's nearest point by dx_V - radius dN, and a
// line's crossing of a plane (a clipped edge) p = s + t a, t = m . (o - s) / (m . a), by ds + t da
// + dt a with dt from the same quotient; the distance N . (p - Q), the point projected on the
// face, the frame (n = +-N, t1 = n x axis / |n x axis|, t2 = n x t1) and the rows [d_k;
// (point - x) x d_k] follow by the product rule. It keeps what these products read (some 600
// bytes), not the 37 x 13 Jacobian they make: a step's derivative applies it to a change
// (Forward) or a gradient (Adjoint, the same steps in reverse) in fewer operations than a
// product with the stored matrix, and a trajectory's gradient keeps every step's.
class FaceContactChange {
 public:
  FaceContactChange(const ContactSetting& s, const ContactJets<double>& c, double h)
      : face_(s.feature.face_body),
        line_body_(s.feature.line_body),
        incident_(s.feature.incident),
        radius_(s.feature.radius),
        h_(h),
        distance_(c.e.distance),
        axis_(TangentAxis(s.contact.point.normal)),
        moving_{s.moving_a, s.moving_b} {
    const ContactFeature& f = s.feature;
    const FeaturePose<double>& face = face_ == 0 ? c.pa : c.pb;
    const FeaturePose<double>& other = face_ == 0 ? c.pb : c.pa;
    normal_ = face.Direction(f.face_normal);
    face_arm_ = face.World(f.face_point) - face.position;
    point_ = face_ == 0 ? c.e.point_b : c.e.point_a;
    point_from_face_ = point_ - face.World(f.face_point);
    other_arm_ = point_ - other.position;
    for (int k = 0; k < 3; ++k) frame_[k] = c.frame[k];
    across_ = c.frame[0].cross(axis_).norm();
    arm_[0] = c.e.point_a - c.pa.position;
    arm_[1] = c.e.point_b - c.pb.position;
    if (incident_ == ContactFeature::Incident::kLinePlane) {
      const FeaturePose<double>& line = line_body_ == 0 ? c.pa : c.pb;
      const FeaturePose<double>& plane = line_body_ == 0 ? c.pb : c.pa;
      const Eigen::Vector3d start = line.World(f.point), origin = plane.World(f.plane_point);
      line_along_ = line.Direction(f.direction);
      plane_normal_ = plane.Direction(f.plane_normal);
      line_arm_ = start - line.position;
      plane_arm_ = origin - plane.position;
      start_to_origin_ = origin - start;
      across_plane_ = plane_normal_.dot(line_along_);
      along_line_ = plane_normal_.dot(start_to_origin_) / across_plane_;
    }
  }

  // False for a line parallel to its plane (no crossing: the contact keeps its start-of-step
  // values, ContactAt).
  bool Valid() const { return across_plane_ != 0.0; }

  // Writes the 37 outputs' changes along (dx, dtheta) into `column`, the offset's without h's
  // share; returns the distance's change.
  double Along(const Eigen::Vector3d (&dx)[2], const Eigen::Vector3d (&dtheta)[2],
               double* column) const {
    const int face = face_;
    const Eigen::Vector3d dN = dtheta[face].cross(normal_);
    const Eigen::Vector3d dQ = dx[face] + dtheta[face].cross(face_arm_);
    const Eigen::Vector3d dp = PointChange(dx, dtheta, dN);
    const double d_distance = dN.dot(point_from_face_) + normal_.dot(dp - dQ);
    const Eigen::Vector3d d_projected = dp - d_distance * normal_ - distance_ * dN;
    const Eigen::Vector3d d_point[2] = {face == 0 ? d_projected : dp, face == 0 ? dp : d_projected};
    // Only a turn of the face's body turns the frame: the other columns (most of them: every
    // column of a body on the ground, whose face is the ground's) skip the frame's change.
    Eigen::Vector3d dd[3] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(),
                             Eigen::Vector3d::Zero()};
    const bool turned = !dtheta[face].isZero(0.0);
    if (turned) FrameChange(face == 0 ? dN : Eigen::Vector3d(-dN), dd);
    for (int side = 0; side < 2; ++side) {
      const double sign = side == 0 ? -1.0 : 1.0;  // rows_a = -FrameRows
      const Eigen::Vector3d d_arm = d_point[side] - dx[side];
      for (int k = 0; k < 3; ++k) {
        Eigen::Vector3d angular = d_arm.cross(frame_[k]);
        if (turned) angular += arm_[side].cross(dd[k]);
        for (int j = 0; j < 3; ++j) {
          column[18 * side + k + 3 * j] = sign * dd[k][j];
          column[18 * side + k + 3 * (3 + j)] = sign * angular[j];
        }
      }
    }
    return d_distance;
  }

  // The outputs' change for a change `in` of the inputs (kContactInputs' order; only the poses
  // and h move them here).
  Eigen::Matrix<double, kRowOutputs, 1> Forward(
      const Eigen::Matrix<double, kRowInputs, 1>& in) const {
    const Eigen::Vector3d dx[2] = {in.segment<3>(0), in.segment<3>(6)};
    const Eigen::Vector3d dtheta[2] = {in.segment<3>(3), in.segment<3>(9)};
    Eigen::Matrix<double, kRowOutputs, 1> out;
    const double d_distance = Along(dx, dtheta, out.data());
    out[36] = d_distance / h_ - distance_ / (h_ * h_) * in[kRowInputs - 1];
    return out;
  }

  // The gradient with respect to the inputs of <y, outputs' change>: Along's steps in reverse.
  Eigen::Matrix<double, kRowInputs, 1> Adjoint(
      const Eigen::Matrix<double, kRowOutputs, 1>& y) const {
    const int face = face_, other = 1 - face_;
    Eigen::Vector3d g_dx[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
    Eigen::Vector3d g_dtheta[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
    // The rows: per side [sign dd_k; sign (d_arm x d_k + arm x dd_k)].
    Eigen::Vector3d g_dd[3] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(),
                               Eigen::Vector3d::Zero()};
    Eigen::Vector3d g_point[2];
    for (int side = 0; side < 2; ++side) {
      const double sign = side == 0 ? -1.0 : 1.0;
      Eigen::Vector3d g_arm = Eigen::Vector3d::Zero();
      for (int k = 0; k < 3; ++k) {
        Eigen::Vector3d g_linear, g_angular;
        for (int j = 0; j < 3; ++j) {
          g_linear[j] = sign * y[18 * side + k + 3 * j];
          g_angular[j] = sign * y[18 * side + k + 3 * (3 + j)];
        }
        g_arm += frame_[k].cross(g_angular);
        g_dd[k] += g_linear + g_angular.cross(arm_[side]);
      }
      g_point[side] = g_arm;  // d_arm = d_point - dx
      g_dx[side] -= g_arm;
    }
    // The frame: dd_2 = dn x d_1 + d_0 x dd_1, dd_1 = (I - d_1 d_1^T) turned, turned = dn x axis
    // / across, dd_0 = dn.
    const Eigen::Vector3d(&d)[3] = frame_;
    Eigen::Vector3d g_dn = g_dd[0] + d[1].cross(g_dd[2]);
    Eigen::Vector3d g_dd1 = g_dd[1] + g_dd[2].cross(d[0]);
    const Eigen::Vector3d g_turned = g_dd1 - d[1] * d[1].dot(g_dd1);
    g_dn += axis_.cross(g_turned) / across_;
    Eigen::Vector3d g_dN = face == 0 ? g_dn : Eigen::Vector3d(-g_dn);
    // d_point[face] = d_projected = dp - d_distance N - distance dN, d_point[other] = dp.
    const Eigen::Vector3d& g_projected = g_point[face];
    Eigen::Vector3d g_dp = g_point[other] + g_projected;
    double g_distance = y[36] / h_ - normal_.dot(g_projected);
    g_dN -= distance_ * g_projected;
    // d_distance = dN . (p - Q) + N . (dp - dQ).
    g_dN += g_distance * point_from_face_;
    g_dp += g_distance * normal_;
    const Eigen::Vector3d g_dQ = -g_distance * normal_;
    PointChangeAdjoint(g_dp, &g_dN, g_dx, g_dtheta);
    // dQ = dx_F + dtheta_F x (Q - x_F), dN = dtheta_F x N.
    g_dx[face] += g_dQ;
    g_dtheta[face] += face_arm_.cross(g_dQ) + normal_.cross(g_dN);
    Eigen::Matrix<double, kRowInputs, 1> g = Eigen::Matrix<double, kRowInputs, 1>::Zero();
    for (int side = 0; side < 2; ++side) {
      if (!moving_[side]) continue;  // a fixed body's inputs are constant
      g.segment<3>(6 * side) = g_dx[side];
      g.segment<3>(6 * side + 3) = g_dtheta[side];
    }
    g[kRowInputs - 1] = -distance_ / (h_ * h_) * y[36];
    return g;
  }

 private:
  // dd_0 = dn, and the tangents' changes.
  void FrameChange(const Eigen::Vector3d& dn, Eigen::Vector3d (&dd)[3]) const {
    const Eigen::Vector3d(&d)[3] = frame_;
    dd[0] = dn;
    const Eigen::Vector3d turned = dn.cross(axis_) / across_;
    dd[1] = turned - d[1] * d[1].dot(turned);
    dd[2] = dn.cross(d[1]) + d[0].cross(dd[1]);
  }

  Eigen::Vector3d PointChange(const Eigen::Vector3d (&dx)[2], const Eigen::Vector3d (&dtheta)[2],
                              const Eigen::Vector3d& dN) const {
    const int other = 1 - face_;
    switch (incident_) {
      case ContactFeature::Incident::kPoint:
        return dx[other] + dtheta[other].cross(other_arm_);
      case ContactFeature::Incident::kSphere:
        return dx[other] - radius_ * dN;
      case ContactFeature::Incident::kLinePlane:
        break;
    }
    const int line = line_body_, plane = 1 - line;
    const Eigen::Vector3d d_start = dx[line] + dtheta[line].cross(line_arm_);
    const Eigen::Vector3d d_along = dtheta[line].cross(line_along_);
    const Eigen::Vector3d d_normal = dtheta[plane].cross(plane_normal_);
    const Eigen::Vector3d d_origin = dx[plane] + dtheta[plane].cross(plane_arm_);
    const double d_t = (d_normal.dot(start_to_origin_) + plane_normal_.dot(d_origin - d_start) -
                        along_line_ * (d_normal.dot(line_along_) + plane_normal_.dot(d_along))) /
                       across_plane_;
    return d_start + along_line_ * d_along + d_t * line_along_;
  }

  // PointChange's adjoint: adds to the gradients of dN, dx and dtheta from that of dp.
  void PointChangeAdjoint(const Eigen::Vector3d& g_dp, Eigen::Vector3d* g_dN,
                          Eigen::Vector3d (&g_dx)[2], Eigen::Vector3d (&g_dtheta)[2]) const {
    const int other = 1 - face_;
    switch (incident_) {
      case ContactFeature::Incident::kPoint:
        g_dx[other] += g_dp;
        g_dtheta[other] += other_arm_.cross(g_dp);
        return;
      case ContactFeature::Incident::kSphere:
        g_dx[other] += g_dp;
        *g_dN -= radius_ * g_dp;
        return;
      case ContactFeature::Incident::kLinePlane:
        break;
    }
    const int line = line_body_, plane = 1 - line;
    const double g_t = line_along_.dot(g_dp) / across_plane_;
    const Eigen::Vector3d g_start = g_dp - g_t * plane_normal_;
    const Eigen::Vector3d g_along = along_line_ * (g_dp - g_t * plane_normal_);
    const Eigen::Vector3d g_normal = g_t * (start_to_origin_ - along_line_ * line_along_);
    const Eigen::Vector3d g_origin = g_t * plane_normal_;
    g_dx[line] += g_start;
    g_dtheta[line] += line_arm_.cross(g_start) + line_along_.cross(g_along);
    g_dx[plane] += g_origin;
    g_dtheta[plane] += plane_normal_.cross(g_normal) + plane_arm_.cross(g_origin);
  }

  int face_ = 0, line_body_ = 0;
  ContactFeature::Incident incident_ = ContactFeature::Incident::kPoint;
  double radius_ = 0.0, h_ = 1.0, distance_ = 0.0, across_ = 1.0;
  // The face's normal and its point from the face's body's centre, the other body's point and
  // its arm, that point from the face's point, the tangents' axis, the frame and each side's
  // contact point from its body's centre.
  Eigen::Vector3d normal_, face_arm_, point_, other_arm_, point_from_face_, axis_;
  Eigen::Vector3d frame_[3], arm_[2];
  // kLinePlane: the line's direction, the plane's normal, their arms from their bodies' centres,
  // the plane's point from the line's start, the normal's component along the line and the
  // line's parameter at the crossing.
  Eigen::Vector3d line_along_, plane_normal_, line_arm_, plane_arm_, start_to_origin_;
  double across_plane_ = 1.0, along_line_ = 0.0;
  bool moving_[2] = {true, true};  // whether each side's body can move
};

namespace {

// The closed form of ContactRows' derivatives where a face of one body meets a point of the other
// without restitution (boxes resting on the ground and on each other: most contacts of a scene),
// for the moving pose inputs in `active` and h (its last): FaceContactChange. None where it does
// not apply (then Jets).
std::optional<FaceContactChange> FaceChange(const ContactSetting& s, bool described, double h,
                                            const std::vector<int>& active) {
  const ContactFeature& f = s.feature;
  if (!described || s.restitution || f.kind != ContactFeature::Kind::kFace) return std::nullopt;
  // Its columns are pose inputs (below 12) and h last: nothing else moves these outputs here.
  if (active.empty() || active.back() != kRowInputs - 1 ||
      !std::all_of(active.begin(), active.end() - 1, [](int input) { return input < 12; })) {
    return std::nullopt;
  }
  const double zero[12] = {};
  FaceContactChange change(s, ContactAt(s, true, zero), h);
  if (!change.Valid()) return std::nullopt;
  return change;
}

// FaceChange's Jacobian, one column per input in `active`.
bool FaceJacobian(const ContactSetting& s, bool described, double h, const std::vector<int>& active,
                  Eigen::MatrixXd* jacobian) {
  const std::optional<FaceContactChange> change = FaceChange(s, described, h, active);
  if (!change) return false;
  Eigen::MatrixXd& J = *jacobian;
  const int columns = static_cast<int>(active.size());
  J.resize(kRowOutputs, columns);
  for (int col = 0; col < columns; ++col) {
    Eigen::Matrix<double, kRowInputs, 1> in = Eigen::Matrix<double, kRowInputs, 1>::Zero();
    in[active[col]] = 1.0;
    J.col(col) = change->Forward(in);
  }
  return true;
}

}  // namespace

void FaceContactProducts(const ContactSetting& setting, double h, const std::vector<int>& active,
                         const Eigen::Matrix<double, 26, 1>& in,
                         const Eigen::Matrix<double, 37, 1>& y, Eigen::Matrix<double, 37, 1>* out,
                         Eigen::Matrix<double, 26, 1>* gradient) {
  const std::optional<FaceContactChange> change = FaceChange(setting, true, h, active);
  if (!change) throw std::logic_error("FaceContactProducts: not a face contact");
  *out = change->Forward(in);
  *gradient = change->Adjoint(y);
}

void ContactRowsJacobian(const ContactSetting& setting, bool described,
                         const Eigen::Matrix<double, kRowInputs, 1>& nominal,
                         const std::vector<int>& active, bool closed_form,
                         Eigen::MatrixXd* jacobian) {
  if (closed_form && FaceJacobian(setting, described, nominal[kRowInputs - 1], active, jacobian)) {
    return;
  }
  const auto rows = [&](const auto* in, auto* out) { ContactRows(setting, described, in, out); };
  switch (active.size()) {
    case 7:  // one moving body
      LocalJacobian<kRowOutputs, 7>(rows, nominal, active, jacobian);
      break;
    case 13:  // two
      LocalJacobian<kRowOutputs, 13>(rows, nominal, active, jacobian);
      break;
    case 14:  // one, with restitution
      LocalJacobian<kRowOutputs, 14>(rows, nominal, active, jacobian);
      break;
    default:  // two, with restitution
      LocalJacobian<kRowOutputs, kRowInputs>(rows, nominal, active, jacobian);
  }
}

namespace {

Vector6d Twist(const RigidBodyState& s) {
  Vector6d nu;
  nu << s.linear_velocity, s.angular_velocity;
  return nu;
}

std::string PairName(const std::vector<Body>& bodies, const ExplicitContact& c) {
  return bodies[c.body_a].name + "-" + bodies[c.body_b].name;
}

// "a-b #k": contact k's name in messages and StepDerivative::degenerate_contacts().
// A contact's inputs that can move: each moving body's pose (and twist with restitution), e, h;
// one list for each of the eight cases, made once.
const std::vector<int>& ActiveInputs(bool moving_a, bool moving_b, bool restitution) {
  static const std::array<std::vector<int>, 8> lists = [] {
    std::array<std::vector<int>, 8> out;
    for (int key = 0; key < 8; ++key) {
      const bool moving[2] = {(key & 4) != 0, (key & 2) != 0}, with_twists = (key & 1) != 0;
      for (int side = 0; side < 2; ++side) {
        if (!moving[side]) continue;
        for (int k = 0; k < 6; ++k) out[key].push_back(6 * side + k);
        if (!with_twists) continue;
        for (int k = 0; k < 6; ++k) out[key].push_back(12 + 6 * side + k);
      }
      if (with_twists) out[key].push_back(24);
      out[key].push_back(25);
    }
    return out;
  }();
  return lists[4 * static_cast<int>(moving_a) + 2 * static_cast<int>(moving_b) +
               static_cast<int>(restitution)];
}

std::string ContactName(const ExplicitStepData& step, size_t k) {
  return PairName(step.bodies, step.contacts[k]) + " #" + std::to_string(k);
}

}  // namespace

ExplicitStepDerivative::~ExplicitStepDerivative() = default;
ExplicitStepDerivative::BodyTerms::BodyTerms() = default;
ExplicitStepDerivative::ContactTerms::ContactTerms() = default;

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
  if (step.options.model == ExplicitModel::Soft) {
    KeepSoftStep(step);
  } else {
    BuildProblem(step);
  }
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
  if (step.options.model == ExplicitModel::Soft) {
    stiffness_slot_ = static_cast<int>(parameter_names_.size());
    damping_slot_ = stiffness_slot_ + 1;
    parameter_names_.push_back("soft_stiffness");
    parameter_names_.push_back("soft_damping");
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
    t.mu_slot = 1;  // the default law's, unless the pair has its own
    if (!pair_slot.empty()) {
      const auto found = pair_slot.find(
          std::minmax(step.bodies[contact.body_a].name, step.bodies[contact.body_b].name));
      if (found != pair_slot.end()) t.mu_slot = found->second;
    }
    t.restitution_slot = t.mu_slot + 1;
  }
}

// vec(M)'s inputs among the 17: theta (0-2) and m (9).
void ExplicitStepDerivative::BodyTerms::Set(
    const Eigen::Matrix<double, kBodyOutputs, kBodyInputs>& jacobian) {
  mass_jacobian << jacobian.topLeftCorner<36, 3>(), jacobian.block<36, 1>(0, 9);
  force_jacobian = jacobian.bottomRows<6>();
}

Eigen::Matrix<double, ExplicitStepDerivative::kBodyOutputs, 1>
ExplicitStepDerivative::BodyTerms::Times(const Eigen::Matrix<double, kBodyInputs, 1>& in) const {
  Eigen::Matrix<double, kBodyOutputs, 1> y;
  y.head<36>() = mass_jacobian * Eigen::Vector4d(in[0], in[1], in[2], in[9]);
  y.tail<6>() = force_jacobian * in;
  return y;
}

Eigen::Matrix<double, ExplicitStepDerivative::kBodyInputs, 1>
ExplicitStepDerivative::BodyTerms::TransposeTimes(
    const Eigen::Matrix<double, kBodyOutputs, 1>& y) const {
  Eigen::Matrix<double, kBodyInputs, 1> g = force_jacobian.transpose() * y.tail<6>();
  const Eigen::Vector4d by_mass = mass_jacobian.transpose() * y.head<36>();
  g.head<3>() += by_mass.head<3>();
  g[9] += by_mass[3];
  return g;
}

void ExplicitStepDerivative::LinearizeBodies(const ExplicitStepData& step) {
  for (BodyTerms& terms : bodies_) {
    const int i = terms.body;
    terms.Set(BodyJacobian(step.bodies[i], step.start[i], step.options.h, step.options.gravity));
    terms.inverse_mass = step.workspace.inverse_mass[i];
    terms.pose.Linearize(step.workspace.velocity[i], h_);
  }
}

void ExplicitStepDerivative::LinearizeContacts(const ExplicitStepData& step) {
  static_assert(kContactOutputs == kRowOutputs && kContactInputs == kRowInputs);
  faces_.reserve(step.contacts.size());
  for (size_t c = 0; c < step.contacts.size(); ++c) {
    const ExplicitContact& contact = step.contacts[c];
    ContactTerms& terms = contacts_[c];
    terms.described = contact.point.feature.kind != ContactFeature::Kind::kNone;
    if (!terms.described) {  // (named for RequireDescribed's message; the others need none)
      terms.name = ContactName(step, c);
      ++undescribed_;
    }
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
    const std::vector<int>& active =
        ActiveInputs(setting.moving_a, setting.moving_b, setting.restitution);
    std::optional<FaceContactChange> face =
        FaceChange(setting, terms.described, step.options.h, active);
    if (face) {
      terms.face = static_cast<int>(faces_.size());
      faces_.push_back(*face);
    } else {
      terms.active.assign(active.begin(), active.end());
      ContactRowsJacobian(setting, terms.described, nominal, active, false, &terms.jacobian);
    }
    if (step.options.model == ExplicitModel::Soft) LinearizeSoftContact(step, c, setting);
  }
}

void ExplicitStepDerivative::LinearizeSoftContact(const ExplicitStepData& step, int c,
                                                  const ContactSetting& setting) {
  const ExplicitWorkspace& w = step.workspace;
  const ExplicitContact* old = w.Previous(step.contacts, c);
  Eigen::Matrix<double, SoftContactTerms::kInputs, 1> nominal;
  nominal << Eigen::Matrix<double, 12, 1>::Zero(), Twist(setting.a), Twist(setting.b),
      old != nullptr ? old->anchor_offset : Eigen::Vector3d::Zero(), w.mu[c],
      step.options.soft_stiffness, step.options.soft_damping, step.options.h;
  soft_.push_back(internal::LinearizeSoftContact(setting, contacts_[c].described, nominal));
  soft_.back().previous = old != nullptr ? static_cast<int>(old - w.previous.data()) : -1;
}

// The soft model's step: its impulses and end twists as found, its modes, and the anchor offsets
// it reads from the step before and leaves.
void ExplicitStepDerivative::KeepSoftStep(const ExplicitStepData& step) {
  const ExplicitWorkspace& w = step.workspace;
  nu_plus_.resize(6 * static_cast<Eigen::Index>(bodies_.size()));
  for (size_t k = 0; k < bodies_.size(); ++k)
    nu_plus_.segment<6>(6 * k) = w.velocity[bodies_[k].body];
  r_.resize(3 * static_cast<Eigen::Index>(step.contacts.size()));
  const auto anchor_names = [&](const ExplicitContact& contact, size_t index,
                                std::vector<std::string>* names) {
    const std::string name = PairName(step.bodies, contact) + " #" + std::to_string(index);
    for (const char* axis : {".anchor_x", ".anchor_y", ".anchor_z"}) names->push_back(name + axis);
  };
  for (size_t k = 0; k < w.previous.size(); ++k) anchor_names(w.previous[k], k, &carried_in_names_);
  for (size_t c = 0; c < step.contacts.size(); ++c) {
    r_.segment<3>(3 * c) = step.contacts[c].impulse;
    anchor_names(step.contacts[c], c, &carried_out_names_);
    contact_modes_.push_back(soft_[c].mode);
    if (soft_[c].degenerate) degenerate_contacts_.push_back(ContactName(step, c));
  }
}

void ExplicitStepDerivative::BuildProblem(const ExplicitStepData& step) {
  const ExplicitWorkspace& w = step.workspace;
  // Local: the problem (with its reduction's workspace) is not needed after the sensitivity is
  // built, and a reverse pass keeps every step's derivative.
  GlobalFrictionContactProblem problem;
  problem.Reserve(static_cast<int>(bodies_.size()), static_cast<int>(step.contacts.size()), 6);
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
  for (const int c : sensitivity_->degenerate) degenerate_contacts_.push_back(ContactName(step, c));
}

namespace {

double At(const Eigen::VectorXd& v, int i) { return v.size() == 0 ? 0.0 : v[i]; }

// A contact's local Jacobian (its live columns `active`) times the change `in` of its inputs, and
// its transpose times `y` scattered to the inputs: gathered by hand, as an indexed view would
// copy the index list on every product.
template <int kOutputs, int kInputs>
Eigen::Matrix<double, kOutputs, 1> TimesLive(const Eigen::MatrixXd& jacobian,
                                             const std::vector<int>& active,
                                             const Eigen::Matrix<double, kInputs, 1>& in) {
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kInputs, 1> live(active.size());
  for (size_t k = 0; k < active.size(); ++k) live[k] = in[active[k]];
  Eigen::Matrix<double, kOutputs, 1> out;
  out.noalias() = jacobian * live;
  return out;
}

template <int kOutputs, int kInputs>
Eigen::Matrix<double, kInputs, 1> TransposeTimesLive(const Eigen::MatrixXd& jacobian,
                                                     const std::vector<int>& active,
                                                     const Eigen::Matrix<double, kOutputs, 1>& y) {
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kInputs, 1> live(active.size());
  live.noalias() = jacobian.transpose() * y;
  Eigen::Matrix<double, kInputs, 1> out = Eigen::Matrix<double, kInputs, 1>::Zero();
  for (size_t k = 0; k < active.size(); ++k) out[active[k]] = live[k];
  return out;
}

template <int N>
Eigen::Matrix<double, N, 1> Segment(const Eigen::VectorXd& v, int first) {
  if (v.size() == 0) return Eigen::Matrix<double, N, 1>::Zero();
  return v.segment<N>(first);
}

}  // namespace

Eigen::Matrix<double, ExplicitStepDerivative::kContactOutputs, 1>
ExplicitStepDerivative::ContactTimes(const ContactTerms& c,
                                     const Eigen::Matrix<double, kContactInputs, 1>& in) const {
  if (c.face >= 0) return faces_[c.face].Forward(in);
  return TimesLive<kContactOutputs>(c.jacobian, c.active, in);
}

Eigen::Matrix<double, ExplicitStepDerivative::kContactInputs, 1>
ExplicitStepDerivative::ContactTransposeTimes(
    const ContactTerms& c, const Eigen::Matrix<double, kContactOutputs, 1>& y) const {
  if (c.face >= 0) return faces_[c.face].Adjoint(y);
  return TransposeTimesLive<kContactOutputs, kContactInputs>(c.jacobian, c.active, y);
}

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

void ExplicitStepDerivative::TimesH(const Eigen::Ref<const Eigen::VectorXd>& x,
                                    Eigen::Ref<Eigen::VectorXd> out) const {
  out.setZero();
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& t = contacts_[c];
    if (t.slot_a >= 0) out.segment<6>(6 * t.slot_a) += t.rows_a.transpose() * x.segment<3>(3 * c);
    if (t.slot_b >= 0) out.segment<6>(6 * t.slot_b) += t.rows_b.transpose() * x.segment<3>(3 * c);
  }
}

void ExplicitStepDerivative::TimesHTranspose(const Eigen::Ref<const Eigen::VectorXd>& v,
                                             Eigen::Ref<Eigen::VectorXd> out) const {
  out.setZero();
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& t = contacts_[c];
    if (t.slot_a >= 0) out.segment<3>(3 * c) += t.rows_a * v.segment<6>(6 * t.slot_a);
    if (t.slot_b >= 0) out.segment<3>(3 * c) += t.rows_b * v.segment<6>(6 * t.slot_b);
  }
}

void ExplicitStepDerivative::TimesInverseMass(const Eigen::Ref<const Eigen::VectorXd>& x,
                                              Eigen::Ref<Eigen::VectorXd> out) const {
  for (size_t k = 0; k < bodies_.size(); ++k) {
    out.segment<6>(6 * k) = bodies_[k].inverse_mass * x.segment<6>(6 * k);
  }
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
    const Eigen::Matrix<double, kBodyOutputs, 1> y = bodies_[k].Times(BodyInput(k, ds, dp, du));
    const Eigen::Map<const Eigen::Matrix<double, 6, 6>> dM(y.data());  // column-major vec(M)
    inner->segment<6>(6 * k) = y.tail<6>() - dM * nu_plus_.segment<6>(6 * k);
    if (blocks) d_inverse[k] = -bodies_[k].inverse_mass * dM * bodies_[k].inverse_mass;
  }
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& ct = contacts_[c];
    const Eigen::Matrix<double, kContactInputs, 1> in = ContactInput(ct, ds, dp);
    const Eigen::Matrix<double, kContactOutputs, 1> y = ContactTimes(ct, in);
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

void ExplicitStepDerivative::PoseUpdate(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                        const Eigen::VectorXd& dnu,
                                        Eigen::Ref<Eigen::VectorXd> out) const {
  const double dh = At(dp, 0);
  for (size_t k = 0; k < bodies_.size(); ++k) {
    out.segment<12>(12 * k) = bodies_[k].pose.Jvp(
        Segment<3>(ds, 12 * k), Segment<3>(ds, 12 * k + 3), dh, h_, dnu.segment<6>(6 * k));
  }
}

void ExplicitStepDerivative::CheckChange(Eigen::Index ds, Eigen::Index dp, Eigen::Index du) const {
  if ((ds != 0 && ds != state_size() && ds != input_size()) ||
      (dp != 0 && dp != parameter_size()) || (du != 0 && du != command_size())) {
    throw InputError("explicit step derivative: a change of " + std::to_string(ds) + ", " +
                     std::to_string(dp) + " and " + std::to_string(du) +
                     " entries for a state of " + std::to_string(state_size()) + ", " +
                     std::to_string(parameter_size()) + " parameters and " +
                     std::to_string(command_size()) + " commands");
  }
}

Eigen::VectorXd ExplicitStepDerivative::Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                            const Eigen::VectorXd& du) const {
  if (sensitivity_ != nullptr) return JvpColumns(ds, dp, du).col(0);
  CheckChange(ds.size(), dp.size(), du.size());
  RequireDescribed(&ds);
  // The soft model: each contact's dr from its own inputs.
  Eigen::VectorXd inner, dF, dmu, dW;
  DataChange(ds, dp, du, &inner, &dF, &dmu, &dW);
  Eigen::VectorXd dr, d_anchor, out(output_size()), moved(inner.size()), dnu(inner.size());
  SoftChange(ds, dp, &dr, &d_anchor);
  TimesH(dr, moved);
  inner += moved;
  TimesInverseMass(inner, dnu);
  PoseUpdate(ds, dp, dnu, out.head(state_size()));
  out.tail(d_anchor.size()) = d_anchor;
  return out;
}

// The columns' changes of the problem's data first, then the model's dr for all of them at once
// (one solve of its selected system with a column each).
Eigen::MatrixXd ExplicitStepDerivative::JvpColumns(const Eigen::MatrixXd& ds,
                                                   const Eigen::MatrixXd& dp,
                                                   const Eigen::MatrixXd& du) const {
  if (sensitivity_ == nullptr) return StepDerivative::JvpColumns(ds, dp, du);
  CheckChange(ds.rows(), dp.rows(), du.rows());
  const Eigen::Index k = ChangeCount(ds, dp, du, "explicit step derivative: ds, dp and du");
  const Eigen::Index nc = static_cast<Eigen::Index>(contacts_.size());
  const Eigen::Index nv = 6 * static_cast<Eigen::Index>(bodies_.size());
  // Each column's vectors reuse the storage of the column before.
  Eigen::MatrixXd inner(nv, k), dq(3 * nc, k), dmu(nc, k), dW;
  Eigen::VectorXd ds_j, dp_j, du_j, inner_j, dF, dmu_j, dW_j, scaled(nv);
  for (Eigen::Index j = 0; j < k; ++j) {
    ChangeColumn(ds, j, &ds_j);
    ChangeColumn(dp, j, &dp_j);
    ChangeColumn(du, j, &du_j);
    RequireDescribed(&ds_j);
    DataChange(ds_j, dp_j, du_j, &inner_j, &dF, &dmu_j, &dW_j);
    inner.col(j) = inner_j;
    // The local problem's q = H^T M^-1 f + w moves by dF + H^T M^-1 inner.
    TimesInverseMass(inner_j, scaled);
    TimesHTranspose(scaled, dq.col(j));
    dq.col(j) += dF;
    dmu.col(j) = dmu_j;
    if (dW_j.size() == 0) continue;
    if (dW.size() == 0) dW.setZero(dW_j.size(), k);
    dW.col(j) = dW_j;
  }
  const Eigen::MatrixXd dr = nc > 0 ? sensitivity_->JvpColumns(dq, dmu, dW) : Eigen::MatrixXd(0, k);
  Eigen::MatrixXd out(output_size(), k);
  for (Eigen::Index j = 0; j < k; ++j) {
    // d nu+ = M^-1 (df - dM nu+ + dH r + H dr).
    if (nc > 0) {
      TimesH(dr.col(j), scaled);
      inner.col(j) += scaled;
    }
    TimesInverseMass(inner.col(j), scaled);
    ChangeColumn(ds, j, &ds_j);
    ChangeColumn(dp, j, &dp_j);
    PoseUpdate(ds_j, dp_j, scaled, out.col(j));
  }
  return out;
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
    const Eigen::Matrix<double, kContactInputs, 1> g = ContactTransposeTimes(ct, y);
    AddContactState(ct, g.data(), out);
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
    const Eigen::Matrix<double, kBodyInputs, 1> g = bodies_[k].TransposeTimes(y);
    out->state.segment<9>(12 * k + 3) += g.head<9>();
    out->parameters[bodies_[k].mass_slot] += g[9];
    out->parameters[0] += g[10];
    out->commands.segment<6>(6 * k) += g.tail<6>();
  }
}

void ExplicitStepDerivative::AddContactState(const ContactTerms& c, const double* g,
                                             Gradient* out) {
  const int slots[2] = {c.slot_a, c.slot_b};
  for (int side = 0; side < 2; ++side) {
    if (slots[side] < 0) continue;
    out->state.segment<6>(12 * slots[side]) += Eigen::Map<const Vector6d>(g + 6 * side);
    out->state.segment<6>(12 * slots[side] + 6) += Eigen::Map<const Vector6d>(g + 12 + 6 * side);
  }
}

void ExplicitStepDerivative::SoftChange(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                        Eigen::VectorXd* dr, Eigen::VectorXd* d_anchor) const {
  using Terms = SoftContactTerms;
  dr->resize(3 * static_cast<Eigen::Index>(contacts_.size()));
  d_anchor->resize(dr->size());
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& ct = contacts_[c];
    const Terms& t = soft_[c];
    Eigen::Matrix<double, Terms::kInputs, 1> in;
    in << ContactInput(ct, ds, dp).head<24>(), Eigen::Vector3d::Zero(), At(dp, ct.mu_slot),
        At(dp, stiffness_slot_), At(dp, damping_slot_), At(dp, 0);
    if (t.previous >= 0 && ds.size() == input_size()) {
      in.segment<3>(Terms::kAnchor) = ds.segment<3>(state_size() + 3 * t.previous);
    }
    const Eigen::Matrix<double, Terms::kOutputs, 1> y =
        TimesLive<Terms::kOutputs>(t.jacobian, t.active, in);
    dr->segment<3>(3 * c) = y.head<3>();
    d_anchor->segment<3>(3 * c) = y.tail<3>();
  }
}

void ExplicitStepDerivative::SoftGradient(const Eigen::VectorXd& g_r,
                                          const Eigen::VectorXd& g_anchor, Gradient* out) const {
  using Terms = SoftContactTerms;
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ContactTerms& ct = contacts_[c];
    const Terms& t = soft_[c];
    Eigen::Matrix<double, Terms::kOutputs, 1> y;
    y << g_r.segment<3>(3 * c), Segment<3>(g_anchor, 3 * static_cast<int>(c));
    const Eigen::Matrix<double, Terms::kInputs, 1> g =
        TransposeTimesLive<Terms::kOutputs, Terms::kInputs>(t.jacobian, t.active, y);
    AddContactState(ct, g.data(), out);
    if (t.previous >= 0) {
      out->state.segment<3>(state_size() + 3 * t.previous) += g.segment<3>(Terms::kAnchor);
    }
    out->parameters[ct.mu_slot] += g[Terms::kMu];
    out->parameters[stiffness_slot_] += g[Terms::kStiffness];
    out->parameters[damping_slot_] += g[Terms::kDamping];
    out->parameters[0] += g[Terms::kH];
  }
}

StepDerivative::Gradient ExplicitStepDerivative::Vjp(const Eigen::VectorXd& g) const {
  if (g.size() != state_size() && g.size() != output_size()) {
    throw InputError("explicit step derivative: a gradient of " + std::to_string(g.size()) +
                     " entries for a state of " + std::to_string(state_size()) + " (" +
                     std::to_string(output_size()) + " with the entries the step carries)");
  }
  RequireDescribed(nullptr);
  Gradient out;
  out.state = Eigen::VectorXd::Zero(input_size());
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
  Eigen::VectorXd a(g_nu.size()), at_contacts(3 * static_cast<Eigen::Index>(contacts_.size()));
  TimesInverseMass(g_nu, a);
  TimesHTranspose(a, at_contacts);
  Eigen::VectorXd w, mu, W;
  if (sensitivity_ == nullptr) {  // the soft model: r from its own inputs, none through q
    const Eigen::Index n = static_cast<Eigen::Index>(contacts_.size());
    const Eigen::VectorXd g_anchor =
        g.size() > state_size() ? Eigen::VectorXd(g.tail(3 * n)) : Eigen::VectorXd();
    SoftGradient(at_contacts, g_anchor, &out);
    DataGradient(a, Eigen::VectorXd::Zero(3 * n), Eigen::VectorXd::Zero(n), W, &out);
    return out;
  }
  if (contacts_.empty()) {
    DataGradient(a, w, mu, W, &out);
    return out;
  }
  sensitivity_->Vjp(at_contacts, &w, &mu, &W);
  Eigen::VectorXd pushed(a.size()), F(a.size());  // F = a + M^-1 H w
  TimesH(w, pushed);
  TimesInverseMass(pushed, F);
  F += a;
  DataGradient(F, w, mu, W, &out);
  return out;
}

}  // namespace ncpkit::internal
