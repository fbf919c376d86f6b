// The frictional contact problem of one contact, u = W r + q with a 3 x 3 W, solved exactly:
// the local step of the block Gauss-Seidel solver (nonsmooth_gauss_seidel.h).
#ifndef NCPKIT_SOLVERS_FRICTION_SINGLE_CONTACT_H_
#define NCPKIT_SOLVERS_FRICTION_SINGLE_CONTACT_H_

#include <Eigen/Dense>
#include <cmath>
#include <limits>

namespace ncpkit {

// How a single contact was solved.
enum class ContactState {
  TakeOff,      // r = 0, u_N >= 0
  Sticking,     // r in the cone, u = 0
  Sliding,      // r on the cone's boundary, u_N = 0, u_T = -lambda r_T
  Approximate,  // none of the exact cases applied (a singular or indefinite W, non-finite
                // data): r is the best of a few projection steps
};
const char* ToString(ContactState state);

struct SingleContactSolution {
  Eigen::Vector3d r = Eigen::Vector3d::Zero();
  ContactState state = ContactState::Approximate;
  // Sliding: the unit direction of r_T.
  Eigen::Vector2d direction = Eigen::Vector2d::UnitX();
};

// Solves K*_mu ∋ u + mu ||u_T|| e_N ⊥ r ∈ K_mu, u = W r + q, for one contact, by its cases:
//   take-off when q_N >= 0 (r = 0 solves it);
//   sticking when r = -W^-1 q lies in the cone;
//   sliding otherwise: with r = r_N (1, mu t), ||t|| = 1, u_N = 0 gives r_N = -q_N / (W_NN +
//   mu W_NT t), and u_T must point against t. Multiplied by W_NN + mu W_NT t, the condition
//   u_T × t = 0 is a trigonometric polynomial of degree 2 in the angle of t, whose (at most four)
//   roots are those of a quartic in e^{i angle}: they are found from its companion matrix and
//   polished by Newton steps in the angle; the root with r_N > 0, u_T · t <= 0 and the smallest
//   natural map is taken. From `warm_direction` (the contact's sliding direction in the previous
//   sweep; else that of r_start's tangential part, else -q_T) a few Newton steps in the angle
//   are tried first (turning the direction, no trigonometric function), which is all a sweep
//   needs once the sliding direction settles; the quartic only when they fail.
// A sliding reaction is returned as Sliding only where its natural map's norm is at most
// 1e-11 (||q|| + ||W|| ||r_start||) (the quartic's best root otherwise, as Approximate if a few
// projection steps do better).
// mu = 0 is the frictionless case (r_T = 0, r_N = max(0, -q_N / W_NN)).
// `W_inverse` is W^-1 when W is invertible (`invertible` true), computed once per contact by
// the caller.
SingleContactSolution SolveSingleContact(const Eigen::Matrix3d& W, const Eigen::Matrix3d& W_inverse,
                                         bool invertible, const Eigen::Vector3d& q, double mu,
                                         const Eigen::Vector3d& r_start,
                                         const Eigen::Vector2d* warm_direction);

// The same without the sticking case, for a caller that has found -W^-1 q outside the cone (or W
// singular): take-off, frictionless, sliding or approximate. (The Gauss-Seidel sweeps of
// nsgs-velocity try sticking first; this spares the sliding contacts a second try.)
SingleContactSolution SolveSingleContactNotSticking(const Eigen::Matrix3d& W,
                                                    const Eigen::Vector3d& q, double mu,
                                                    const Eigen::Vector3d& r_start,
                                                    const Eigen::Vector2d* warm_direction);

// The solve of a contact in a Gauss-Seidel sweep that carries its sliding direction from sweep
// to sweep: *direction is the warm direction (NaN in x: none) and becomes the new one (NaN unless
// the contact slides). `solve(warm)` runs one of the two solves above with that warm direction
// (or nullptr). Inline: the Gauss-Seidel sweeps call it once per contact.
template <typename Solve>
inline SingleContactSolution SolveCarryingDirection(Eigen::Vector2d* direction, Solve solve) {
  const Eigen::Vector2d* warm = std::isnan(direction->x()) ? nullptr : direction;
  SingleContactSolution local = solve(warm);
  *direction = local.state == ContactState::Sliding
                   ? local.direction
                   : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
  return local;
}

inline SingleContactSolution SolveSingleContactCarried(const Eigen::Matrix3d& W,
                                                       const Eigen::Matrix3d& W_inverse,
                                                       bool invertible, const Eigen::Vector3d& q,
                                                       double mu, const Eigen::Vector3d& r_start,
                                                       Eigen::Vector2d* direction) {
  return SolveCarryingDirection(direction, [&](const Eigen::Vector2d* warm) {
    return SolveSingleContact(W, W_inverse, invertible, q, mu, r_start, warm);
  });
}

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_SINGLE_CONTACT_H_
