// One pair of the implicit contact model (implicit_contact.h) across steps: the start values
// of its unknowns, how the last step's solution is carried into the next, and what a solution
// says about the contact (point, impulses, contact kind, gap, the layer's elastic state).
#ifndef NCPKIT_CONTACT_IMPLICIT_PAIR_H_
#define NCPKIT_CONTACT_IMPLICIT_PAIR_H_

#include <Eigen/Dense>

#include "contact/implicit_contact.h"
#include "dynamics/rigid_body.h"
#include "dynamics/shapes.h"

namespace ncpkit {

// A pair's unknowns and the state it carries from one step to the next.
struct ImplicitPairState {
  Eigen::VectorXd geometry;  // [a1, a2, l_F, l_G] (implicit_contact.h)
  Eigen::VectorXd forces;    // ForceBlock
  int k1 = -1;
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();   // of the last step, from G towards F
  Eigen::Vector3d helper = Eigen::Vector3d::Zero();   // tangent-frame seed of the last step
  double deflection = 0.0;                            // compliant layer: d of the last step
  Eigen::Vector3d elastic = Eigen::Vector3d::Zero();  // elastic tangential displacement
};

// One active pair after a step. F (body_f) is a moving body; G (body_g) may be fixed.
struct ContactRecord {
  int body_f = -1, body_g = -1;
  Eigen::Vector3d ecp = Eigen::Vector3d::Zero();      // a1, F's contact point
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();   // direction of the normal impulse on F
  double p_n = 0.0, p_t = 0.0, p_o = 0.0, p_r = 0.0;  // N s (p_r: N m s); p_n incl. layer
  int n_active_f = 0, n_active_g = 0;  // positive multipliers: 3 vertex, 2 edge, 1 face
  int k1 = 0;
  double gap = 0.0;         // separation of the (core) shapes along the contact axis, < 0: overlap
  double deflection = 0.0;  // compliant layer: d
};

// A shape's support point in the world for a world direction (shapes.h SupportPoint).
Eigen::Vector3d WorldSupport(const Shape& shape, const RigidBodyState& state,
                             const Eigen::Vector3d& direction, double flat = 1e-9);

// Separation of two convex shapes along `axis` (pointing from G towards F): the smallest
// axis.x over F minus the largest over G; >= 0 proves they do not overlap. A half-space G
// must have axis equal to its normal.
double SeparationAlongAxis(const Shape& f, const RigidBodyState& pose_f, const Shape& g,
                           const RigidBodyState& pose_g, const Eigen::Vector3d& axis);

// The outward normal of a half-space body (its body z axis in the world).
Eigen::Vector3d PlaneNormal(const RigidBodyState& state);

// The inequality of `shape` active at its support point in direction -n (n points from the
// other body towards this one) whose outward normal is most opposed to n.
int FacingInequality(const Shape& shape, const RigidBodyState& state, const Eigen::Vector3d& n);

// Start values of a pair from the shapes' support points (towards each other, or against
// *direction, pointing from G to F); `flat`: faces and edges within this (relative) tilt of the
// direction count as facing it, and give their centre. Impulses: where the shapes touch (or
// will within the step), F's weight over one step (mass_f |gravity| h) as p_n and sliding
// friction against the current slip; else none.
ImplicitPairState StartValues(const ContactPairStep& pair, double mass_f,
                              const Eigen::Vector3d& gravity,
                              const Eigen::Vector3d* direction = nullptr, double flat = 1e-9);

// The last step's solution as the start of this one: the contact points carried along with
// F's material point over one step (`pair`: this step's data; `predicted`: the same pair at the
// free-flight prediction of the poses); where the carried point is no longer a lowest point of
// F towards G at the predicted pose (the contact feature is changing), the points restart from
// that pose's support point.
void CarryForward(const ContactPairStep& pair, const ContactPairStep& predicted, double mass_f,
                  const Eigen::Vector3d& gravity, ImplicitPairState* state);

// Fits the state to this step's frame: F's facing inequality k1 (its multiplier moves with it)
// and the tangent-frame seed (the remembered tangential impulse re-expressed in the new frame);
// sets pair->k1 and pair->helper and the layer's carried state.
void AlignWithStep(ImplicitPairState* state, ContactPairStep* pair);

// What a solution says about the pair: contact point (in the pair's frame), impulses, contact
// kind, deflection (the gap is measured by the caller after the bodies moved). `frame` is the
// pair's end-of-step frame at the solution.
ContactRecord ReadContact(const ContactPairStep& pair, const PairFrame<double>& frame,
                          const Eigen::Ref<const Eigen::VectorXd>& geometry,
                          const Eigen::Ref<const Eigen::VectorXd>& forces);

// The elastic tangential displacement the layer carries into the next step (Kelvin-Voigt
// friction; zero otherwise): u = (-p / h - c_t v) / k_t per direction.
Eigen::Vector3d ElasticDisplacement(const ContactPairStep& pair, const PairFrame<double>& frame,
                                    const Eigen::Ref<const Eigen::VectorXd>& forces,
                                    double normal_impulse);

// The same for a pressed pair with Kelvin-Voigt friction, in any scalar (the step's derivative:
// integrators/implicit_derivative.h); `forces` is the pair's force block.
template <class T, class S>
void ElasticDisplacement(const ContactPairStep& s, const PairNumbers<S>& d,
                         const PairFrame<T>& frame, const T* forces, T* elastic) {
  const T er2(s.law.e_r * s.law.e_r), h(d.h);
  const T v[3] = {frame.v_t, frame.v_o, frame.w_n};
  const T kt(d.tangential_stiffness), ct(d.tangential_damping);
  const T stiffness[3] = {kt, kt, kt * er2};
  const T damping[3] = {ct, ct, ct * er2};
  for (int a = 0; a < 3; ++a) {
    elastic[a] = (-forces[ForceBlock::kTangent + a] / h - damping[a] * v[a]) / stiffness[a];
  }
  if (!s.law.torsion) elastic[2] = T(0);
}

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_IMPLICIT_PAIR_H_
