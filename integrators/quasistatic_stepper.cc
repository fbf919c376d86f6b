#include "integrators/quasistatic_stepper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "integrators/limits.h"
#include "solvers/input_error.h"
#include "solvers/linear_problem.h"
#include "solvers/mcp.h"
#include "solvers/proximal_point.h"
#include "solvers/solver_registry.h"
#include "solvers/sparse_cholesky.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;
using Triplet = Eigen::Triplet<double>;
using Vector6d = Eigen::Matrix<double, 6, 1>;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Natural residual below which a step's unconverged best iterate is still applied.
constexpr double kUsableResidual = 1e-4;

std::string Str(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

const char* ToString(QuasistaticModel model) {
  switch (model) {
    case QuasistaticModel::Dqc:
      return "dqc";
    case QuasistaticModel::Dlc:
      return "dlc";
    case QuasistaticModel::Qp:
      return "qp";
    case QuasistaticModel::QpLcp:
      return "qp-lcp";
  }
  return "?";
}

bool ParseQuasistaticModel(const std::string& name, QuasistaticModel* model) {
  for (QuasistaticModel m : {QuasistaticModel::Dqc, QuasistaticModel::Dlc, QuasistaticModel::Qp,
                             QuasistaticModel::QpLcp}) {
    if (name == ToString(m)) {
      *model = m;
      return true;
    }
  }
  return false;
}

bool QuasistaticOptions::IsValid(std::string* why) const {
  if (!(h > 0.0) || !std::isfinite(h)) {
    *why = "h must be positive, got " + Str(h);
  } else if (!gravity.allFinite()) {
    *why = "gravity must be finite";
  } else if (!(tolerance > 0.0)) {
    *why = "tolerance must be positive, got " + Str(tolerance);
  } else if (max_iterations < 0) {
    *why = "max_iterations must be >= 0";
  } else if (!(contact_threshold >= 0.0)) {
    *why = "contact_threshold must be >= 0, got " + Str(contact_threshold);
  } else if (friction_directions < 3 || friction_directions > kMaxFrictionDirections) {
    *why = "friction_directions must be in [3, " + std::to_string(kMaxFrictionDirections) +
           "], got " + std::to_string(friction_directions);
  } else if (!(regularization >= 0.0) || !std::isfinite(regularization)) {
    *why = "regularization must be >= 0 and finite, got " + Str(regularization);
  } else if (!(proximal_regularization >= 0.0) || !std::isfinite(proximal_regularization)) {
    *why = "proximal_regularization must be >= 0, got " + Str(proximal_regularization);
  } else if (max_proximal_iterations < 0) {
    *why = "max_proximal_iterations must be >= 0";
  } else if (!plane_normal.allFinite()) {
    *why = "plane_normal must be finite";
  } else if (!IsSolverName(solver, model == QuasistaticModel::Dqc ? ProblemKind::Mixed
                                                                  : ProblemKind::Linear)) {
    *why = "unknown solver '" + solver + "' for the " + ToString(model) + " model";
  } else {
    return true;
  }
  return false;
}

// ----------------------------------------------------------------------------------------------
// One step's data

namespace internal {

struct QuasistaticStepData {
  struct Contact {
    int a = -1, b = -1;
    ContactPoint geometry;
    double mu = 0.0;
    Vector3d t = Vector3d::Zero(), o = Vector3d::Zero();
    int num_tangents = 0;              // dqc: 0 (frictionless), 1 (planar) or 2
    std::vector<Vector3d> directions;  // dlc / qp: friction directions d_j (empty: frictionless)
  };
  std::vector<Contact> contacts;
  // Per body: displacement twist [dp; dtheta] = sum (column, T) delta_column + drift.
  std::vector<std::vector<std::pair<int, Vector6d>>> motion;
  std::vector<Vector6d> drift;
  std::vector<Triplet> stiffness;  // K~
  Eigen::VectorXd force;           // r
};

}  // namespace internal

QuasistaticStepper::QuasistaticStepper(std::vector<Body> scene_bodies, const ContactLawTable& laws,
                                       std::vector<Actuator> scene_actuators,
                                       const QuasistaticOptions& options)
    : bodies_(std::move(scene_bodies)),
      options_(options),
      geometry_(std::make_shared<ExplicitContactGeometry>()) {
  RequireValidOptions(options_, "quasistatic");
  ValidateBodies(bodies_, /*dynamic=*/false);
  for (Actuator& actuator : scene_actuators) {
    ValidateActuator(bodies_, actuators_, &actuator);
    actuators_.push_back(actuator);
  }
  actuated_ = ActuatedBodies(static_cast<int>(bodies_.size()), actuators_);
  std::string why;
  const int nb = static_cast<int>(bodies_.size());
  friction_.assign(nb * nb, 0.0);
  for (int a = 0; a < nb; ++a) {
    for (int b = 0; b < nb; ++b) {
      if (a == b) continue;
      const ContactLaw& law = laws.Get(bodies_[a].name, bodies_[b].name);
      if (!(law.mu >= 0.0) || !std::isfinite(law.mu)) {
        throw InputError("friction between '" + bodies_[a].name + "' and '" + bodies_[b].name +
                         "' must be >= 0, got " + Str(law.mu));
      }
      friction_[a * nb + b] = law.mu;
    }
  }
  for (const Body& body : bodies_) base_pose_.push_back(body.state);
  const auto& bodies = bodies_;
  const auto& actuators = actuators_;
  body_columns_.assign(bodies.size(), {-1, -1, -1, -1, -1, -1});
  int n = 0;
  bool unactuated = false;
  for (size_t b = 0; b < bodies.size(); ++b) {
    if (bodies[b].fixed || actuated_[b]) continue;
    if (bodies[b].shape.kind == ShapeKind::HalfSpace) {
      throw InputError("body '" + bodies[b].name +
                       "' is a plane: it must be fixed or moved by actuators");
    }
    if (!bodies[b].mass.IsValid(&why)) {
      throw InputError("body '" + bodies[b].name + "' is unactuated: " + why);
    }
    for (int k = 0; k < 6; ++k) {
      if (bodies[b].free_dofs[k]) {
        body_columns_[b][k] = n++;
        unactuated = true;
      }
    }
  }
  actuator_columns_.assign(actuators.size(), -1);
  for (size_t a = 0; a < actuators.size(); ++a) {
    if (!actuators[a].prescribed) actuator_columns_[a] = n++;
    q_actuated_.push_back(actuators[a].command(0.0));
  }
  num_coordinates_ = n;
  if (options_.model == QuasistaticModel::QpLcp && unactuated && options_.regularization == 0.0) {
    throw InputError(
        "qp-lcp eliminates the displacements with a Cholesky factorization of the stiffness, "
        "which needs regularization > 0 when a body is unactuated");
  }
  // Every pair that can enter a step's problem (see BuildStep) needs a contact model.
  std::vector<bool> has_unknowns(bodies.size(), false);
  for (size_t b = 0; b < bodies.size(); ++b) {
    has_unknowns[b] = !bodies[b].fixed && !actuated_[b];
  }
  for (size_t a = 0; a < actuators.size(); ++a) {
    for (int b : actuators[a].bodies) has_unknowns[b] = has_unknowns[b] || !actuators[a].prescribed;
  }
  for (size_t b = 0; b < bodies.size(); ++b) {
    for (size_t c = b + 1; c < bodies.size(); ++c) {
      if (!has_unknowns[b] && !has_unknowns[c]) continue;
      if (actuated_[b] && actuated_[c]) continue;
      if (!geometry_->Supports(bodies[b].shape.kind, bodies[c].shape.kind)) {
        throw InputError("no explicit contact between '" + bodies[b].name + "' (" +
                         bodies[b].shape.Name() + ") and '" + bodies[c].name + "' (" +
                         bodies[c].shape.Name() + ")");
      }
    }
  }
  SolverOptions solver_options;
  solver_options.tolerance = options_.tolerance;
  solver_options.max_iterations = options_.max_iterations;
  solver_options.warm_start = true;  // Step() hands over the warm start, or an empty start
  ProximalPointSolver::Options proximal;
  proximal.relative_regularization = options_.proximal_regularization;
  proximal.max_outer_iterations = options_.max_proximal_iterations;
  if (options_.model == QuasistaticModel::Dqc) {
    SolverOptions dlc_options = solver_options;
    dlc_options.max_iterations = 0;
    dlc_solver_ = CreateSolver("lemke", ProblemKind::Linear, dlc_options);
    dlc_proximal_ = std::make_unique<ProximalPointSolver>(dlc_solver_.get(), proximal);
    solver_options.max_iterations = options_.max_iterations > 0 ? options_.max_iterations : 100;
    solver_options.project_onto_bounds = true;
    solver_ = CreateSolver(options_.solver, ProblemKind::Mixed, solver_options);
  } else {
    solver_ = CreateSolver(options_.solver, ProblemKind::Linear, solver_options);
    proximal_ = std::make_unique<ProximalPointSolver>(solver_.get(), proximal);
  }
  cholesky_ = std::make_unique<SparseCholesky>();
  UpdateActuatedPoses();
}

QuasistaticStepper::~QuasistaticStepper() = default;

void QuasistaticStepper::set_contact_geometry(std::shared_ptr<const ContactGeometry> geometry) {
  geometry_ = std::move(geometry);
}

Vector3d QuasistaticStepper::Translation(int body) const {
  return ActuatedTranslation(actuators_, q_actuated_, body);
}

void QuasistaticStepper::UpdateActuatedPoses() {
  for (size_t b = 0; b < bodies_.size(); ++b) {
    if (!actuated_[b]) continue;
    bodies_[b].state = ActuatedPose(actuators_, q_actuated_, static_cast<int>(b), base_pose_[b]);
  }
}

void QuasistaticStepper::BuildStep(internal::QuasistaticStepData* d) const {
  const auto& bodies = bodies_;
  const auto& actuators = actuators_;
  const int nb = static_cast<int>(bodies.size());
  const double h = options_.h;
  const double t1 = time_ + h;
  const Vector3d& g = options_.gravity;
  d->motion.assign(nb, {});
  d->drift.assign(nb, Vector6d::Zero());
  d->force = Eigen::VectorXd::Zero(num_coordinates_);
  d->stiffness.clear();
  d->contacts.clear();
  const double reg = options_.regularization / (h * h);
  for (int b = 0; b < nb; ++b) {
    const Body& body = bodies[b];
    if (body.fixed || actuated_[b]) continue;
    Eigen::Matrix<double, 6, 6> inertia = Eigen::Matrix<double, 6, 6>::Zero();
    inertia.topLeftCorner<3, 3>() = body.mass.mass * Eigen::Matrix3d::Identity();
    inertia.bottomRightCorner<3, 3>() = WorldInertia(body.mass, body.state.orientation);
    for (int k = 0; k < 6; ++k) {
      const int col = body_columns_[b][k];
      if (col < 0) continue;
      d->motion[b].push_back({col, Vector6d::Unit(k)});
      if (k < 3) d->force[col] += body.mass.mass * g[k];
      if (reg == 0.0) continue;
      for (int l = 0; l < 6; ++l) {
        const int other = body_columns_[b][l];
        if (other >= 0 && inertia(k, l) != 0.0)
          d->stiffness.emplace_back(col, other, reg * inertia(k, l));
      }
    }
  }
  for (size_t a = 0; a < actuators.size(); ++a) {
    const Actuator& act = actuators[a];
    const int col = actuator_columns_[a];
    const double target = act.command(t1);
    for (int b : act.bodies) {
      const Vector6d column = ActuatorTwist(act, bodies[b].state.position, Translation(b));
      if (col < 0) {
        d->drift[b] += column * (target - q_actuated_[a]);
      } else {
        d->motion[b].push_back({col, column});
        d->force[col] += bodies[b].mass.mass * g.dot(column.head<3>());
      }
    }
    if (col >= 0) {
      d->stiffness.emplace_back(col, col, act.stiffness);
      d->force[col] += act.stiffness * (target - q_actuated_[a]);
    }
  }
  // Contact selection A(q, eps): pairs with an unknown displacement, no robot self-contact.
  const auto has_unknowns = [&](int b) { return !d->motion[b].empty(); };
  const double eps = options_.contact_threshold;
  std::vector<ContactPoint> points;
  const int nd = options_.friction_directions;
  const bool planar = options_.plane_normal.squaredNorm() > 0.0;
  for (int b = 0; b < nb; ++b) {
    for (int c = b + 1; c < nb; ++c) {
      if (!has_unknowns(b) && !has_unknowns(c)) continue;
      if (actuated_[b] && actuated_[c]) continue;
      if (bodies[b].fixed && bodies[c].fixed) continue;
      const bool plane = bodies[b].shape.kind == ShapeKind::HalfSpace ||
                         bodies[c].shape.kind == ShapeKind::HalfSpace;
      if (!plane && (bodies[b].state.position - bodies[c].state.position).norm() -
                            bodies[b].shape.BoundingRadius() - bodies[c].shape.BoundingRadius() >=
                        eps) {
        continue;
      }
      ShapePose pb, pc;
      pb.position = bodies[b].state.position;
      pb.rotation = bodies[b].state.orientation.toRotationMatrix();
      pc.position = bodies[c].state.position;
      pc.rotation = bodies[c].state.orientation.toRotationMatrix();
      points.clear();
      geometry_->FindContacts(bodies[b].shape, pb, bodies[c].shape, pc, eps, &points);
      const double mu = friction_[b * nb + c];
      for (const ContactPoint& p : points) {
        internal::QuasistaticStepData::Contact contact;
        contact.a = b;
        contact.b = c;
        contact.geometry = p;
        contact.mu = mu;
        const Vector3d& n = p.normal;
        bool in_plane = false;
        if (planar) {
          const Vector3d t = options_.plane_normal.cross(n);
          if (t.norm() > 1e-9) {
            contact.t = t.normalized();
            in_plane = true;
          }
        }
        if (!in_plane) {
          int k = 0;
          for (int j = 1; j < 3; ++j) {
            if (std::abs(n[j]) < std::abs(n[k]) - 1e-12) k = j;
          }
          const Vector3d e = Vector3d::Unit(k);
          contact.t = (e - e.dot(n) * n).normalized();
        }
        contact.o = n.cross(contact.t);
        if (mu > 0.0) {
          contact.num_tangents = in_plane ? 1 : 2;
          if (in_plane) {
            contact.directions = {contact.t, -contact.t};
          } else {
            for (int j = 0; j < nd; ++j) {
              const double angle = 2.0 * M_PI * j / nd;
              Vector3d dir = std::cos(angle) * contact.t + std::sin(angle) * contact.o;
              for (int k = 0; k < 3; ++k) {
                if (std::abs(dir[k]) < 1e-15) dir[k] = 0.0;
              }
              contact.directions.push_back(dir);
            }
          }
        }
        d->contacts.push_back(contact);
      }
    }
  }
}

namespace {

using internal::QuasistaticStepData;
using RowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// Rows u_k . (displacement of B's contact point - A's) in delta, one per (contact, u), and
// their constant parts (the prescribed motion, plus phi when `with_distance`).
struct ContactRows {
  RowMatrix J;
  Eigen::VectorXd constant;
};

ContactRows BuildRows(const QuasistaticStepData& d, const std::vector<Body>& bodies,
                      const std::vector<std::pair<int, Vector3d>>& rows, bool with_distance,
                      int num_coordinates) {
  std::vector<Triplet> triplets;
  ContactRows out;
  out.constant = Eigen::VectorXd::Zero(static_cast<int>(rows.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& contact = d.contacts[rows[r].first];
    const Vector3d& u = rows[r].second;
    const int ends[2] = {contact.b, contact.a};
    const Vector3d points[2] = {contact.geometry.point_b, contact.geometry.point_a};
    for (int side = 0; side < 2; ++side) {
      const int b = ends[side];
      const double sign = side == 0 ? 1.0 : -1.0;
      const Vector3d lever = points[side] - bodies[b].state.position;
      const auto along = [&](const Vector6d& T) {
        return u.dot(T.head<3>()) + lever.cross(u).dot(T.tail<3>());
      };
      for (const auto& [col, T] : d.motion[b]) {
        triplets.emplace_back(static_cast<int>(r), col, sign * along(T));
      }
      out.constant[r] += sign * along(d.drift[b]);
    }
    if (with_distance) out.constant[r] += contact.geometry.distance;
  }
  out.J.resize(static_cast<int>(rows.size()), num_coordinates);
  out.J.setFromTriplets(triplets.begin(), triplets.end());
  return out;
}

// Adds the entries of J at (row0 + i, k) and of -J^T at (k, col0 + i).
void AddCoupling(const RowMatrix& J, int offset, std::vector<Triplet>* t) {
  for (int i = 0; i < J.outerSize(); ++i) {
    for (RowMatrix::InnerIterator it(J, i); it; ++it) {
      t->emplace_back(offset + i, it.col(), it.value());
      t->emplace_back(it.col(), offset + i, -it.value());
    }
  }
}

// Model-DQC (seed 001 eqs. 1, 20-23) in delta and per contact [lambda_n, lambda_t,
// (lambda_o), sigma] (frictionless contacts: lambda_n only):
//   F_delta = K~ delta - Jn^T ln - Jt^T lt - Jo^T lo - r                    (free)
//   F_n     = Jn delta + cn                                                  (ln >= 0)
//   F_t     = mu ln (Jt delta + ct) + lt sigma,  F_o likewise                (free)
//   F_sigma = mu^2 ln^2 - lt^2 - lo^2                                        (sigma >= 0)
// sigma is the slip distance over the step (seed 001's sigma h).
class QuasistaticNcp : public MixedComplementarityProblem {
 public:
  QuasistaticNcp(const QuasistaticStepData& d, const Eigen::SparseMatrix<double>& stiffness,
                 ContactRows normal, ContactRows tangent, ContactRows other, int n)
      : stiffness_(stiffness),
        normal_(std::move(normal)),
        tangent_(std::move(tangent)),
        other_(std::move(other)),
        force_(d.force),
        n_(n) {
    const int nc = static_cast<int>(d.contacts.size());
    index_.assign(nc, {-1, -1, -1, -1});
    mu_.resize(nc);
    int k = n;
    for (int i = 0; i < nc; ++i) {
      mu_[i] = d.contacts[i].mu;
      index_[i][0] = k++;
      if (d.contacts[i].num_tangents >= 1) index_[i][1] = k++;
      if (d.contacts[i].num_tangents == 2) index_[i][2] = k++;
      if (d.contacts[i].num_tangents >= 1) index_[i][3] = k++;
    }
    lower_ = Eigen::VectorXd::Constant(k, -kInf);
    upper_ = Eigen::VectorXd::Constant(k, kInf);
    for (int i = 0; i < nc; ++i) {
      lower_[index_[i][0]] = 0.0;
      if (index_[i][3] >= 0) lower_[index_[i][3]] = 0.0;
    }
    for (int i = 0; i < stiffness_.outerSize(); ++i) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(stiffness_, i); it; ++it) {
        stiffness_triplets_.emplace_back(it.row(), it.col(), it.value());
      }
    }
  }
  int size() const override { return static_cast<int>(lower_.size()); }
  const Eigen::VectorXd& lower() const override { return lower_; }
  const Eigen::VectorXd& upper() const override { return upper_; }
  std::string name() const override { return "dqc"; }
  const std::vector<std::array<int, 4>>& index() const { return index_; }
  // Tangential displacement (along t, o) of contact i for the step's displacement delta.
  Eigen::Vector2d Slip(const Eigen::VectorXd& delta, int i) const {
    return Eigen::Vector2d(tangent_.J.row(i).dot(delta) + tangent_.constant[i],
                           other_.J.row(i).dot(delta) + other_.constant[i]);
  }

  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    const int nc = static_cast<int>(mu_.size());
    const auto delta = z.head(n_);
    Eigen::VectorXd ln = Eigen::VectorXd::Zero(nc), lt = ln, lo = ln;
    for (int i = 0; i < nc; ++i) {
      ln[i] = z[index_[i][0]];
      if (index_[i][1] >= 0) lt[i] = z[index_[i][1]];
      if (index_[i][2] >= 0) lo[i] = z[index_[i][2]];
    }
    const Eigen::VectorXd gn = normal_.J * delta + normal_.constant;
    const Eigen::VectorXd gt = tangent_.J * delta + tangent_.constant;
    const Eigen::VectorXd go = other_.J * delta + other_.constant;
    F->resize(size());
    F->head(n_) = stiffness_ * delta - normal_.J.transpose() * ln - tangent_.J.transpose() * lt -
                  other_.J.transpose() * lo - force_;
    for (int i = 0; i < nc; ++i) {
      const auto& idx = index_[i];
      (*F)[idx[0]] = gn[i];
      if (idx[3] < 0) continue;
      const double sigma = z[idx[3]];
      (*F)[idx[1]] = mu_[i] * ln[i] * gt[i] + lt[i] * sigma;
      if (idx[2] >= 0) (*F)[idx[2]] = mu_[i] * ln[i] * go[i] + lo[i] * sigma;
      (*F)[idx[3]] = mu_[i] * mu_[i] * ln[i] * ln[i] - lt[i] * lt[i] - lo[i] * lo[i];
    }
    if (!F->allFinite()) return false;
    if (J == nullptr) return true;
    std::vector<Triplet> t = stiffness_triplets_;
    const auto couple = [&](const RowMatrix& rows, int which) {
      for (int i = 0; i < nc; ++i) {
        const int col = index_[i][which];
        if (col < 0) continue;
        for (RowMatrix::InnerIterator it(rows, i); it; ++it) {
          t.emplace_back(it.col(), col, -it.value());
          // d F_n / d delta = Jn; d F_t / d delta = mu ln Jt.
          t.emplace_back(col, it.col(), which == 0 ? it.value() : mu_[i] * ln[i] * it.value());
        }
      }
    };
    couple(normal_.J, 0);
    couple(tangent_.J, 1);
    couple(other_.J, 2);
    for (int i = 0; i < nc; ++i) {
      const auto& idx = index_[i];
      if (idx[3] < 0) continue;
      const double sigma = z[idx[3]];
      t.emplace_back(idx[1], idx[0], mu_[i] * gt[i]);
      t.emplace_back(idx[1], idx[1], sigma);
      t.emplace_back(idx[1], idx[3], lt[i]);
      if (idx[2] >= 0) {
        t.emplace_back(idx[2], idx[0], mu_[i] * go[i]);
        t.emplace_back(idx[2], idx[2], sigma);
        t.emplace_back(idx[2], idx[3], lo[i]);
        t.emplace_back(idx[3], idx[2], -2.0 * lo[i]);
      }
      t.emplace_back(idx[3], idx[0], 2.0 * mu_[i] * mu_[i] * ln[i]);
      t.emplace_back(idx[3], idx[1], -2.0 * lt[i]);
    }
    J->resize(size(), size());
    J->setFromTriplets(t.begin(), t.end());
    return true;
  }

 private:
  Eigen::SparseMatrix<double> stiffness_;
  std::vector<Triplet> stiffness_triplets_;
  ContactRows normal_, tangent_, other_;
  Eigen::VectorXd force_;
  int n_;
  std::vector<std::array<int, 4>> index_;
  std::vector<double> mu_;
  Eigen::VectorXd lower_, upper_;
};

