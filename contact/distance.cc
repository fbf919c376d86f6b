#include "contact/distance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "solvers/input_error.h"

namespace ncpkit {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;

bool IsPlane(ShapeKind k) { return k == ShapeKind::HalfSpace; }
bool IsRound(ShapeKind k) { return k == ShapeKind::Sphere; }
bool IsBox(ShapeKind k) { return k == ShapeKind::Box; }

void Add(const Vector3d& point_a, const Vector3d& normal, double distance,
         std::vector<ContactPoint>* out) {
  ContactPoint c;
  c.point_a = point_a;
  c.normal = normal;
  c.distance = distance;
  c.point_b = point_a + distance * normal;
  out->push_back(c);
}

// Half-space A (solid where the body z <= 0; outward normal R e_z) and sphere B.
void PlaneSphere(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                 std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const double height = n.dot(pb.position - pa.position);
  const double distance = height - b.size[0];
  if (distance >= threshold) return;
  Add(pb.position - height * n, n, distance, out);
}

// Half-space A and box B: every vertex of B closer than the threshold.
void PlaneBox(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
              std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const Vector3d half = 0.5 * b.size;
  for (int corner = 0; corner < 8; ++corner) {
    const Vector3d local((corner & 1) ? half[0] : -half[0], (corner & 2) ? half[1] : -half[1],
                         (corner & 4) ? half[2] : -half[2]);
    const Vector3d vertex = pb.position + pb.rotation * local;
    const double distance = n.dot(vertex - pa.position);
    if (distance < threshold) Add(vertex - distance * n, n, distance, out);
  }
}

// Half-space A and ellipsoid B (semi-axes a, b, c): the support point of B against the
// plane's normal n, p - R D^2 R^T n / sqrt(n^T R D^2 R^T n) with D = diag(a, b, c); exact.
void PlaneEllipsoid(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                    std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const Vector3d local = pb.rotation.transpose() * n;
  const Vector3d scaled = b.size.head<3>().cwiseAbs2().cwiseProduct(local);
  const double extent = std::sqrt(local.dot(scaled));
  const Vector3d lowest = pb.position - pb.rotation * scaled / extent;
  const double distance = n.dot(lowest - pa.position);
  if (distance < threshold) Add(lowest - distance * n, n, distance, out);
}

// Half-space A and cylinder B (radius r, length l along the body x axis), by support points:
// on each cap, the lowest point of its rim, exactly, and the rim at 45-degree steps from it,
// each kept when closer than the threshold. A cylinder lying on the plane gets the two ends of
// its contact line, a standing one eight points of its base (a tilt between the samples is
// felt at the exact lowest point only).
void PlaneCylinder(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                   std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const Vector3d axis = pb.rotation.col(0);
  const double radius = b.size[0], half = 0.5 * b.size[1];
  // Unit radial direction towards the plane (d0) and the one perpendicular to it (d1).
  Vector3d d0 = -(n - n.dot(axis) * axis);
  if (d0.norm() < 1e-9) d0 = pb.rotation.col(1);  // standing: any radial direction
  d0.normalize();
  const Vector3d d1 = axis.cross(d0);
  for (double side : {-1.0, 1.0}) {
    const Vector3d centre = pb.position + side * half * axis;
    for (int k = 0; k < 8; ++k) {
      const double angle = 0.25 * M_PI * k;
      const Vector3d rim = centre + radius * (std::cos(angle) * d0 + std::sin(angle) * d1);
      const double distance = n.dot(rim - pa.position);
      if (distance < threshold) Add(rim - distance * n, n, distance, out);
    }
  }
}

void SphereSphere(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                  double threshold, std::vector<ContactPoint>* out) {
  Vector3d d = pb.position - pa.position;
  const double length = d.norm();
  const double distance = length - a.size[0] - b.size[0];
  if (distance >= threshold) return;
  const Vector3d n = length > 0.0 ? Vector3d(d / length) : Vector3d::UnitZ();
  Add(pa.position + a.size[0] * n, n, distance, out);
}

// Box A and sphere B: the closest point of the box to the centre; a centre inside the box
// leaves through the nearest face.
void BoxSphere(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
               double threshold, std::vector<ContactPoint>* out) {
  const Vector3d half = 0.5 * a.size;
  const Vector3d local = pa.rotation.transpose() * (pb.position - pa.position);
  const Vector3d clamped = local.cwiseMax(-half).cwiseMin(half);
  Vector3d normal_local;
  Vector3d surface = clamped;
  double centre_distance;
  if ((local - clamped).squaredNorm() > 0.0) {
    const Vector3d d = local - clamped;
    centre_distance = d.norm();
    normal_local = d / centre_distance;
  } else {
    int axis = 0;
    double depth = half[0] - std::abs(local[0]);
    for (int k = 1; k < 3; ++k) {
      const double dk = half[k] - std::abs(local[k]);
      if (dk < depth) {
        depth = dk;
        axis = k;
      }
    }
    const double sign = local[axis] >= 0.0 ? 1.0 : -1.0;
    normal_local = sign * Vector3d::Unit(axis);
    surface[axis] = sign * half[axis];
    centre_distance = -depth;
  }
  const double distance = centre_distance - b.size[0];
  if (distance >= threshold) return;
  Add(pa.position + pa.rotation * surface, pa.rotation * normal_local, distance, out);
}

// A convex polygon of at most 16 points, on the stack (a face of 4 clipped by 4 lines has at
// most 8).
struct Polygon {
  Vector3d points[16];
  int size = 0;
  void Push(const Vector3d& p) {
    if (size < 16) points[size++] = p;
  }
};

// Clips the polygon to the half-plane (x - c) . u <= limit. Points within `tol` of the
// boundary count as inside, so faces flush with each other do not gain rounding-error points.
void Clip(const Vector3d& c, const Vector3d& u, double limit, double tol, Polygon* polygon) {
  Polygon kept;
  const int n = polygon->size;
  for (int i = 0; i < n; ++i) {
    const Vector3d& p = polygon->points[i];
    const Vector3d& q = polygon->points[(i + 1) % n];
    const double dp = (p - c).dot(u) - limit;
    const double dq = (q - c).dot(u) - limit;
    if (dp <= tol) kept.Push(dp > 0.0 ? Vector3d(p - dp * u) : p);
    if ((dp < -tol && dq > tol) || (dp > tol && dq < -tol)) {
      kept.Push(p + (dp / (dp - dq)) * (q - p));
    }
  }
  *polygon = kept;
}

// At most four points of a clipped polygon that keep its extent: the deepest, the farthest from
// it, and the two farthest on either side of the line through those (depth along n).
Polygon ReducePolygon(const Polygon& points, const Vector3d& n, double tol) {
  Polygon unique;
  for (int i = 0; i < points.size; ++i) {
    const Vector3d& p = points.points[i];
    bool seen = false;
    for (int k = 0; k < unique.size && !seen; ++k) seen = (p - unique.points[k]).norm() <= tol;
    if (!seen) unique.Push(p);
  }
  if (unique.size <= 4) return unique;
  const Vector3d* u = unique.points;
  int a = 0;
  for (int k = 1; k < unique.size; ++k) {
    if (u[k].dot(n) < u[a].dot(n)) a = k;
  }
  int b = a == 0 ? 1 : 0;
  for (int k = 0; k < unique.size; ++k) {
    if ((u[k] - u[a]).squaredNorm() > (u[b] - u[a]).squaredNorm()) b = k;
  }
  const Vector3d line = u[b] - u[a];
  int c = a, d = a;
  double most = 0.0, least = 0.0;
  for (int k = 0; k < unique.size; ++k) {
    const double side = line.cross(u[k] - u[a]).dot(n);
    if (side > most) most = side, c = k;
    if (side < least) least = side, d = k;
  }
  Polygon kept;
  kept.Push(u[a]);
  kept.Push(u[b]);
  if (c != a) kept.Push(u[c]);
  if (d != a) kept.Push(u[d]);
  return kept;
}

// Face contact: the reference box's face with outward normal n (towards the incident box)
// against the incident box's most opposed face. Points are reported from the reference side:
// point_a on the reference face, the normal n.
void FaceContact(const ShapePose& ref, const Vector3d& ref_half, int ref_axis, double ref_sign,
                 const ShapePose& inc, const Vector3d& inc_half, double threshold,
                 std::vector<ContactPoint>* out) {
  const Vector3d n = ref_sign * ref.rotation.col(ref_axis);
  int inc_axis = 0;
  double best = -1.0;
  for (int k = 0; k < 3; ++k) {
    const double c = std::abs(inc.rotation.col(k).dot(n));
    if (c > best) {
      best = c;
      inc_axis = k;
    }
  }
  const double inc_sign = inc.rotation.col(inc_axis).dot(n) > 0.0 ? -1.0 : 1.0;
  const int i1 = (inc_axis + 1) % 3, i2 = (inc_axis + 2) % 3;
  const Vector3d face_centre =
      inc.position + inc_sign * inc_half[inc_axis] * inc.rotation.col(inc_axis);
  const Vector3d e1 = inc_half[i1] * inc.rotation.col(i1);
  const Vector3d e2 = inc_half[i2] * inc.rotation.col(i2);
  Polygon polygon;
  polygon.Push(face_centre + e1 + e2);
  polygon.Push(face_centre - e1 + e2);
  polygon.Push(face_centre - e1 - e2);
  polygon.Push(face_centre + e1 - e2);
  const Vector3d ref_centre = ref.position + ref_half[ref_axis] * n;
  const double tol = 1e-9 * std::max(ref_half.maxCoeff(), inc_half.maxCoeff());
  for (int s = 1; s <= 2; ++s) {
    const int k = (ref_axis + s) % 3;
    const Vector3d u = ref.rotation.col(k);
    Clip(ref_centre, u, ref_half[k], tol, &polygon);
    Clip(ref_centre, -u, ref_half[k], tol, &polygon);
  }
  const Polygon reduced = ReducePolygon(polygon, n, 1e3 * tol);
  for (int k = 0; k < reduced.size; ++k) {
    const Vector3d& p = reduced.points[k];
    const double distance = (p - ref_centre).dot(n);
    if (distance < threshold) Add(p - distance * n, n, distance, out);
  }
}

// Closest points of segments p1 + s d1 and p2 + t d2, s, t in [-1, 1].
void ClosestOnSegments(const Vector3d& p1, const Vector3d& d1, const Vector3d& p2,
                       const Vector3d& d2, Vector3d* c1, Vector3d* c2) {
  const Vector3d r = p1 - p2;
  const double a = d1.dot(d1), e = d2.dot(d2), b = d1.dot(d2), c = d1.dot(r), f = d2.dot(r);
  const double denom = a * e - b * b;
  double s = denom > 1e-14 * a * e ? std::clamp((b * f - c * e) / denom, -1.0, 1.0) : 0.0;
  double t = std::clamp((b * s + f) / e, -1.0, 1.0);
  s = std::clamp((b * t - c) / a, -1.0, 1.0);
  *c1 = p1 + s * d1;
  *c2 = p2 + t * d2;
}

// The separating axis of two boxes with the largest separation (oriented from A to B).
struct SeparatingAxis {
  double separation = -std::numeric_limits<double>::infinity();
  int axis = -1;  // 0-2: A's faces, 3-5: B's faces, 6-14: edge pairs
  Vector3d normal = Vector3d::UnitZ();
  bool beyond_threshold = false;  // some edge axis separates them by more than the threshold
  // The best face axis (0-5), also when an edge axis is better, its normal and separation.
  int face_axis = -1;
  Vector3d face_normal = Vector3d::UnitZ();
  double face_separation = -std::numeric_limits<double>::infinity();
};

SeparatingAxis BestSeparatingAxis(const ShapePose& pa, const Vector3d& ha, const ShapePose& pb,
                                  const Vector3d& hb, double scale, double threshold) {
  // In A's frame: B's axes are the columns of R = Ra^T Rb, the centres' offset is t.
  const Matrix3d R = pa.rotation.transpose() * pb.rotation;
  const Matrix3d absolute = R.cwiseAbs();
  const Vector3d d = pb.position - pa.position;
  const Vector3d t = pa.rotation.transpose() * d;
  const Vector3d tb = pb.rotation.transpose() * d;
  SeparatingAxis best;
  const double face_bias = 1e-6 * scale;
  // Face axes of A, then of B: separation along the axis oriented from A to B.
  for (int k = 0; k < 6; ++k) {
    double sep;
    Vector3d l;
    bool forward;
    if (k < 3) {
      sep = std::abs(t[k]) - ha[k] - absolute.row(k).dot(hb);
      l = pa.rotation.col(k);
      forward = t[k] >= 0.0;
    } else {
      sep = std::abs(tb[k - 3]) - absolute.col(k - 3).dot(ha) - hb[k - 3];
      l = pb.rotation.col(k - 3);
      forward = tb[k - 3] >= 0.0;
    }
    // A later face axis must beat the earlier one clearly, so resting contact picks the same
    // reference face from step to step.
    if (sep > best.separation + (best.axis < 0 ? 0.0 : face_bias)) {
      best.separation = sep;
      best.axis = k;
      best.normal = forward ? l : Vector3d(-l);
    }
  }
  best.face_axis = best.axis;
  best.face_normal = best.normal;
  best.face_separation = best.separation;
  if (best.separation >= threshold) return best;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      // a_i x b_j in A's frame.
      Vector3d l = Vector3d::Unit(i).cross(R.col(j));
      const double length = l.norm();
      if (length < 1e-6) continue;  // parallel edges: a face axis covers them
      l /= length;
      const double along = t.dot(l);
      const double sep =
          std::abs(along) - l.cwiseAbs().dot(ha) - (R.transpose() * l).cwiseAbs().dot(hb);
      if (sep >= threshold) {  // separated farther than the threshold
        best.beyond_threshold = true;
        return best;
      }
      // Edge axes only when clearly better than every face axis (the relative and absolute
      // tolerances of Box2D's polygon collider): an edge lying on a face gives an edge axis
      // within rounding of the face's, and the face's clipped points are the contact there.
      if (sep > best.separation + 10.0 * face_bias &&
          sep > 0.95 * best.face_separation + 5e-3 * scale) {
        best.separation = sep;
        best.axis = 6 + 3 * i + j;
        const Vector3d world = pa.rotation * l;
        best.normal = along >= 0.0 ? world : Vector3d(-world);
      }
    }
  }
  return best;
}

