// Geometrically implicit contact with an equivalent contact point (Xie & Chakraborty 2016, sec. IV,
// eqs. 9 and 13-17; docs/references.md), and the quasi-rigid compliant layer of Xie & Chakraborty's
// quasi-rigid paper.
//
// For a moving body F (inequalities f_i, i < M) and a body G (g_j, j < N), fixed or moving,
// the unknowns of one pair are
//   geometry block  [a1 (3), a2 (3), l_F (M), l_G (N)]        a1, a2 free, l >= 0
//   force block     [p_n, p_t, p_o, p_r, sigma (, d, p_c)]      p_n, sigma, d, p_c >= 0
// all at the end of the step: the poses of F and G are p+ = p + h v+, R+ = exp(h[w+]x) R, so
// every residual depends on the bodies' end-of-step twists. With c = grad f_k1(a1) +
// sum_{i != k1} l_i grad f_i(a1) (world frame) the residuals are
//   a1:    a1 - a2 + l_k1 c = 0                                         (13)
//   a2:    c + sum_j l_j grad g_j(a2) = 0                               (14)
//   l_F:   0 <= l_i  _|_ -f_i(a1) >= 0                                  (15)
//   l_G:   0 <= l_j  _|_ -g_j(a2) >= 0                                  (16)
//   p_n:   0 <= p_n  _|_ f_k1(a2) >= 0                                  (17)
// (17) uses F's inequality k1 at a2: with (13) and (15) it puts a1 = a2 on F's surface in
// contact, so the bodies touch without penetrating. The form max_j g_j(a1) >= 0 would not: it
// admits a1 = a2 strictly inside F. The contact normal (force on F) is n = -c / |c|; t and o
// complete it, built from a helper axis fixed for the step.
//
// Friction (eq. 9), with the relative velocity of F's point a1 with respect to G:
//   0 = e_t^2 mu p_n v_t + p_t sigma,  0 = e_o^2 mu p_n v_o + p_o sigma,
//   0 = e_r^2 mu p_n w_n + p_r sigma,  0 <= sigma _|_ mu^2 p_n^2 - p_t^2/e_t^2 - p_o^2/e_o^2
//                                                  - p_r^2/e_r^2 >= 0.
// Without torsion (point-contact Coulomb) p_r = 0 and drops out of the cone.
//
// Compliant layer of thickness delta_max around the rigid core of F: with psi = n.(a1 - a2)
// the distance between the cores,
//   d:    0 <= d   _|_ d - (delta_max - psi) >= 0          (d = max(0, delta_max - psi))
//   p_c:  0 <= p_c _|_ p_c - (h k d + c (d - d_prev)) >= 0  (Kelvin-Voigt, never pulling)
// and the normal impulse is p_n + p_c: p_n (rigid, eq. 17 on the cores) acts only once the
// layer is fully compressed. With a tangential stiffness k_t the friction is Kelvin-Voigt too:
// the trial impulse q = -(h k_t (u + h v) + h c_t v) (u the elastic tangential displacement
// carried between steps; torsion uses k_t e_r^2, c_t e_r^2) is scaled back onto the
// friction ellipsoid: p = alpha q with alpha in [0, 1] and
//   alpha = 1 => |q|_E <= mu P,  0 < alpha < 1 => |alpha q|_E = mu P,  alpha = 0 => P = 0,
// where |q|_E^2 = q_t^2/e_t^2 + q_o^2/e_o^2 + q_r^2/e_r^2. alpha takes sigma's place.
#ifndef NCPKIT_CONTACT_IMPLICIT_CONTACT_H_
#define NCPKIT_CONTACT_IMPLICIT_CONTACT_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "contact/contact_law.h"
#include "dynamics/rigid_body.h"
#include "dynamics/shapes.h"

