#include "contact/linearized_contact.h"

#include <cmath>

namespace ncpkit {

using Eigen::Vector3d;

void SetFrictionFrame(const Vector3d& plane_normal, int friction_directions,
                      LinearizedContact* contact) {
  const Vector3d& n = contact->geometry.normal;
  bool in_plane = false;
  if (plane_normal.squaredNorm() > 0.0) {
    const Vector3d t = plane_normal.cross(n);
    if (t.norm() > 1e-9) {
      contact->t = t.normalized();
      in_plane = true;
    }
  }
  if (!in_plane) {
    int k = 0;
    for (int j = 1; j < 3; ++j) {
      if (std::abs(n[j]) < std::abs(n[k]) - 1e-12) k = j;
    }
    const Vector3d e = Vector3d::Unit(k);
    contact->t = (e - e.dot(n) * n).normalized();
  }
  contact->o = n.cross(contact->t);
  contact->directions.clear();
  contact->num_tangents = 0;
  if (!(contact->mu > 0.0)) return;
  contact->num_tangents = in_plane ? 1 : 2;
  if (in_plane) {
    contact->directions = {contact->t, -contact->t};
    return;
  }
  const int nd = friction_directions;
  for (int j = 0; j < nd; ++j) {
    const double angle = 2.0 * M_PI * j / nd;
    Vector3d dir = std::cos(angle) * contact->t + std::sin(angle) * contact->o;
    for (int k = 0; k < 3; ++k) {
      if (std::abs(dir[k]) < 1e-15) dir[k] = 0.0;
    }
    contact->directions.push_back(dir);
  }
}

namespace {

// Whether the pair (b, c) can have contact points in the step (see FindLinearizedContacts).
bool Candidate(const std::vector<Body>& bodies, const std::vector<char>& actuated,
               const QuasistaticBalance& balance, int b, int c, double threshold) {
  if (!balance.HasUnknowns(b) && !balance.HasUnknowns(c)) return false;
  if (actuated[b] && actuated[c]) return false;
  if (bodies[b].fixed && bodies[c].fixed) return false;
  const bool plane =
      bodies[b].shape.kind == ShapeKind::HalfSpace || bodies[c].shape.kind == ShapeKind::HalfSpace;
  return plane || (bodies[b].state.position - bodies[c].state.position).norm() -
                          bodies[b].shape.BoundingRadius() - bodies[c].shape.BoundingRadius() <
                      threshold;
}

ShapePose PoseOf(const Body& body) {
  ShapePose pose;
  pose.position = body.state.position;
  pose.rotation = body.state.orientation.toRotationMatrix();
  return pose;
}

}  // namespace

void FindLinearizedContacts(const std::vector<Body>& bodies, const std::vector<char>& actuated,
                            const QuasistaticBalance& balance, const ContactGeometry& geometry,
                            const std::vector<double>& friction, double threshold,
                            const Vector3d& plane_normal, int friction_directions,
                            std::vector<ContactPoint>* points,
                            std::vector<LinearizedContact>* contacts) {
  const int nb = static_cast<int>(bodies.size());
  size_t count = 0;
  for (int b = 0; b < nb; ++b) {
    for (int c = b + 1; c < nb; ++c) {
      if (!Candidate(bodies, actuated, balance, b, c, threshold)) continue;
      points->clear();
      geometry.FindContacts(bodies[b].shape, PoseOf(bodies[b]), bodies[c].shape, PoseOf(bodies[c]),
                            threshold, points);
      for (const ContactPoint& p : *points) {
        if (count == contacts->size()) contacts->emplace_back();
        LinearizedContact& contact = (*contacts)[count++];
        contact.a = b;
        contact.b = c;
        contact.geometry = p;
        contact.mu = friction[b * nb + c];
        SetFrictionFrame(plane_normal, friction_directions, &contact);
      }
    }
  }
  contacts->resize(count);
}

void BuildContactRows(const std::vector<LinearizedContact>& contacts,
                      const QuasistaticBalance& balance, const std::vector<Body>& bodies,
                      bool with_distance, ContactRows* out) {
  const std::vector<std::pair<int, Vector3d>>& rows = out->directions;
  std::vector<Eigen::Triplet<double>>& triplets = out->triplets;
  triplets.clear();
  out->constant.setZero(static_cast<int>(rows.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    const LinearizedContact& contact = contacts[rows[r].first];
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
      for (const auto& [col, T] : balance.motion(b)) {
        triplets.emplace_back(static_cast<int>(r), col, sign * along(T));
      }
      out->constant[r] += sign * along(balance.drift(b));
    }
    if (with_distance) out->constant[r] += contact.geometry.distance;
  }
  out->assembly.Assemble(static_cast<int>(rows.size()), balance.size(), triplets, &out->J);
}

void NormalRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                const std::vector<Body>& bodies, ContactRows* out) {
  out->directions.clear();
  for (size_t i = 0; i < contacts.size(); ++i) {
    out->directions.push_back({static_cast<int>(i), contacts[i].geometry.normal});
  }
  BuildContactRows(contacts, balance, bodies, true, out);
}

void TangentRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                 const std::vector<Body>& bodies, int which, ContactRows* out) {
  out->directions.clear();
  for (size_t i = 0; i < contacts.size(); ++i) {
    out->directions.push_back({static_cast<int>(i), which == 0 ? contacts[i].t : contacts[i].o});
  }
  BuildContactRows(contacts, balance, bodies, false, out);
}

namespace {

// Rows from a generator that lists each contact's row directions (none for a contact without
// rows), and per contact the index of its first row (-1: none).
template <class Directions>
void RowsPerContact(const std::vector<LinearizedContact>& contacts,
                    const QuasistaticBalance& balance, const std::vector<Body>& bodies,
                    bool with_distance, const Directions& directions, std::vector<int>* first,
                    ContactRows* out) {
  const int nc = static_cast<int>(contacts.size());
  std::vector<std::pair<int, Vector3d>>& rows = out->directions;
  rows.clear();
  first->assign(nc, -1);
  for (int i = 0; i < nc; ++i) {
    const size_t before = rows.size();
    directions(contacts[i], [&](const Vector3d& u) { rows.push_back({i, u}); });
    if (rows.size() > before) (*first)[i] = static_cast<int>(before);
  }
  BuildContactRows(contacts, balance, bodies, with_distance, out);
}

}  // namespace

void PyramidRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                 const std::vector<Body>& bodies, std::vector<int>* first, ContactRows* out) {
  const auto pyramid = [](const LinearizedContact& c, const auto& add) {
    for (const Vector3d& dir : c.directions) add(dir);
  };
  RowsPerContact(contacts, balance, bodies, false, pyramid, first, out);
}

void AnitescuRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                  const std::vector<Body>& bodies, std::vector<int>* first, ContactRows* out) {
  // A frictionless contact has the one row n.
  const auto relaxed_cone = [](const LinearizedContact& c, const auto& add) {
    if (c.directions.empty()) add(c.geometry.normal);
    for (const Vector3d& dir : c.directions) add(c.geometry.normal + c.mu * dir);
  };
  RowsPerContact(contacts, balance, bodies, true, relaxed_cone, first, out);
}

DqcConeRows DqcCone(double mu, double ln, double lt, double lo, double sigma, double gt,
                    double go) {
  DqcConeRows rows;
  rows.t = mu * ln * gt + lt * sigma;
  rows.o = mu * ln * go + lo * sigma;
  rows.sigma = mu * mu * ln * ln - lt * lt - lo * lo;
  return rows;
}

DqcConeJacobian DqcConeDerivatives(double mu, double ln, double lt, double lo, double sigma,
                                   double gt, double go) {
  DqcConeJacobian d;
  d.t_ln = mu * gt;
  d.t_lt = sigma;
  d.t_sigma = lt;
  d.o_ln = mu * go;
  d.o_lo = sigma;
  d.o_sigma = lo;
  d.sigma_ln = 2.0 * mu * mu * ln;
  d.sigma_lt = -2.0 * lt;
  d.sigma_lo = -2.0 * lo;
  return d;
}

void AddPyramidSlack(const LinearizedContact& contact, int first, int row_offset, int slack,
                     int normal, std::vector<Eigen::Triplet<double>>* triplets) {
  for (size_t j = 0; j < contact.directions.size(); ++j) {
    triplets->emplace_back(row_offset + first + j, slack, 1.0);
    triplets->emplace_back(slack, row_offset + first + j, -1.0);
  }
  triplets->emplace_back(slack, normal, contact.mu);
}

}  // namespace ncpkit