// Edge-edge contact along the axis of edges i of A and j of B: the supporting edge of each box.
void EdgeContact(const ShapePose& pa, const Vector3d& ha, const ShapePose& pb, const Vector3d& hb,
                 const SeparatingAxis& axis, std::vector<ContactPoint>* out) {
  const int i = (axis.axis - 6) / 3, j = (axis.axis - 6) % 3;
  const Vector3d& n = axis.normal;
  Vector3d edge_a = pa.position, edge_b = pb.position;
  for (int k = 0; k < 3; ++k) {
    if (k != i) {
      edge_a += (pa.rotation.col(k).dot(n) > 0.0 ? ha[k] : -ha[k]) * pa.rotation.col(k);
    }
    if (k != j) {
      edge_b += (pb.rotation.col(k).dot(n) > 0.0 ? -hb[k] : hb[k]) * pb.rotation.col(k);
    }
  }
  Vector3d ca, cb;
  ClosestOnSegments(edge_a, ha[i] * pa.rotation.col(i), edge_b, hb[j] * pb.rotation.col(j), &ca,
                    &cb);
  Add(ca, n, axis.separation, out);
}

// The face contact of face axis `axis` (0-2 A's, 3-5 B's) with the normal from A to B.
void FaceAxisContact(const ShapePose& pa, const Vector3d& ha, const ShapePose& pb,
                     const Vector3d& hb, int axis, const Vector3d& normal, double threshold,
                     std::vector<ContactPoint>* out) {
  if (axis < 3) {
    const double sign = pa.rotation.col(axis).dot(normal) > 0.0 ? 1.0 : -1.0;
    FaceContact(pa, ha, axis, sign, pb, hb, threshold, out);
    return;
  }
  // B's face is the reference: its normal points towards A, so flip to A -> B.
  const size_t first = out->size();
  const int k = axis - 3;
  const double sign = pb.rotation.col(k).dot(-normal) > 0.0 ? 1.0 : -1.0;
  FaceContact(pb, hb, k, sign, pa, ha, threshold, out);
  for (size_t i = first; i < out->size(); ++i) {
    ContactPoint& c = (*out)[i];
    std::swap(c.point_a, c.point_b);
    c.normal = -c.normal;
  }
}