// Proximal-point iterations (Rockafellar 1976) for the monotone but singular LCPs that redundant
// contacts give (four coplanar points per face make the Delassus matrix rank deficient, and
// pivoting or Newton steps on it lose accuracy): z_{k+1} solves the LCP with M + gamma D and
// q - gamma D z_k, D = 1 on the complementarity rows, which is strictly monotone there; a fixed
// point solves the original problem, and each z_k is checked against the original problem's
// natural residual. gamma = relative * (the largest diagonal of the dual: |M_ii| plus
// |M_ik M_ki| / M_kk over the free k). The plain problem is tried first.
// The step's mixed LCP: the first n unknowns (the displacements) free, the rest >= 0.
LinearComplementarityProblem MixedProblem(const std::vector<Triplet>& triplets,
                                          const Eigen::VectorXd& q, int n, const char* name) {
  const int size = static_cast<int>(q.size());
  Eigen::SparseMatrix<double> M(size, size);
  M.setFromTriplets(triplets.begin(), triplets.end());
  Eigen::VectorXd l = Eigen::VectorXd::Zero(size);
  l.head(n).setConstant(-kInf);
  LinearComplementarityProblem problem(M, q, l, Eigen::VectorXd::Constant(size, kInf));
  problem.name = name;
  return problem;
}

