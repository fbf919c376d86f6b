// The soft model's part of an explicit step's derivative (integrators/explicit/soft.h,
// docs/derivatives.md "Steps"). The soft model poses no problem: each contact's impulse is a
// function of that contact alone,
//   r = h F(depth, v = J nu, s-, mu, K_p, K_d),  s+ = its anchor offset after the step,
// with the depth, frame and rows J at the start poses, nu the bodies' start twists and s- the
// anchor offset it carried from the previous step's contact it matched (zero for a new contact).
// Its derivative is that function's Jacobian, on Jets, per contact; the anchor offsets are state
// the step carries to the next (StepDerivative::carried_in_names()).
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_SOFT_DERIVATIVE_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_SOFT_DERIVATIVE_H_

#include <Eigen/Dense>
#include <vector>

#include "integrators/explicit/contact_jets.h"

namespace ncpkit::internal {

// One contact's local derivative d[r, s+] / d[x_a, theta_a, x_b, theta_b, nu_a, nu_b, s-, mu,
// K_p, K_d, h] (6 x 31: poses and twists as the contact rows' inputs, then the anchor offset
// carried in (world, m), the friction coefficient, the stiffness and damping, h).
struct SoftContactTerms {
  static constexpr int kInputs = 31, kOutputs = 6;
  static constexpr int kAnchor = 24, kMu = 27, kStiffness = 28, kDamping = 29, kH = 30;
  // The previous step's contact whose anchor it read (its index in that step's list), or -1.
  int previous = -1;
  // Its columns for the inputs that can move (ascending; the others are zero): 19 against a fixed
  // body, 31 between two moving ones.
  std::vector<int> active;
  Eigen::MatrixXd jacobian;
  char mode = 'a';          // StepDerivative::contact_modes()'s letter
  bool degenerate = false;  // at the normal force's clamp or the cone's edge, to rounding
};

// The terms of the contact `setting` describes at the inputs `nominal` (changes of the poses zero,
// the start twists, the anchor carried in and the model's coefficients).
SoftContactTerms LinearizeSoftContact(
    const ContactSetting& setting, bool described,
    const Eigen::Matrix<double, SoftContactTerms::kInputs, 1>& nominal);

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_SOFT_DERIVATIVE_H_
