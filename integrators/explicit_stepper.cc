#include "integrators/explicit_stepper.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "solvers/input_error.h"

namespace ncpkit {
namespace {

using Matrix36 = Eigen::Matrix<double, 3, 6>;

// Unit tangents completing the normal to a right-handed frame (n, t1, t2).
void TangentBasis(const Eigen::Vector3d& n, Eigen::Vector3d* t1, Eigen::Vector3d* t2) {
  const Eigen::Vector3d axis =
      std::abs(n.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  *t1 = n.cross(axis).normalized();
  *t2 = n.cross(*t1);
}

// The rows [d^T, ((p - x) x d)^T] for d = n, t1, t2: the contact-frame velocity of the body's
// material point at p from its twist [v; omega].
Matrix36 ContactRows(const ExplicitContact& c, const Eigen::Vector3d& point,
                     const Eigen::Vector3d& centre) {
  Matrix36 rows;
  const Eigen::Vector3d arm = point - centre;
  const Eigen::Vector3d directions[3] = {c.point.normal, c.tangent1, c.tangent2};
  for (int k = 0; k < 3; ++k) {
    rows.block<1, 3>(k, 0) = directions[k].transpose();
    rows.block<1, 3>(k, 3) = arm.cross(directions[k]).transpose();
  }
  return rows;
}

}  // namespace

bool ExplicitStepperOptions::IsValid(std::string* why) const {
  std::string solver_why;
  const bool solver_ok = solver_options.IsValid(&solver_why);
  return internal::OptionChecks()
      .Require(h > 0.0 && std::isfinite(h), "h", h, "must be positive and finite")
      .Require(gravity.allFinite(), "gravity", gravity.norm(), "must be finite")
      .Require(contact_margin > 0.0 && std::isfinite(contact_margin), "contact_margin",
               contact_margin, "must be positive and finite")
      .Require(solver_ok, "solver_options", 0.0, solver_why.c_str())
      .Done(why);
}

ExplicitStepper::ExplicitStepper(std::vector<Body> bodies, ContactLawTable laws,
                                 const ExplicitStepperOptions& options)
    : bodies_(std::move(bodies)), laws_(std::move(laws)), options_(options) {
  RequireValidOptions(options_, "explicit stepper");
  std::string why;
  if (!laws_.IsValid(&why)) throw InputError("explicit stepper: " + why);
  ValidateBodies(bodies_, /*dynamic=*/true);
  solver_ = CreateSolver(options_.solver, ProblemKind::Friction, options_.solver_options);
  // Every pair of shapes that may meet (not both fixed) needs an explicit distance; checked
  // here, once per pair of kinds (the first body of each kind named), rather than at the step
  // where such a pair first comes near.
  std::map<ShapeKind, const Body*> moving_kinds, all_kinds;
  for (const Body& body : bodies_) {
    all_kinds.emplace(body.shape.kind, &body);
    if (!body.fixed) moving_kinds.emplace(body.shape.kind, &body);
  }
  for (const auto& [kind, moving] : moving_kinds) {
    for (const auto& [other_kind, other] : all_kinds) {
      if (geometry_.Supports(kind, other_kind)) continue;
      throw InputError("explicit stepper: no explicit distance between a " + moving->shape.Name() +
                       " and a " + other->shape.Name() + " (bodies " + moving->name + ", " +
                       other->name + "); it has planes, spheres and boxes");
    }
  }
}

const std::vector<const char*>& ExplicitStepper::PairColumns() const {
  static const std::vector<const char*> kColumns = {"contacts", "pn"};
  return kColumns;
}

void ExplicitStepper::TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const {
  rows->clear();
  const auto* explicit_record = dynamic_cast<const ExplicitStepRecord*>(&record);
  if (explicit_record == nullptr) return;
  for (const ExplicitContact& c : explicit_record->contacts) {
    PairRow* row = nullptr;
    for (PairRow& existing : *rows) {
      if (existing.body_a == c.body_a && existing.body_b == c.body_b) row = &existing;
    }
    if (row == nullptr) {
      rows->push_back(PairRow());
      row = &rows->back();
      row->body_a = c.body_a;
      row->body_b = c.body_b;
    }
    row->values[0] += 1.0;
    row->values[1] += c.impulse[0];
  }
}

void ExplicitStepper::ContactMarkers(const StepRecord& record,
                                     std::vector<ContactMarker>* markers) const {
  markers->clear();
  const auto* explicit_record = dynamic_cast<const ExplicitStepRecord*>(&record);
  if (explicit_record == nullptr) return;
  for (const ExplicitContact& c : explicit_record->contacts) {
    markers->push_back({c.point.point_b, c.point.normal, c.impulse[0]});
  }
}

// Contact points of every pair the broad phase keeps, with gaps below the margin.
void ExplicitStepper::FindContacts() {
  const int n = static_cast<int>(bodies_.size());
  spheres_.resize(n);
  for (int i = 0; i < n; ++i) {
    spheres_[i].centre = bodies_[i].state.position;
    spheres_[i].radius = bodies_[i].shape.BoundingRadius() + 0.5 * options_.contact_margin;
    spheres_[i].fixed = bodies_[i].fixed;
  }
  broad_phase_.Find(spheres_, &pairs_);
  record_.contacts.clear();
  for (const auto& [i, j] : pairs_) {
    const Body& a = bodies_[i];
    const Body& b = bodies_[j];
    if (!geometry_.Supports(a.shape.kind, b.shape.kind)) {
      throw InputError("explicit stepper: no explicit distance between a " + a.shape.Name() +
                       " and a " + b.shape.Name() + " (bodies " + a.name + ", " + b.name + ")");
    }
    ShapePose pose_a, pose_b;
    pose_a.position = a.state.position;
    pose_a.rotation = a.state.orientation.toRotationMatrix();
    pose_b.position = b.state.position;
    pose_b.rotation = b.state.orientation.toRotationMatrix();
    points_.clear();
    geometry_.FindContacts(a.shape, pose_a, b.shape, pose_b, options_.contact_margin, &points_);
    for (const ContactPoint& point : points_) {
      ExplicitContact c;
      c.body_a = i;
      c.body_b = j;
      c.point = point;
      TangentBasis(point.normal, &c.tangent1, &c.tangent2);
      record_.contacts.push_back(c);
    }
  }
}

// W = J M^-1 J^T and q = J nu_f + [phi / h, 0, 0], then the solve.
void ExplicitStepper::AssembleAndSolve() {
  std::vector<ExplicitContact>& contacts = record_.contacts;
  const int nc = static_cast<int>(contacts.size());
  // Each contact's rows per body (zero for a fixed body), and the contacts of every body.
  std::vector<Matrix36> rows_a(nc), rows_b(nc);
  std::vector<std::vector<std::pair<int, int>>> by_body(bodies_.size());  // (contact, side)
  Eigen::VectorXd q(3 * nc);
  for (int c = 0; c < nc; ++c) {
    const ExplicitContact& contact = contacts[c];
    const Body& a = bodies_[contact.body_a];
    const Body& b = bodies_[contact.body_b];
    rows_a[c] = -ContactRows(contact, contact.point.point_a, a.state.position);
    rows_b[c] = ContactRows(contact, contact.point.point_b, b.state.position);
    q.segment<3>(3 * c) =
        rows_a[c] * free_velocity_[contact.body_a] + rows_b[c] * free_velocity_[contact.body_b];
    q[3 * c] += contact.point.distance / options_.h;
    if (!a.fixed) by_body[contact.body_a].emplace_back(c, 0);
    if (!b.fixed) by_body[contact.body_b].emplace_back(c, 1);
  }
  std::vector<Eigen::Triplet<double>> triplets;
  for (size_t body = 0; body < bodies_.size(); ++body) {
    const auto& list = by_body[body];
    for (const auto& [c1, side1] : list) {
      const Matrix36& J1 = side1 == 0 ? rows_a[c1] : rows_b[c1];
      const Matrix36 J1_Minv = J1 * inverse_mass_[body];
      for (const auto& [c2, side2] : list) {
        const Matrix36& J2 = side2 == 0 ? rows_a[c2] : rows_b[c2];
        const Eigen::Matrix3d block = J1_Minv * J2.transpose();
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) triplets.emplace_back(3 * c1 + i, 3 * c2 + j, block(i, j));
      }
    }
  }
  Eigen::SparseMatrix<double> W(3 * nc, 3 * nc);
  W.setFromTriplets(triplets.begin(), triplets.end());
  Eigen::VectorXd mu(nc);
  for (int c = 0; c < nc; ++c) {
    mu[c] = laws_.Get(bodies_[contacts[c].body_a].name, bodies_[contacts[c].body_b].name).mu;
  }
  const FrictionContactProblem problem(W, q, mu);
  // Warm start: the previous step's impulse of the same pair at the nearest point.
  r_.setZero(3 * nc);
  if (options_.warm_start) {
    for (int c = 0; c < nc; ++c) {
      double nearest = options_.contact_margin;
      for (const ExplicitContact& old : previous_) {
        if (old.body_a != contacts[c].body_a || old.body_b != contacts[c].body_b) continue;
        const double d = (old.point.point_b - contacts[c].point.point_b).norm();
        if (d < nearest) {
          nearest = d;
          // The old impulse in this contact's frame.
          const Eigen::Vector3d f = old.impulse[0] * old.point.normal +
                                    old.impulse[1] * old.tangent1 + old.impulse[2] * old.tangent2;
          r_.segment<3>(3 * c) =
              Eigen::Vector3d(f.dot(contacts[c].point.normal), f.dot(contacts[c].tangent1),
                              f.dot(contacts[c].tangent2));
        }
      }
    }
  }
  if (nc > 0) {
    record_.summary = solver_->Solve(problem, &r_);
  } else {
    record_.summary = SolverSummary();
    record_.summary.solver = options_.solver;
    record_.summary.status = Status::Converged;
    record_.summary.natural_residual = 0.0;
    record_.summary.message = "no contact";
  }
  if (r_.size() != 3 * nc || !r_.allFinite()) r_.setZero(3 * nc);
  for (int c = 0; c < nc; ++c) {
    contacts[c].impulse = r_.segment<3>(3 * c);
    free_velocity_[contacts[c].body_a] +=
        inverse_mass_[contacts[c].body_a] * (rows_a[c].transpose() * contacts[c].impulse);
    free_velocity_[contacts[c].body_b] +=
        inverse_mass_[contacts[c].body_b] * (rows_b[c].transpose() * contacts[c].impulse);
  }
  record_.problem_size = 3 * nc;
  record_.num_contacts = nc;
}

// Poses by the exact rotation update with the end-of-step twists (free velocities plus the
// contact impulses).
void ExplicitStepper::Advance() {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    Body& body = bodies_[i];
    if (body.fixed) continue;
    const Vector6d& nu = free_velocity_[i];  // the end-of-step twist, after the impulses
    double pose[7];
    IntegratePose(body.state, options_.h, nu.data(), pose);
    body.state.position = Eigen::Vector3d(pose[0], pose[1], pose[2]);
    body.state.orientation = Eigen::Quaterniond(pose[3], pose[4], pose[5], pose[6]).normalized();
    body.state.linear_velocity = nu.head<3>();
    body.state.angular_velocity = nu.tail<3>();
  }
}

