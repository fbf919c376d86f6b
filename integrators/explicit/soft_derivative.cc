#include "integrators/explicit/soft_derivative.h"

#include <algorithm>

#include "integrators/explicit/soft.h"

namespace ncpkit::internal {
namespace {

using Terms = SoftContactTerms;

// [r, s+] from the inputs (SoftContactTerms), as SoftModel::Solve() finds them: the contact's
// depth, frame and rows at the changed poses, its velocity from the start twists, the carried
// anchor offset in the turned tangent plane. The contact's gate (touching or not) is the step's.
template <class T>
SoftBranch SoftContact(const ContactSetting& setting, bool described, const T* in, T* out) {
  for (int k = 0; k < Terms::kOutputs; ++k) out[k] = T(0);
  if (setting.contact.point.distance >= 0.0) return SoftBranch{};
  const ContactJets<T> c = ContactAt(setting, described, in);
  Eigen::Matrix<T, 6, 1> nu_a, nu_b;
  for (int k = 0; k < 6; ++k) {
    nu_a[k] = in[12 + k];
    nu_b[k] = in[18 + k];
  }
  const Vec3<T> v = c.rows_a * nu_a + c.rows_b * nu_b;
  const Vec3<T> carried(in[Terms::kAnchor], in[Terms::kAnchor + 1], in[Terms::kAnchor + 2]);
  Eigen::Matrix<T, 2, 1> s(carried.dot(c.frame[1]), carried.dot(c.frame[2]));
  Vec3<T> r;
  const SoftBranch branch = SoftLaw(T(-c.e.distance), v, in[Terms::kMu], in[Terms::kStiffness],
                                    in[Terms::kDamping], in[Terms::kH], &s, &r);
  const Vec3<T> anchor = s[0] * c.frame[1] + s[1] * c.frame[2];
  for (int k = 0; k < 3; ++k) {
    out[k] = r[k];
    out[3 + k] = anchor[k];
  }
  return branch;
}

}  // namespace

SoftContactTerms LinearizeSoftContact(const ContactSetting& setting, bool described,
                                      const Eigen::Matrix<double, Terms::kInputs, 1>& nominal) {
  Terms terms;
  double values[Terms::kOutputs];
  const SoftBranch branch = SoftContact(setting, described, nominal.data(), values);
  terms.mode = branch.mode;
  terms.degenerate = branch.degenerate;
  // The inputs that can move: each moving body's pose and twist, the anchor carried in, the
  // coefficients and h.
  for (int side = 0; side < 2; ++side) {
    if (!(side == 0 ? setting.moving_a : setting.moving_b)) continue;
    for (int k = 0; k < 6; ++k) terms.active.push_back(6 * side + k);
    for (int k = 0; k < 6; ++k) terms.active.push_back(12 + 6 * side + k);
  }
  for (int k = Terms::kAnchor; k < Terms::kInputs; ++k) terms.active.push_back(k);
  std::sort(terms.active.begin(), terms.active.end());
  const auto law = [&](const auto* in, auto* out) { SoftContact(setting, described, in, out); };
  if (terms.active.size() == 19) {
    LocalJacobian<Terms::kOutputs, 19>(law, nominal, terms.active, &terms.jacobian);
  } else {
    LocalJacobian<Terms::kOutputs, Terms::kInputs>(law, nominal, terms.active, &terms.jacobian);
  }
  return terms;
}

}  // namespace ncpkit::internal