// Normal rows n . (displacement of B's point - A's) with phi in their constants.
ContactRows NormalRows(const QuasistaticStepData& d, const std::vector<Body>& bodies, int n) {
  std::vector<std::pair<int, Vector3d>> rows;
  for (size_t i = 0; i < d.contacts.size(); ++i) {
    rows.push_back({static_cast<int>(i), d.contacts[i].geometry.normal});
  }
  return BuildRows(d, bodies, rows, true, n);
}

QuasistaticNcp MakeDqcProblem(const QuasistaticStepData& d, const std::vector<Body>& bodies,
                              const Eigen::SparseMatrix<double>& stiffness,
                              const ContactRows& normal, int n) {
  std::vector<std::pair<int, Vector3d>> trows, orows;
  for (size_t i = 0; i < d.contacts.size(); ++i) {
    trows.push_back({static_cast<int>(i), d.contacts[i].t});
    orows.push_back({static_cast<int>(i), d.contacts[i].o});
  }
  return QuasistaticNcp(d, stiffness, normal, BuildRows(d, bodies, trows, false, n),
                        BuildRows(d, bodies, orows, false, n), n);
}

// The step's Model-DLC (seed 001 eqs. 24-26): unknowns [delta, c_n, the pyramid's direction
// forces, sigma per frictional contact], and where each contact's unknowns are.
struct DlcStep {
  LinearComplementarityProblem problem;
  std::vector<int> first;  // per contact: its first direction force, -1 if frictionless
  int normal_offset = 0, friction_offset = 0;
};