const StepRecord& ExplicitStepper::Step(const std::vector<Vector6d>& applied_impulses) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = bodies_.size();
  if (!applied_impulses.empty() && applied_impulses.size() != n) {
    throw InputError("explicit stepper: " + std::to_string(applied_impulses.size()) +
                     " applied impulses for " + std::to_string(n) + " bodies");
  }
  // Free velocities: gravity and the gyroscopic torque over the step, and applied impulses.
  inverse_mass_.resize(n);
  free_velocity_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Body& body = bodies_[i];
    inverse_mass_[i].setZero();
    free_velocity_[i].setZero();
    if (body.fixed) continue;
    const Eigen::Matrix3d inertia = WorldInertia(body.mass, body.state.orientation);
    const Eigen::Matrix3d inertia_inverse = inertia.inverse();
    inverse_mass_[i].topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() / body.mass.mass;
    inverse_mass_[i].bottomRightCorner<3, 3>() = inertia_inverse;
    const Eigen::Vector3d& omega = body.state.angular_velocity;
    Vector6d impulse;
    impulse.head<3>() = options_.h * body.mass.mass * options_.gravity;
    impulse.tail<3>() = -options_.h * omega.cross(inertia * omega);
    if (!applied_impulses.empty()) impulse += applied_impulses[i];
    free_velocity_[i].head<3>() = body.state.linear_velocity;
    free_velocity_[i].tail<3>() = omega;
    free_velocity_[i] += inverse_mass_[i] * impulse;
  }
  FindContacts();
  record_.max_penetration = 0.0;
  for (const ExplicitContact& c : record_.contacts) {
    record_.max_penetration = std::max(record_.max_penetration, -c.point.distance);
  }
  AssembleAndSolve();
  Advance();
  previous_ = record_.contacts;
  time_ += options_.h;
  record_.time = time_;
  record_.attempts = 1;
  record_.step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record_;
}

}  // namespace ncpkit
