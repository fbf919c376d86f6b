#include "solvers/friction/single_contact.h"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <complex>
#include <limits>

#include "solvers/base/internal/enum_names.h"
#include "solvers/friction/friction_problem.h"

namespace ncpkit {
namespace {

// u_T × t for the sliding reaction along the angle theta, times W_NN + mu W_NT t (see the
// header): h(theta) = k0 + k1c cos + k1s sin + k2c cos 2theta + k2s sin 2theta.
struct SlidingCondition {
  double k0, k1c, k1s, k2c, k2s;
  // h and its first two derivatives in theta at the direction t = (cos theta, sin theta), unit
  // (the double angles by their identities: no trigonometric function is evaluated).
  double Value(const Eigen::Vector2d& t, double* first, double* second) const {
    const double c = t.x(), s = t.y();
    const double c2 = c * c - s * s, s2 = 2.0 * s * c;
    *first = -k1c * s + k1s * c - 2.0 * k2c * s2 + 2.0 * k2s * c2;
    *second = -k1c * c - k1s * s - 4.0 * k2c * c2 - 4.0 * k2s * s2;
    return k0 + k1c * c + k1s * s + k2c * c2 + k2s * s2;
  }
  double Scale() const {
    return std::abs(k0) + std::abs(k1c) + std::abs(k1s) + std::abs(k2c) + std::abs(k2s);
  }
};

SlidingCondition MakeSlidingCondition(const Eigen::Matrix3d& W, const Eigen::Vector3d& q,
                                      double mu) {
  // a u_T = p0 + A t with a = W_NN + mu w.t, p0 = -q_N b + W_NN q_T, A = mu (-q_N C + q_T w^T),
  // b = W_TN, w = W_NT, C = W_TT.
  const Eigen::Vector2d b = W.block<2, 1>(1, 0);
  const Eigen::RowVector2d w = W.block<1, 2>(0, 1);
  const Eigen::Matrix2d C = W.block<2, 2>(1, 1);
  const Eigen::Vector2d q_t = q.tail<2>();
  const Eigen::Vector2d p0 = -q[0] * b + W(0, 0) * q_t;
  const Eigen::Matrix2d A = mu * (-q[0] * C + q_t * w);
  // (p0 + A t) × t, expanded with t = (cos, sin) and the double-angle identities.
  SlidingCondition h;
  h.k0 = 0.5 * (A(0, 1) - A(1, 0));
  h.k1c = -p0[1];
  h.k1s = p0[0];
  h.k2c = -0.5 * (A(0, 1) + A(1, 0));
  h.k2s = 0.5 * (A(0, 0) - A(1, 1));
  return h;
}

// Halley steps on h in the angle from the direction *t: cubic convergence takes a direction
// carried over from the last sweep to the root in two or three steps where Newton's quadratic
// convergence takes three or four (2.3 against 3.1 on average on the brick wall at 20 sweeps),
// each a chain of a square root and divisions. A step turns t
// by d as t + d t_perp, normalized: the angle turned is atan(d), within d^3 of d, the order of
// the step's own error. Far from the root, where Halley's correction to the Newton step
// -h / h' (the factor 1 / (1 - h h'' / (2 h'^2))) is large, the Newton step is taken. Returns
// true and the root in *t if |h| falls below the scale's rounding level.
bool PolishDirection(const SlidingCondition& h, Eigen::Vector2d* t, int max_steps) {
  const double threshold = 1e-14 * h.Scale();
  double slope = 0.0, curvature = 0.0;
  double value = h.Value(*t, &slope, &curvature);
  for (int step = 0; step < max_steps && std::abs(value) > threshold; ++step) {
    if (slope == 0.0 || !std::isfinite(slope)) return false;
    const double square = slope * slope;
    const double turn = std::abs(value * curvature) < square
                            ? -2.0 * value * slope / (2.0 * square - value * curvature)
                            : -value / slope;
    Eigen::Vector2d next = *t + turn * Eigen::Vector2d(-t->y(), t->x());
    // After the first step t is unit to rounding and |next|^2 = 1 + d^2, whose inverse square
    // root for a small turn is its series, exact to rounding where d^2 < 1e-8: no square root
    // or division on the chain.
    const double turn_squared = turn * turn;
    if (step > 0 && turn_squared < 1e-8) {
      next *= 1.0 - turn_squared * (0.5 - 0.375 * turn_squared);
    } else {
      next /= next.norm();
    }
    double next_slope = 0.0, next_curvature = 0.0;
    const double next_value = h.Value(next, &next_slope, &next_curvature);
    if (!(std::abs(next_value) < std::abs(value))) break;
    *t = next;
    value = next_value;
    slope = next_slope;
    curvature = next_curvature;
  }
  return std::abs(value) <= 1e3 * threshold;
}

// The sliding reaction along the unit direction t and its velocity u = W r + q, if it has r_N > 0
// and u_T against t.
bool SlidingReaction(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, double mu,
                     const Eigen::Vector2d& t, Eigen::Vector3d* r, Eigen::Vector3d* u) {
  const double c = t.x(), s = t.y();
  const double a = W(0, 0) + mu * (W(0, 1) * c + W(0, 2) * s);
  if (!(a > 0.0)) return false;
  const double normal = -q[0] / a;
  *r = Eigen::Vector3d(normal, mu * normal * c, mu * normal * s);
  *u = W * *r + q;
  const double along = (*u)[1] * c + (*u)[2] * s;
  return !(along > 1e-12 * (std::abs((*u)[1]) + std::abs((*u)[2]) + q.lpNorm<Eigen::Infinity>()));
}

// The sliding reaction along t, if it is one (SlidingReaction); its natural map norm in *error.
bool SlidingCandidate(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, double mu,
                      const Eigen::Vector2d& t, Eigen::Vector3d* r, double* error) {
  Eigen::Vector3d u;
  if (!SlidingReaction(W, q, mu, t, r, &u)) return false;
  *error = ContactNaturalMap(mu, *r, u).norm();
  return std::isfinite(*error);
}

// Whether the sliding reaction along t is one whose natural map norm is at most `accept`: the
// decision SlidingCandidate's error would give, taken without the natural map where a bound
// settles it. With u_T = -lambda t + w t_perp, the exact sliding velocity (mu lambda+, -lambda+ t)
// leaves r where the cone's projection puts it, and the projection does not expand distances, so
// ||F|| <= |u_N| + (1 + mu) (|w| + max(-lambda, 0)); a margin of 1e-13 of the figures' size (some
// 900 roundings) covers the computed norm's rounding and t's distance from unit length.
bool SlidingSolves(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, double mu,
                   const Eigen::Vector2d& t, double accept, Eigen::Vector3d* r) {
  Eigen::Vector3d u;
  if (!SlidingReaction(W, q, mu, t, r, &u)) return false;
  const double c = t.x(), s = t.y();
  const double lambda = -(u[1] * c + u[2] * s), w = u[2] * c - u[1] * s;
  const double bound = std::abs(u[0]) + (1.0 + mu) * (std::abs(w) + std::max(-lambda, 0.0));
  const double size = (1.0 + mu) * (std::abs((*r)[0]) + u.lpNorm<1>());
  if (bound + 1e-13 * size <= accept) return true;
  const double error = ContactNaturalMap(mu, *r, u).norm();
  return std::isfinite(error) && error <= accept;
}

// The directions where h vanishes: roots on the unit circle of z^2 h(z) as a quartic in
// z = e^{i theta} (coefficients c_k of z^k; self-inversive, c_{4-k} = conj(c_k)).
int SlidingDirections(const SlidingCondition& h, Eigen::Vector2d directions[4]) {
  using Complex = std::complex<double>;
  const Complex i(0.0, 1.0);
  const Complex c4 = 0.5 * (h.k2c - i * h.k2s), c3 = 0.5 * (h.k1c - i * h.k1s);
  const Complex c2 = h.k0, c1 = std::conj(c3), c0 = std::conj(c4);
  const double scale = h.Scale();
  if (!(scale > 0.0) || !std::isfinite(scale)) return 0;
  Complex roots[4];
  int num_roots = 0;
  if (std::abs(c4) > 1e-13 * scale) {
    Eigen::Matrix<Complex, 4, 4> companion = Eigen::Matrix<Complex, 4, 4>::Zero();
    companion(1, 0) = companion(2, 1) = companion(3, 2) = 1.0;
    companion(0, 3) = -c0 / c4;
    companion(1, 3) = -c1 / c4;
    companion(2, 3) = -c2 / c4;
    companion(3, 3) = -c3 / c4;
    Eigen::ComplexEigenSolver<Eigen::Matrix<Complex, 4, 4>> solver(companion, false);
    if (solver.info() != Eigen::Success) return 0;
    for (int k = 0; k < 4; ++k) roots[num_roots++] = solver.eigenvalues()[k];
  } else if (std::abs(c3) > 1e-13 * scale) {
    // c3 z^2 + c2 z + c1 = 0 (the quartic divided by z).
    const Complex root = std::sqrt(c2 * c2 - 4.0 * c3 * c1);
    roots[num_roots++] = (-c2 + root) / (2.0 * c3);
    roots[num_roots++] = (-c2 - root) / (2.0 * c3);
  }
  int count = 0;
  for (int k = 0; k < num_roots; ++k) {
    const double modulus = std::abs(roots[k]);
    if (std::abs(modulus - 1.0) < 1e-3) {
      directions[count++] = Eigen::Vector2d(roots[k].real(), roots[k].imag()) / modulus;
    }
  }
  return count;
}

// Projection steps r <- P_K(r - rho (u + mu ||u_T|| e_N)), the fallback where no case applies.
Eigen::Vector3d ProjectionSteps(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, double mu,
                                Eigen::Vector3d r, double* error) {
  const double norm = W.norm();
  const double rho = norm > 0.0 && std::isfinite(norm) ? 1.0 / norm : 1.0;
  Eigen::Vector3d best = r;
  *error = ContactNaturalMap(mu, r, W * r + q).norm();
  for (int step = 0; step < 50 && std::isfinite(*error); ++step) {
    Eigen::Vector3d u = W * r + q;
    u[0] += mu * TangentNorm(u[1], u[2]);
    r = ProjectOntoCone(mu, r - rho * u);
    const double e = ContactNaturalMap(mu, r, W * r + q).norm();
    if (e < *error) {
      *error = e;
      best = r;
    }
  }
  return best;
}

}  // namespace

const char* ToString(ContactState state) {
  static constexpr internal::EnumName<ContactState> kNames[] = {
      {ContactState::TakeOff, "take-off"},
      {ContactState::Sticking, "sticking"},
      {ContactState::Sliding, "sliding"},
      {ContactState::Approximate, "approximate"}};
  return internal::NameIn(kNames, state);
}

SingleContactSolution SolveSingleContact(const Eigen::Matrix3d& W, const Eigen::Matrix3d& W_inverse,
                                         bool invertible, const Eigen::Vector3d& q, double mu,
                                         const Eigen::Vector3d& r_start,
                                         const Eigen::Vector2d* warm_direction) {
  if (q[0] < 0.0 && !(mu == 0.0 && W(0, 0) > 0.0) && invertible) {
    const Eigen::Vector3d r = -(W_inverse * q);
    if (r[0] >= 0.0 && TangentNorm(r[1], r[2]) <= mu * r[0]) {
      SingleContactSolution solution;
      solution.r = r;
      solution.state = ContactState::Sticking;
      return solution;
    }
  }
  return SolveSingleContactNotSticking(W, q, mu, r_start, warm_direction);
}

SingleContactSolution SolveSingleContactNotSticking(const Eigen::Matrix3d& W,
                                                    const Eigen::Vector3d& q, double mu,
                                                    const Eigen::Vector3d& r_start,
                                                    const Eigen::Vector2d* warm_direction) {
  SingleContactSolution solution;
  if (q[0] >= 0.0) {
    solution.state = ContactState::TakeOff;
    return solution;
  }
  if (mu == 0.0 && W(0, 0) > 0.0) {
    solution.r[0] = -q[0] / W(0, 0);
    solution.state = ContactState::Sliding;
    solution.direction = Eigen::Vector2d::UnitX();
    return solution;
  }
  const SlidingCondition h = MakeSlidingCondition(W, q, mu);
  const double accept = 1e-11 * (q.norm() + W.norm() * r_start.norm());
  Eigen::Vector3d r;
  double error = 0.0;
  const auto solved_from = [&](Eigen::Vector2d d) {
    if (!(d.allFinite() && PolishDirection(h, &d, 8) && SlidingSolves(W, q, mu, d, accept, &r))) {
      return false;
    }
    solution.r = r;
    solution.state = ContactState::Sliding;
    solution.direction = d;
    return true;
  };
  // Newton guesses before the quartic: the direction carried over, else the start's own sliding
  // direction (a solver's first sweep from a warm start); then the one against the free slip q_T
  // (exact when W_TT is isotropic and uncoupled from the normal): a few hundred operations
  // against the companion matrix's eigenvalues. A guess is formed only if the one before failed.
  bool guessed = true;
  if (warm_direction != nullptr) {
    if (solved_from(*warm_direction)) return solution;
  } else if (r_start[0] > 0.0 && (r_start[1] != 0.0 || r_start[2] != 0.0)) {
    if (solved_from(r_start.tail<2>().normalized())) return solution;
  } else {
    guessed = false;
  }
  if (q[1] != 0.0 || q[2] != 0.0) {
    if (solved_from(-q.tail<2>().normalized())) return solution;
  } else if (!guessed && solved_from(Eigen::Vector2d::UnitX())) {
    return solution;
  }
  Eigen::Vector2d directions[4];
  const int num_directions = SlidingDirections(h, directions);
  double best_error = std::numeric_limits<double>::infinity();
  for (int k = 0; k < num_directions; ++k) {
    Eigen::Vector2d d = directions[k];
    PolishDirection(h, &d, 8);
    if (SlidingCandidate(W, q, mu, d, &r, &error) && error < best_error) {
      best_error = error;
      solution.r = r;
      solution.state = ContactState::Sliding;
      solution.direction = d;
    }
  }
  if (best_error <= accept) return solution;
  double projection_error = 0.0;
  const Eigen::Vector3d projected = ProjectionSteps(W, q, mu, r_start, &projection_error);
  if (projection_error < best_error) solution.r = projected;
  solution.state = ContactState::Approximate;
  return solution;
}

}  // namespace ncpkit