namespace ncpkit {

// What one pair needs during one step, all fixed while the step's problem is solved.
struct ContactPairStep {
  double h = 0.01;
  Shape shape_f, shape_g;
  RigidBodyState state_f, state_g;                    // at the start of the step
  bool g_moves = false;                               // else G stays at state_g
  int k1 = 0;                                         // F's inequality scaling eq. (13)
  Eigen::Vector3d helper = Eigen::Vector3d::UnitX();  // tangent frame seed, not parallel to n
  ContactLaw law;
  double previous_deflection = 0.0;                   // d of the previous step
  Eigen::Vector3d elastic = Eigen::Vector3d::Zero();  // u_t, u_o, u_r of the previous step
};

// The numbers of a pair's step that its residuals depend on smoothly, in the scalar S: double
// when the step is solved, Jets when it is differentiated with respect to them
// (integrators/implicit_derivative.h). The shapes, the frame seed, the ellipsoid's
// semi-axes and the layer's thickness are read from ContactPairStep.
template <class S>
struct PairNumbers {
  S h;
  S position_f[3], quaternion_f[4];  // start poses; quaternions [w, x, y, z]
  S position_g[3], quaternion_g[4];
  S mu, stiffness, damping, tangential_stiffness, tangential_damping;
  S previous_deflection, elastic[3];  // the layer's state carried from the step before
};

inline PairNumbers<double> NumbersOf(const ContactPairStep& s) {
  PairNumbers<double> d;
  d.h = s.h;
  const auto pose = [](const RigidBodyState& state, double* position, double* quaternion) {
    for (int k = 0; k < 3; ++k) position[k] = state.position[k];
    const Eigen::Quaterniond& q = state.orientation;
    quaternion[0] = q.w();
    quaternion[1] = q.x();
    quaternion[2] = q.y();
    quaternion[3] = q.z();
  };
  pose(s.state_f, d.position_f, d.quaternion_f);
  pose(s.state_g, d.position_g, d.quaternion_g);
  d.mu = s.law.mu;
  d.stiffness = s.law.stiffness;
  d.damping = s.law.damping;
  d.tangential_stiffness = s.law.tangential_stiffness;
  d.tangential_damping = s.law.tangential_damping;
  d.previous_deflection = s.previous_deflection;
  for (int k = 0; k < 3; ++k) d.elastic[k] = s.elastic[k];
  return d;
}

namespace internal {

template <class T>
struct IsWideJet : std::false_type {};
template <int N>
struct IsWideJet<ceres::Jet<double, N>> : std::bool_constant<(N > 6)> {};

template <class T, class S>
void EndPose(const S* position, const S* quaternion, const S& h, const T* nu, T* p, T* R) {
  if constexpr (IsWideJet<T>::value && std::is_same_v<S, double>) {
    if (nu != nullptr) {
      // The pose depends on the 6 twist unknowns only: differentiated with 6-wide Jets and
      // carried over to the caller's parameters by the chain rule (d out = sum_k d out/d nu_k
      // d nu_k), 12 x 6 axpys instead of the rotation update in N-wide Jets. Values are
      // computed by the same operations as without this.
      using Jet6 = ceres::Jet<double, 6>;
      Jet6 nu6[6], p6[3], R6[9];
      for (int k = 0; k < 6; ++k) nu6[k] = Jet6(nu[k].a, k);
      EndPose(position, quaternion, h, nu6, p6, R6);
      const auto lift = [&](const Jet6& in, T* out) {
        out->a = in.a;
        out->v = in.v[0] * nu[0].v;
        for (int k = 1; k < 6; ++k) out->v += in.v[k] * nu[k].v;
      };
      for (int k = 0; k < 3; ++k) lift(p6[k], p + k);
      for (int k = 0; k < 9; ++k) lift(R6[k], R + k);
      return;
    }
  }
  if (nu == nullptr) {  // a fixed body: constants in the step's unknowns
    for (int k = 0; k < 3; ++k) p[k] = T(position[k]);
    S rotation[9];
    QuaternionToRotation(quaternion, rotation);
    for (int k = 0; k < 9; ++k) R[k] = T(rotation[k]);
    return;
  }
  T pose[7];
  IntegratePose(position, quaternion, h, nu, pose);
  for (int k = 0; k < 3; ++k) p[k] = pose[k];
  QuaternionToRotation(pose + 3, R);
}

// xi = R^T (a - p): a world point in the body frame.
template <class T>
void ToBody(const T* p, const T* R, const T* a, T* xi) {
  const T d[3] = {a[0] - p[0], a[1] - p[1], a[2] - p[2]};
  for (int c = 0; c < 3; ++c) xi[c] = R[c] * d[0] + R[3 + c] * d[1] + R[6 + c] * d[2];
}

// R g: a body-frame vector in the world frame.
template <class T>
void ToWorld(const T* R, const T* g, T* out) {
  for (int r = 0; r < 3; ++r) out[r] = R[3 * r] * g[0] + R[3 * r + 1] * g[1] + R[3 * r + 2] * g[2];
}

template <class T>
void Cross(const T* a, const T* b, T* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

template <class T>
T Dot(const T* a, const T* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// c += weight * grad f_i(xi) (body frame). A plane's gradient is a constant: taken in doubles,
// its zero components skipped, which spares the Jet products by constants (the same values; a
// product by zero adds nothing).
template <class T>
void AddWeightedGradient(const Shape& shape, int i, const T* xi, const T& weight, T* c) {
  if (shape.PlaneInequalities()) {
    const double anywhere[3] = {0.0, 0.0, 0.0};
    double g[3];
    shape.Gradient(i, anywhere, g);
    for (int k = 0; k < 3; ++k) {
      if (g[k] != 0.0) c[k] += weight * g[k];
    }
    return;
  }
  T g[3];
  shape.Gradient(i, xi, g);
  for (int k = 0; k < 3; ++k) c[k] += weight * g[k];
}

}  // namespace internal

// The quantities of a pair at the end of the step, as functions of the unknowns. nu_g is null
// when G is fixed.
template <class T>
struct PairFrame {
  T p_f[3], R_f[9], p_g[3], R_g[9];
  const T* a1;
  const T* a2;
  T xi1[3];  // a1 in F's frame
  T c[3];    // grad f_k1(a1) + sum_{i != k1} l_i grad f_i(a1), world frame
  T n[3], t[3], o[3];
  T v_t, v_o, w_n;  // relative sliding and spin velocities of F at a1 w.r.t. G

  PairFrame(const ContactPairStep& s, const T* nu_f, const T* nu_g, const T* geometry)
      : PairFrame(s, NumbersOf(s), nu_f, nu_g, geometry) {}
  template <class S>
  PairFrame(const ContactPairStep& s, const PairNumbers<S>& d, const T* nu_f, const T* nu_g,
            const T* geometry) {
    internal::EndPose(d.position_f, d.quaternion_f, d.h, nu_f, p_f, R_f);
    internal::EndPose(d.position_g, d.quaternion_g, d.h, nu_g, p_g, R_g);
    a1 = geometry;
    a2 = geometry + 3;
    const T* l_f = geometry + 6;
    internal::ToBody(p_f, R_f, a1, xi1);
    T c_body[3] = {T(0), T(0), T(0)};
    const int m = s.shape_f.NumInequalities();
    for (int i = 0; i < m; ++i) {
      internal::AddWeightedGradient(s.shape_f, i, xi1, (i == s.k1) ? T(1) : l_f[i], c_body);
    }
    internal::ToWorld(R_f, c_body, c);
    using std::sqrt;
    const T norm = sqrt(internal::Dot(c, c));
    for (int k = 0; k < 3; ++k) n[k] = -c[k] / norm;
    const T en = T(s.helper[0]) * n[0] + T(s.helper[1]) * n[1] + T(s.helper[2]) * n[2];
    for (int k = 0; k < 3; ++k) t[k] = T(s.helper[k]) - en * n[k];
    const T tn = sqrt(internal::Dot(t, t));
    for (int k = 0; k < 3; ++k) t[k] /= tn;
    internal::Cross(n, t, o);
    // Velocity of the material point of F at a1, minus that of G's point there.
    T r[3], wxr[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) r[k] = a1[k] - p_f[k];
    internal::Cross(nu_f + 3, r, wxr);
    for (int k = 0; k < 3; ++k) {
      v[k] = nu_f[k] + wxr[k];
      w[k] = nu_f[3 + k];
    }
    if (nu_g != nullptr) {
      for (int k = 0; k < 3; ++k) r[k] = a1[k] - p_g[k];
      internal::Cross(nu_g + 3, r, wxr);
      for (int k = 0; k < 3; ++k) {
        v[k] -= nu_g[k] + wxr[k];
        w[k] -= nu_g[3 + k];
      }
    }
    v_t = internal::Dot(t, v);
    v_o = internal::Dot(o, v);
    w_n = internal::Dot(n, w);
  }
};

// The force block of a pair, [p_n, p_t, p_o, p_r, sigma] and, with a compliant layer,
// [d, p_c]: where each unknown is.
struct ForceBlock {
  static constexpr int kNormal = 0;        // p_n (N s): rigid normal impulse, eq. (17)
  static constexpr int kTangent = 1;       // p_t (N s), along t
  static constexpr int kOther = 2;         // p_o (N s), along o
  static constexpr int kSpin = 3;          // p_r (N m s), about n
  static constexpr int kSlip = 4;          // sigma (eq. 9), or alpha with elastic friction
  static constexpr int kDeflection = 5;    // d (m): compliance of the layer
  static constexpr int kLayerImpulse = 6;  // p_c (N s): the layer's normal impulse
  static constexpr int Size(bool compliant) { return compliant ? 7 : 5; }
};

// The trial tangential impulse of the Kelvin-Voigt friction (compliant layer with k_t > 0).
template <class T, class S>
void ElasticTrial(const ContactPairStep& s, const PairNumbers<S>& d, const T& v_t, const T& v_o,
                  const T& w_n, T* q) {
  const ContactLaw& law = s.law;
  const T h(d.h), h_kt = h * T(d.tangential_stiffness), h_ct = h * T(d.tangential_damping);
  const T er2(law.e_r * law.e_r);
  q[0] = -(h_kt * (T(d.elastic[0]) + h * v_t) + h_ct * v_t);
  q[1] = -(h_kt * (T(d.elastic[1]) + h * v_o) + h_ct * v_o);
  q[2] = law.torsion ? -(h_kt * er2 * (T(d.elastic[2]) + h * w_n) + h_ct * er2 * w_n) : T(0);
}

template <class T>
void ElasticTrial(const ContactPairStep& s, const T& v_t, const T& v_o, const T& w_n, T* q) {
  ElasticTrial(s, NumbersOf(s), v_t, v_o, w_n, q);
}

// Rows of the geometry block, eqs. (13)-(16): r[0, 6 + M + N).
template <class T, int M, int N>
void GeometryRows(const ContactPairStep& s, const PairFrame<T>& f, const T* geometry, T* r) {
  const T* l_f = geometry + 6;
  const T* l_g = geometry + 6 + M;
  for (int k = 0; k < 3; ++k) r[k] = f.a1[k] - f.a2[k] + l_f[s.k1] * f.c[k];
  T xi2[3], g_body[3] = {T(0), T(0), T(0)};
  internal::ToBody(f.p_g, f.R_g, f.a2, xi2);
  for (int j = 0; j < N; ++j) {
    internal::AddWeightedGradient(s.shape_g, j, xi2, l_g[j], g_body);
    r[6 + M + j] = -s.shape_g.Inequality(j, xi2);
  }
  T g_world[3];
  internal::ToWorld(f.R_g, g_body, g_world);
  for (int k = 0; k < 3; ++k) r[3 + k] = f.c[k] + g_world[k];
  for (int i = 0; i < M; ++i) r[6 + i] = -s.shape_f.Inequality(i, f.xi1);
}

// Rows of the force block, row i paired with unknown i (ForceBlock): eq. (17), friction (eq. 9 or
// Kelvin-Voigt), compliant layer.
template <class T, bool kCompliant, class S>
void ForceRows(const ContactPairStep& s, const PairNumbers<S>& data, const PairFrame<T>& f,
               const T* p, T* r) {
  const ContactLaw& law = s.law;
  T xi[3];
  internal::ToBody(f.p_f, f.R_f, f.a2, xi);
  r[ForceBlock::kNormal] = s.shape_f.Inequality(s.k1, xi);
  T total = p[ForceBlock::kNormal];
  if constexpr (kCompliant) {
    const T gap[3] = {f.a1[0] - f.a2[0], f.a1[1] - f.a2[1], f.a1[2] - f.a2[2]};
    const T psi = internal::Dot(f.n, gap);
    const T& d = p[ForceBlock::kDeflection];
    r[ForceBlock::kDeflection] = d - (T(law.thickness) - psi);
    r[ForceBlock::kLayerImpulse] =
        p[ForceBlock::kLayerImpulse] -
        (T(data.h) * T(data.stiffness) * d + T(data.damping) * (d - T(data.previous_deflection)));
    total += p[ForceBlock::kLayerImpulse];
  }
  const T mu(data.mu);
  const T inv_t2(1.0 / (law.e_t * law.e_t)), inv_o2(1.0 / (law.e_o * law.e_o));
  const T inv_r2(1.0 / (law.e_r * law.e_r));
  if (kCompliant && law.elastic_friction()) {
    T q[3];
    ElasticTrial(s, data, f.v_t, f.v_o, f.w_n, q);
    const T& alpha = p[ForceBlock::kSlip];
    r[ForceBlock::kTangent] = p[ForceBlock::kTangent] - alpha * q[0];
    r[ForceBlock::kOther] = p[ForceBlock::kOther] - alpha * q[1];
    r[ForceBlock::kSpin] = law.torsion ? p[ForceBlock::kSpin] - alpha * q[2] : p[ForceBlock::kSpin];
    const T q_norm2 = q[0] * q[0] * inv_t2 + q[1] * q[1] * inv_o2 + q[2] * q[2] * inv_r2;
    r[ForceBlock::kSlip] = alpha * alpha * q_norm2 - mu * mu * total * total;
    return;
  }
  const T& sigma = p[ForceBlock::kSlip];
  r[ForceBlock::kTangent] =
      T(law.e_t * law.e_t) * mu * total * f.v_t + p[ForceBlock::kTangent] * sigma;
  r[ForceBlock::kOther] = T(law.e_o * law.e_o) * mu * total * f.v_o + p[ForceBlock::kOther] * sigma;
  r[ForceBlock::kSpin] =
      law.torsion ? T(law.e_r * law.e_r) * mu * total * f.w_n + p[ForceBlock::kSpin] * sigma
                  : p[ForceBlock::kSpin];
  r[ForceBlock::kSlip] = mu * mu * total * total -
                         p[ForceBlock::kTangent] * p[ForceBlock::kTangent] * inv_t2 -
                         p[ForceBlock::kOther] * p[ForceBlock::kOther] * inv_o2;
  if (law.torsion) r[ForceBlock::kSlip] -= p[ForceBlock::kSpin] * p[ForceBlock::kSpin] * inv_r2;
}

// Minus the contact impulse's wrench on F (at a1; r[0, 6)) and, if G moves, plus it on G (at
// a2; r[6, 12)), to be added into the bodies' Newton-Euler rows (W_n p_n + W_t p_t + W_o p_o +
// W_r p_r, eq. 2).
template <class T, bool kMovingG, bool kCompliant>
void WrenchRows(const ContactPairStep& s, const PairFrame<T>& f, const T* p, T* r) {
  T total = p[ForceBlock::kNormal];
  if constexpr (kCompliant) total += p[ForceBlock::kLayerImpulse];
  T force[3], arm[3], moment[3];
  for (int k = 0; k < 3; ++k) {
    force[k] = total * f.n[k] + p[ForceBlock::kTangent] * f.t[k] + p[ForceBlock::kOther] * f.o[k];
    arm[k] = f.a1[k] - f.p_f[k];
  }
  internal::Cross(arm, force, moment);
  const bool torsion = s.law.torsion;
  for (int k = 0; k < 3; ++k) {
    r[k] = -force[k];
    r[3 + k] = -(moment[k] + (torsion ? p[ForceBlock::kSpin] * f.n[k] : T(0)));
  }
  if constexpr (kMovingG) {
    for (int k = 0; k < 3; ++k) arm[k] = f.a2[k] - f.p_g[k];
    internal::Cross(arm, force, moment);
    for (int k = 0; k < 3; ++k) {
      r[6 + k] = force[k];
      r[9 + k] = moment[k] + (torsion ? p[ForceBlock::kSpin] * f.n[k] : T(0));
    }
  }
}

// All residual rows of one pair, for ProblemBuilder: reads [nu_f, (nu_g,) geometry, forces]
// and writes the rows paired with [geometry, forces, nu_f (, nu_g)]. One functor, so that the
// end-of-step poses and the contact frame are computed once per evaluation. It reads the step's
// data through `data`, so that a stepper can update it in place and keep the problem (and its
// sparsity pattern) from one step to the next.
template <int M, int N, bool kMovingG, bool kCompliant>
struct ImplicitContactResidual {
  static constexpr int kGeometrySize = 6 + M + N;
  static constexpr int kForceSize = ForceBlock::Size(kCompliant);
  static constexpr int kNumResiduals = kGeometrySize + kForceSize + (kMovingG ? 12 : 6);
  static constexpr bool kGMoves = kMovingG;
  const ContactPairStep* data;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    Evaluate(*data, NumbersOf(*data), x, r);
    return true;
  }
  // The rows with the step's smooth numbers in the scalar S (PairNumbers).
  template <class T, class S>
  static void Evaluate(const ContactPairStep& step, const PairNumbers<S>& d, T const* const* x,
                       T* r) {
    const T* nu_f = x[0];
    const T* nu_g = kMovingG ? x[1] : nullptr;
    const T* geometry = x[kMovingG ? 2 : 1];
    const T* p = x[kMovingG ? 3 : 2];
    const PairFrame<T> f(step, d, nu_f, nu_g, geometry);
    GeometryRows<T, M, N>(step, f, geometry, r);
    ForceRows<T, kCompliant>(step, d, f, p, r + kGeometrySize);
    WrenchRows<T, kMovingG, kCompliant>(step, f, p, r + kGeometrySize + kForceSize);
  }
};

template <class R>
struct ResidualTag {
  using type = R;
};

// Calls visit(ResidualTag<ImplicitContactResidual<M, N, kMovingG, kCompliant>>()) with the
// residual type of the pair's shapes, G's motion and law. Throws std::logic_error for a shape
// without an inequality form of 1, 3 or 6 inequalities.
template <class Visitor>
void VisitPairResidual(const ContactPairStep& s, Visitor&& visit) {
  const auto with_motion = [&](auto m, auto n) {
    constexpr int M = decltype(m)::value, N = decltype(n)::value;
    const bool compliant = s.law.compliant();
    if (s.g_moves) {
      if (compliant) return visit(ResidualTag<ImplicitContactResidual<M, N, true, true>>());
      return visit(ResidualTag<ImplicitContactResidual<M, N, true, false>>());
    }
    if (compliant) return visit(ResidualTag<ImplicitContactResidual<M, N, false, true>>());
    return visit(ResidualTag<ImplicitContactResidual<M, N, false, false>>());
  };
  const auto with_g = [&](auto m) {
    switch (s.shape_g.NumInequalities()) {
      case 1:
        return with_motion(m, std::integral_constant<int, 1>());
      case 3:
        return with_motion(m, std::integral_constant<int, 3>());
      case 6:
        return with_motion(m, std::integral_constant<int, 6>());
    }
    throw std::logic_error("unsupported number of inequalities");
  };
  switch (s.shape_f.NumInequalities()) {
    case 1:
      return with_g(std::integral_constant<int, 1>());
    case 3:
      return with_g(std::integral_constant<int, 3>());
    case 6:
      return with_g(std::integral_constant<int, 6>());
  }
  throw std::logic_error("unsupported number of inequalities");
}

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_IMPLICIT_CONTACT_H_
