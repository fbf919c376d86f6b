// A contact of an explicit step at poses changed from the step's start, on any scalar type: the
// explicit step derivative's per-contact functions (integrators/explicit/step_derivative.cc and,
// for the soft model's impulses, integrators/explicit/soft_derivative.cc) evaluate it on Jets.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_CONTACT_JETS_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_CONTACT_JETS_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <vector>

#include "contact/contact_feature.h"
#include "contact/contact_frame.h"
#include "dynamics/body.h"
#include "integrators/explicit/workspace.h"
#include "integrators/internal/pose_jets.h"

namespace ncpkit::internal {

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

// The contact at the changed poses: its points, normal and distance, its frame and its rows of
// u = J nu as the explicit stepper forms them (ExplicitStepper::FrameRowsOf).
template <class T>
struct ContactJets {
  FeaturePose<T> pa, pb;
  FeatureContact<T> e;
  Vec3<T> frame[3];  // n, t1, t2
  Eigen::Matrix<T, 3, 6> rows_a, rows_b;
};

// From the changes in = [x_a, theta_a, x_b, theta_b] of the poses: the contact's features at the
// changed poses (its start-of-step values where they are not `described`), its tangents turned
// with its normal as the stepper's (ContactTangentBasis) would be.
template <class T>
ContactJets<T> ContactAt(const ContactSetting& s, bool described, const T* in) {
  const ExplicitContact& c = s.contact;
  // A fixed body's pose is constant: its rotation needs no turn on Jets.
  const auto pose = [in](const RigidBodyState& state, bool moving, int first) {
    const Eigen::Matrix3d R = state.orientation.toRotationMatrix();
    return FeaturePose<T>{
        state.position.cast<T>() + Vec3<T>(in[first], in[first + 1], in[first + 2]),
        moving ? Turned(R, Vec3<T>(in[first + 3], in[first + 4], in[first + 5]))
               : Mat3<T>(R.cast<T>())};
  };
  ContactJets<T> out{pose(s.a, s.moving_a, 0), pose(s.b, s.moving_b, 6), {}, {}, {}, {}};
  if (!described || !EvaluateContactFeature(s.feature, out.pa, out.pb, &out.e)) {
    out.e = {c.point.point_a.cast<T>(), c.point.point_b.cast<T>(), c.point.normal.cast<T>(),
             T(c.point.distance)};
  }
  out.frame[0] = out.e.normal;
  TangentsAbout(TangentAxis(c.point.normal), out.e.normal, &out.frame[1], &out.frame[2]);
  out.rows_a = -FrameRows(out.frame, out.e.point_a, out.pa.position);
  out.rows_b = FrameRows(out.frame, out.e.point_b, out.pb.position);
  return out;
}

// The Jacobian (kOutputs x N) of a contact's local function f(in, out) of kInputs inputs with
// Jets of N components, one per input in `active` (the others constant at `nominal`: a fixed
// body's pose and twist, inputs the model does not read), so that a contact with the fixed ground
// costs a fraction of one between two moving bodies.
template <int kOutputs, int N, int kInputs, class Function>
void LocalJacobian(const Function& f, const Eigen::Matrix<double, kInputs, 1>& nominal,
                   const std::vector<int>& active, Eigen::MatrixXd* jacobian) {
  using Jet = ceres::Jet<double, N>;
  Eigen::Matrix<Jet, kInputs, 1> in;
  for (int k = 0; k < kInputs; ++k) in[k] = Jet(nominal[k]);
  for (int slot = 0; slot < N; ++slot) in[active[slot]] = Jet(nominal[active[slot]], slot);
  Jet out[kOutputs];
  f(in.data(), out);
  jacobian->resize(kOutputs, N);
  for (int r = 0; r < kOutputs; ++r) jacobian->row(r) = out[r].v.transpose();
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_CONTACT_JETS_H_