DlcStep MakeDlcStep(const QuasistaticStepData& d, const std::vector<Body>& bodies,
                    const ContactRows& normal, int n) {
  const int nc = static_cast<int>(d.contacts.size());
  std::vector<std::pair<int, Vector3d>> rows;
  std::vector<int> first(nc, -1), sigma(nc, -1);
  int ns = 0;
  for (int i = 0; i < nc; ++i) {
    if (d.contacts[i].directions.empty()) continue;
    first[i] = static_cast<int>(rows.size());
    sigma[i] = ns++;
    for (const Vector3d& dir : d.contacts[i].directions) rows.push_back({i, dir});
  }
  const ContactRows f = BuildRows(d, bodies, rows, false, n);
  const int nf = static_cast<int>(rows.size());
  const int on = n, of = n + nc, os = n + nc + nf, size = os + ns;
  std::vector<Triplet> t = d.stiffness;
  AddCoupling(normal.J, on, &t);
  AddCoupling(f.J, of, &t);
  for (int i = 0; i < nc; ++i) {
    if (sigma[i] < 0) continue;
    for (size_t j = 0; j < d.contacts[i].directions.size(); ++j) {
      t.emplace_back(of + first[i] + j, os + sigma[i], 1.0);
      t.emplace_back(os + sigma[i], of + first[i] + j, -1.0);
    }
    t.emplace_back(os + sigma[i], on + i, d.contacts[i].mu);
  }
  Eigen::VectorXd q = Eigen::VectorXd::Zero(size);
  q.head(n) = -d.force;
  q.segment(on, nc) = normal.constant;
  q.segment(of, nf) = f.constant;
  return {MixedProblem(t, q, n, "dlc"), first, on, of};
}