void BoxBox(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
            double threshold, std::vector<ContactPoint>* out) {
  const Vector3d ha = 0.5 * a.size, hb = 0.5 * b.size;
  const double scale = std::max(a.size.maxCoeff(), b.size.maxCoeff());
  const SeparatingAxis best = BestSeparatingAxis(pa, ha, pb, hb, scale, threshold);
  if (best.beyond_threshold || best.separation >= threshold) return;
  if (best.axis < 6) {
    FaceAxisContact(pa, ha, pb, hb, best.axis, best.normal, threshold, out);
    return;
  }
  EdgeContact(pa, ha, pb, hb, best, out);
  // Separated along an edge axis (speculative contact): the points of the best face axis too.
  // The edge point alone lets a corner that the step turns towards the other box through it;
  // the face's clipped points hold it. Their distances along the face normal are not below
  // zero (a point of B's face within A's face and below its plane would be inside A), so they
  // only ask the gap they measure to stay open. Overlapping boxes keep the edge point alone: a
  // face that is not the contact's would report its clip points on A's sides as deep.
  if (best.separation > 0.0 && best.face_axis >= 0) {
    FaceAxisContact(pa, ha, pb, hb, best.face_axis, best.face_normal, threshold, out);
  }
}

}  // namespace

bool ExplicitContactGeometry::Supports(ShapeKind a, ShapeKind b) const {
  const auto ok = [](ShapeKind k) { return IsPlane(k) || IsRound(k) || IsBox(k); };
  const auto against_plane = [](ShapeKind k) {
    return k == ShapeKind::Cylinder || k == ShapeKind::Ellipsoid;
  };
  if ((IsPlane(a) && against_plane(b)) || (IsPlane(b) && against_plane(a))) return true;
  return ok(a) && ok(b) && !(IsPlane(a) && IsPlane(b));
}

