// The data an explicit step's stages share (integrators/explicit_stepper.h): per body its mass
// blocks and velocities, per contact its rows of J, its contact-frame velocity and its law, and
// the previous step's contacts for warm starts. Kept from step to step, so that once the contacts
// stop changing a step allocates nothing.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_WORKSPACE_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_WORKSPACE_H_

#include <Eigen/Dense>
#include <utility>
#include <vector>

#include "contact/distance.h"
#include "dynamics/body.h"
#include "integrators/islands.h"
#include "integrators/stepper.h"

namespace ncpkit {

// One contact of a step, in the world frame: B's reaction impulse is r_N n + r_T (A gets the
// opposite), the gap is the start-of-step signed distance.
struct ExplicitContact {
  int body_a = -1, body_b = -1;
  ContactPoint point;
  Eigen::Vector3d tangent1 = Eigen::Vector3d::UnitX(), tangent2 = Eigen::Vector3d::UnitY();
  Eigen::Vector3d impulse = Eigen::Vector3d::Zero();  // [r_N, r_T1, r_T2] (N s)
  // Soft contact: the tangential offset of B's contact point from its anchor (world, m).
  Eigen::Vector3d anchor_offset = Eigen::Vector3d::Zero();
  // The contact point in the frame of B (of A when B is fixed) at the start of the step: warm
  // starts match contacts of a pair by it.
  Eigen::Vector3d anchor_point = Eigen::Vector3d::Zero();
};

struct ExplicitStepRecord : StepRecord {
  std::vector<ExplicitContact> contacts;
};

namespace internal {

using Matrix36 = Eigen::Matrix<double, 3, 6>;

struct ExplicitWorkspace {
  // A quarter of the body's size: a box's corners are further apart, a rolling sphere's point
  // moves less in a step at a few metres a second.
  static constexpr double kMatchRadius = 0.25;

  // The previous step's contact of the same pair nearest to contact `index` of `contacts` in the
  // moving body's frame (ExplicitContact::anchor_point), within that body's match_radius, or null.
  const ExplicitContact* Previous(const std::vector<ExplicitContact>& contacts, int index) const;

  std::vector<char> fixed;  // per body: fixed (for the island finder and the models)
  // Per body: kMatchRadius times its bounding radius (read for every contact of every step).
  std::vector<double> match_radius;
  // Per body (zero blocks for fixed ones).
  std::vector<Eigen::Matrix<double, 6, 6>> inverse_mass, mass_matrix;
  std::vector<Vector6d> velocity;        // the free velocities, then the end-of-step ones
  std::vector<Vector6d> start_velocity;  // the free velocities, kept for a repeated solve
  std::vector<Vector6d> end_velocity;    // a pass's end-of-step velocities
  // Per contact: its rows of u = J nu for A (negated) and B, its contact-frame velocity
  // J nu_f + [b_N, 0, 0], b_N alone (phi / h or the restitution target) and its friction
  // coefficient.
  std::vector<Matrix36> rows_a, rows_b;
  Eigen::VectorXd contact_velocity;
  std::vector<double> normal_offset;
  Eigen::VectorXd mu;
  // A model's own unknowns per contact (ExplicitContactModel::unknowns_per_contact(), from that
  // many times the contact's index): the linearized models' LCP solution, for the derivative.
  Eigen::VectorXd model_unknowns;
  // Per moving body: its contacts as (contact, side: 0 for A, 1 for B), body i's at
  // [by_body_begin[i], by_body_begin[i + 1]) of by_body (one array for all bodies: no per-body
  // vector grows when a body gains contacts).
  std::vector<int> by_body_begin;
  std::vector<std::pair<int, int>> by_body;
  // The step's islands, linked by its contacts (link k is contact k), and the contacts' bodies.
  IslandFinder islands;
  std::vector<std::pair<int, int>> contact_bodies;
  // The previous step's contacts, sorted by pair, and per contact of the step the range of
  // `previous` holding its pair's contacts.
  std::vector<ExplicitContact> previous;
  std::vector<std::pair<int, int>> previous_range;
};

// The impulse of `old` in the frame of `c`.
Eigen::Vector3d ImpulseInFrame(const ExplicitContact& old, const ExplicitContact& c);

// The start-of-step twist [v; omega] of a body.
Vector6d StartTwist(const Body& body);

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_WORKSPACE_H_