// delta, the normal forces and the friction force vectors of a DLC solution z.
void ReadDlcSolution(const DlcStep& dlc, const QuasistaticStepData& d, const Eigen::VectorXd& z,
                     Eigen::VectorXd* delta, std::vector<double>* normal_force,
                     std::vector<Vector3d>* friction) {
  *delta = z.head(dlc.normal_offset);
  for (size_t i = 0; i < d.contacts.size(); ++i) {
    (*normal_force)[i] = z[dlc.normal_offset + i];
    if (dlc.first[i] < 0) continue;
    for (size_t j = 0; j < d.contacts[i].directions.size(); ++j) {
      (*friction)[i] += z[dlc.friction_offset + dlc.first[i] + j] * d.contacts[i].directions[j];
    }
  }
}

// A start for the step's DQC problem from its DLC solution (Lemke, with the proximal
// fallback): delta and the forces as they are, sigma the length of each contact's slip.
bool DqcStartFromDlc(const QuasistaticStepData& d, const std::vector<Body>& bodies,
                     const ContactRows& normal, const QuasistaticNcp& problem,
                     ProximalPointSolver* dlc_solver, int n, Eigen::VectorXd* start) {
  const int nc = static_cast<int>(d.contacts.size());
  const DlcStep dlc = MakeDlcStep(d, bodies, normal, n);
  Eigen::VectorXd x;
  const SolverSummary& summary = dlc_solver->Solve(dlc.problem, &x);
  if (!summary.IsSolved() || x.size() != dlc.problem.size()) return false;
  Eigen::VectorXd delta;
  std::vector<double> normal_force(nc, 0.0);
  std::vector<Vector3d> friction(nc, Vector3d::Zero());
  ReadDlcSolution(dlc, d, x, &delta, &normal_force, &friction);
  *start = Eigen::VectorXd::Zero(problem.size());
  start->head(n) = delta;
  for (int i = 0; i < nc; ++i) {
    const auto& idx = problem.index()[i];
    (*start)[idx[0]] = normal_force[i];
    if (idx[1] >= 0) (*start)[idx[1]] = friction[i].dot(d.contacts[i].t);
    if (idx[2] >= 0) (*start)[idx[2]] = friction[i].dot(d.contacts[i].o);
    // sigma is the slip's length when sliding (then c = -mu c_n slip / sigma), 0 when sticking
    // and 0 without a normal force: there any sigma solves the cone row, whose Jacobian row
    // would then vanish at sigma > 0.
    const Eigen::Vector2d slip = problem.Slip(delta, i);
    if (idx[3] >= 0 && normal_force[i] > 0.0) {
      (*start)[idx[3]] = idx[2] >= 0 ? slip.norm() : std::abs(slip[0]);
    }
  }
  return start->allFinite();
}

}  // namespace