void ExplicitContactGeometry::FindContacts(const Shape& a, const ShapePose& pose_a, const Shape& b,
                                           const ShapePose& pose_b, double threshold,
                                           std::vector<ContactPoint>* contacts) const {
  if (!Supports(a.kind, b.kind)) {
    throw InputError("explicit contact between a " + a.Name() + " and a " + b.Name() +
                     " is not implemented");
  }
  // Canonical order: plane < box < sphere < cylinder, ellipsoid; a swapped pair is reported
  // flipped back.
  const auto rank = [](ShapeKind k) {
    return IsPlane(k) ? 0 : (IsBox(k) ? 1 : (IsRound(k) ? 2 : 3));
  };
  if (rank(a.kind) > rank(b.kind)) {
    // The points of (b, a), appended and then flipped in place.
    const size_t first = contacts->size();
    FindContacts(b, pose_b, a, pose_a, threshold, contacts);
    for (size_t k = first; k < contacts->size(); ++k) {
      ContactPoint& c = (*contacts)[k];
      std::swap(c.point_a, c.point_b);
      c.normal = -c.normal;
    }
    return;
  }
  if (IsPlane(a.kind)) {
    if (IsRound(b.kind)) PlaneSphere(pose_a, b, pose_b, threshold, contacts);
    if (IsBox(b.kind)) PlaneBox(pose_a, b, pose_b, threshold, contacts);
    if (b.kind == ShapeKind::Ellipsoid) PlaneEllipsoid(pose_a, b, pose_b, threshold, contacts);
    if (b.kind == ShapeKind::Cylinder) PlaneCylinder(pose_a, b, pose_b, threshold, contacts);
  } else if (IsBox(a.kind)) {
    if (IsRound(b.kind)) BoxSphere(a, pose_a, b, pose_b, threshold, contacts);
    if (IsBox(b.kind)) BoxBox(a, pose_a, b, pose_b, threshold, contacts);
  } else {
    SphereSphere(a, pose_a, b, pose_b, threshold, contacts);
  }
}

}  // namespace ncpkit