std::unique_ptr<MixedComplementarityProblem> QuasistaticStepper::DqcProblem() const {
  QuasistaticStepData d;
  BuildStep(&d);
  const int n = num_coordinates_;
  Eigen::SparseMatrix<double> stiffness(n, n);
  stiffness.setFromTriplets(d.stiffness.begin(), d.stiffness.end());
  const ContactRows normal = NormalRows(d, bodies_, n);
  return std::make_unique<QuasistaticNcp>(MakeDqcProblem(d, bodies_, stiffness, normal, n));
}

std::string QuasistaticStepper::LeavesRange(const Eigen::VectorXd& delta, double t) const {
  const auto& bodies = bodies_;
  for (size_t b = 0; b < bodies.size(); ++b) {
    if (bodies[b].fixed || actuated_[b]) continue;
    Vector3d position = bodies[b].state.position;
    for (int k = 0; k < 3; ++k) {
      if (body_columns_[b][k] >= 0) position[k] += delta[body_columns_[b][k]];
    }
    if (!(position.cwiseAbs().maxCoeff() <= kMaxCoordinate)) {
      return "body '" + bodies[b].name +
             "' would leave the coordinate range |x| <= " + Str(kMaxCoordinate) + " m (to " +
             Str(position.cwiseAbs().maxCoeff()) + ")";
    }
  }
  const auto& actuators = actuators_;
  for (size_t a = 0; a < actuators.size(); ++a) {
    const double q = actuator_columns_[a] < 0 ? actuators[a].command(t)
                                              : q_actuated_[a] + delta[actuator_columns_[a]];
    if (!(std::abs(q) <= kMaxCoordinate)) {
      return "actuator '" + actuators[a].name + "' would leave the coordinate range (to " + Str(q) +
             ")";
    }
  }
  return "";
}

const QuasistaticStepRecord& QuasistaticStepper::Step(
    const std::vector<Vector6d>& applied_impulses) {
  if (!applied_impulses.empty()) {
    throw InputError("a quasistatic stepper takes no applied impulses (" +
                     std::to_string(applied_impulses.size()) + " given)");
  }
  return DoStep(nullptr);
}

const QuasistaticStepRecord& QuasistaticStepper::StepFrom(const Eigen::VectorXd& initial_guess) {
  return DoStep(&initial_guess);
}

std::string QuasistaticStepper::variant() const {
  return SolverVariant{ToString(options_.model), options_.solver, !options_.warm_start}.ToString();
}

int QuasistaticStepper::cholesky_analyses() const { return cholesky_->symbolic_analyses(); }

const std::vector<const char*>& QuasistaticStepper::PairColumns() const {
  static const std::vector<const char*> kColumns = {"cn", "cf", "phi", "points"};
  return kColumns;
}

// Per pair with contact points: the sums of the normal forces and of the friction forces'
// magnitudes (N), the smallest linearized distance at the end of the step (m), the points.
void QuasistaticStepper::TablePairs(const StepRecord& record, std::vector<PairRow>* rows) const {
  rows->clear();
  for (const QuasistaticContactRecord& c :
       dynamic_cast<const QuasistaticStepRecord&>(record).contacts) {
    auto row = std::find_if(rows->begin(), rows->end(), [&](const PairRow& r) {
      return r.body_a == c.body_a && r.body_b == c.body_b;
    });
    if (row == rows->end()) {
      PairRow fresh;
      fresh.body_a = c.body_a;
      fresh.body_b = c.body_b;
      fresh.values[2] = std::numeric_limits<double>::infinity();
      rows->push_back(fresh);
      row = rows->end() - 1;
    }
    row->values[0] += c.normal_force;
    row->values[1] += c.friction_force.norm();
    row->values[2] = std::min(row->values[2], c.distance_after);
    row->values[3] += 1.0;
  }
}

const QuasistaticStepRecord& QuasistaticStepper::DoStep(const Eigen::VectorXd* initial_guess) {
  const auto start = std::chrono::steady_clock::now();
  QuasistaticStepData d;
  BuildStep(&d);
  const auto& bodies = bodies_;
  const int n = num_coordinates_;
  const int nc = static_cast<int>(d.contacts.size());
  Eigen::SparseMatrix<double> stiffness(n, n);
  stiffness.setFromTriplets(d.stiffness.begin(), d.stiffness.end());

  const ContactRows normal = NormalRows(d, bodies, n);

  QuasistaticStepRecord& record = record_;
  record.summary = SolverSummary();
  record.problem_size = 0;
  record.attempts = 0;
  record.proximal_iterations = 0;
  record.contacts.clear();
  record.max_penetration = 0.0;
  record.time = time_ + options_.h;
  Eigen::VectorXd z;
  const auto start_from = [&](int size) {
    if (initial_guess != nullptr) {
      if (initial_guess->size() != size) {
        throw InputError("initial guess has size " + std::to_string(initial_guess->size()) +
                         ", the step's problem " + std::to_string(size));
      }
      z = *initial_guess;
      return true;
    }
    if (options_.warm_start && solution_.size() == size && solution_.allFinite()) {
      z = solution_;
      return true;
    }
    z.resize(0);
    return false;
  };
  const auto solve_linear = [&](const LinearComplementarityProblem& problem) {
    const bool warm = start_from(problem.size());
    record.attempts = 1;
    SolverSummary summary = proximal_->Solve(problem, &z);
    record.proximal_iterations = proximal_->summary().outer_iterations;
    if (!summary.IsSolved() && warm) {
      z.resize(0);
      record.attempts = 2;
      summary = proximal_->Solve(problem, &z);
      record.proximal_iterations = proximal_->summary().outer_iterations;
    }
    record.problem_size = problem.size();
    return summary;
  };

  Eigen::VectorXd delta = Eigen::VectorXd::Zero(n);
  std::vector<double> normal_force(nc, 0.0);
  std::vector<Vector3d> friction(nc, Vector3d::Zero());

  if (options_.model == QuasistaticModel::Dlc) {
    const DlcStep dlc = MakeDlcStep(d, bodies, normal, n);
    record.summary = solve_linear(dlc.problem);
    if (z.size() == dlc.problem.size())
      ReadDlcSolution(dlc, d, z, &delta, &normal_force, &friction);
  } else if (options_.model == QuasistaticModel::Qp || options_.model == QuasistaticModel::QpLcp) {
    // Anitescu's rows n + mu d_j (seed 002 eq. 7); a frictionless contact has the one row n.
    std::vector<std::pair<int, Vector3d>> rows;
    std::vector<int> first(nc);
    for (int i = 0; i < nc; ++i) {
      const auto& c = d.contacts[i];
      first[i] = static_cast<int>(rows.size());
      if (c.directions.empty()) {
        rows.push_back({i, c.geometry.normal});
      } else {
        for (const Vector3d& dir : c.directions)
          rows.push_back({i, c.geometry.normal + c.mu * dir});
      }
    }
    const ContactRows A = BuildRows(d, bodies, rows, true, n);
    const int nb = static_cast<int>(rows.size());
    Eigen::VectorXd beta;
    if (options_.model == QuasistaticModel::Qp) {
      const int size = n + nb;
      std::vector<Triplet> t = d.stiffness;
      AddCoupling(A.J, n, &t);
      Eigen::VectorXd q(size);
      q << -d.force, A.constant;
      const LinearComplementarityProblem problem = MixedProblem(t, q, n, "qp");
      record.summary = solve_linear(problem);
      if (z.size() == size) {
        delta = z.head(n);
        beta = z.tail(nb);
      }
    } else {
      // Eliminate delta = K~^-1 (A^T beta + r): the LCP in beta with the Delassus matrix.
      SparseCholesky& cholesky = *cholesky_;
      cholesky.compute(stiffness);
      if (cholesky.info() != Eigen::Success) {
        record.summary.solver = options_.solver;
        record.summary.status = Status::NumericalFailure;
        record.summary.message =
            "Cholesky factorization of the stiffness failed" + cholesky.messages();
      } else if (nb == 0) {
        // No contact: the stiffness alone decides the step (an empty LCP, nothing to solve).
        delta = cholesky.solve(d.force);
        beta.resize(0);
        record.summary.solver = options_.solver;
        record.summary.status = Status::Converged;
        record.summary.natural_residual = 0.0;
        record.summary.message =
            "no contact: the step is the stiffness solve alone" + cholesky.messages();
        z.resize(0);
      } else {
        const Eigen::SparseMatrix<double> At = A.J.transpose();
        const Eigen::SparseMatrix<double> X = cholesky.solve(At);
        const Eigen::SparseMatrix<double> W = Eigen::SparseMatrix<double>(A.J) * X;
        const Eigen::VectorXd free_motion = cholesky.solve(d.force);
        const Eigen::VectorXd q = A.J * free_motion + A.constant;
        if (!cholesky.messages().empty() || !q.allFinite()) {
          record.summary.solver = options_.solver;
          record.summary.status = Status::NumericalFailure;
          record.summary.message = "the Delassus LCP could not be formed" + cholesky.messages();
        } else {
          LinearComplementarityProblem problem(W, q);
          problem.name = "qp-lcp";
          record.summary = solve_linear(problem);
        }
        if (z.size() == nb) {
          beta = z;
          delta = free_motion + X * beta;
        }
      }
    }
    if (beta.size() == nb) {
      for (int i = 0; i < nc; ++i) {
        const auto& c = d.contacts[i];
        if (c.directions.empty()) {
          normal_force[i] = beta[first[i]];
          continue;
        }
        for (size_t j = 0; j < c.directions.size(); ++j) {
          normal_force[i] += beta[first[i] + j];
          friction[i] += c.mu * beta[first[i] + j] * c.directions[j];
        }
      }
    }
  } else {
    const QuasistaticNcp problem = MakeDqcProblem(d, bodies, stiffness, normal, n);
    const bool warm = start_from(problem.size());
    if (warm) {
      // A contact without normal force starts with sigma = 0: any sigma solves its cone row
      // there, and at sigma > 0 that row of the Newton matrix vanishes.
      for (const auto& idx : problem.index()) {
        if (idx[3] >= 0 && !(z[idx[0]] > 0.0)) z[idx[3]] = 0.0;
      }
    }
    record.attempts = 1;
    record.summary = solver_->Solve(problem, &z);
    if (!record.summary.IsSolved() && warm) {
      z.resize(0);
      record.attempts = 2;
      record.summary = solver_->Solve(problem, &z);
    }
    if (!record.summary.IsSolved()) {
      // Newton found no way from the warm or the cold start (a grazing contact that must take
      // a large force at a tiny slip): start from the step's DLC solution (the pyramid, by
      // Lemke), which is near the cone's.
      Eigen::VectorXd seed;
      if (DqcStartFromDlc(d, bodies, normal, problem, dlc_proximal_.get(), n, &seed)) {
        record.attempts = 3;
        const SolverSummary seeded = solver_->Solve(problem, &seed);
        if (seeded.IsSolved() || seeded.natural_residual < record.summary.natural_residual) {
          record.summary = seeded;
          record.summary.message += seeded.IsSolved() ? "; solved from the DLC's solution"
                                                      : "; best from the DLC's solution";
          z = seed;
        }
      }
    }
    record.problem_size = problem.size();
    if (z.size() == problem.size()) {
      delta = z.head(n);
      for (int i = 0; i < nc; ++i) {
        const auto& idx = problem.index()[i];
        normal_force[i] = z[idx[0]];
        if (idx[1] >= 0) friction[i] += z[idx[1]] * d.contacts[i].t;
        if (idx[2] >= 0) friction[i] += z[idx[2]] * d.contacts[i].o;
      }
    }
  }
  solution_ = z;
  // A non-finite result is a failed step.
  bool finite = delta.allFinite();
  for (int i = 0; i < nc; ++i) {
    finite = finite && std::isfinite(normal_force[i]) && friction[i].allFinite();
  }
  if (!finite) {
    record.summary.status = Status::NumericalFailure;
    record.summary.message = "the step's result is not finite; the bodies were not moved" +
                             std::string(record.summary.message.empty() ? "" : "; ") +
                             record.summary.message;
    solution_.resize(0);
  }
  // A step that did not converge moves the bodies only if its best iterate is close to a
  // solution; otherwise the configuration stays as it was (the record says the step failed).
  const bool usable =
      finite && (record.summary.IsSolved() || record.summary.natural_residual <= kUsableResidual);
  if (!usable) delta.setZero();
  if (!finite) {
    std::fill(normal_force.begin(), normal_force.end(), 0.0);
    std::fill(friction.begin(), friction.end(), Vector3d::Zero());
  }

  // Records and the state update.
  const Eigen::VectorXd after = normal.J * delta + normal.constant;
  for (int i = 0; i < nc; ++i) {
    QuasistaticContactRecord c;
    c.body_a = d.contacts[i].a;
    c.body_b = d.contacts[i].b;
    c.point = d.contacts[i].geometry.point_a;
    c.normal = d.contacts[i].geometry.normal;
    c.distance = d.contacts[i].geometry.distance;
    c.distance_after = after[i];
    c.normal_force = normal_force[i];
    c.friction_force = friction[i];
    record.max_penetration = std::max(record.max_penetration, -after[i]);
    record.contacts.push_back(c);
  }
  const std::string out_of_range = usable ? LeavesRange(delta, record.time) : std::string();
  if (!out_of_range.empty()) {
    record.summary.status = Status::NumericalFailure;
    record.summary.message = out_of_range + "; the bodies were not moved";
  } else if (usable) {
    for (size_t b = 0; b < bodies_.size(); ++b) {
      RigidBodyState& body = bodies_[b].state;
      if (bodies_[b].fixed || actuated_[b]) continue;
      Vector3d dp = Vector3d::Zero(), dtheta = Vector3d::Zero();
      for (int k = 0; k < 6; ++k) {
        const int col = body_columns_[b][k];
        if (col < 0) continue;
        (k < 3 ? dp[k] : dtheta[k - 3]) = delta[col];
      }
      body.position += dp;
      const double angle = dtheta.norm();
      if (angle > 0.0) {
        body.orientation =
            (Eigen::Quaterniond(Eigen::AngleAxisd(angle, dtheta / angle)) * body.orientation)
                .normalized();
      }
    }
    const auto& actuators = actuators_;
    for (size_t a = 0; a < actuators.size(); ++a) {
      q_actuated_[a] = actuator_columns_[a] < 0 ? actuators[a].command(record.time)
                                                : q_actuated_[a] + delta[actuator_columns_[a]];
    }
    UpdateActuatedPoses();
  }
  time_ = record.time;
  record.actuator_positions = q_actuated_;
  record.actuator_commands.clear();
  for (const Actuator& a : actuators_) record.actuator_commands.push_back(a.command(time_));
  record.num_contacts = static_cast<int>(record.contacts.size());
  record.step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record;
}

}  // namespace ncpkit
