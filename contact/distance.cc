#include "contact/distance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "contact/gjk.h"
#include "dynamics/shape_registry.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;

void Add(const Vector3d& point_a, const Vector3d& normal, double distance,
         std::vector<ContactPoint>* out, const FeatureId& feature = FeatureId()) {
  ContactPoint& c = out->emplace_back();
  c.point_a = point_a;
  c.normal = normal;
  c.distance = distance;
  c.point_b = point_a + distance * normal;
  c.feature = feature;
}

// The signs of v's components into one of FeatureId::signs' rows: v is a unit axis or a signed
// combination of the body's half extents (FeatureId).
void Signs(const Vector3d& v, signed char* out) {
  for (int k = 0; k < 3; ++k) out[k] = static_cast<signed char>((v[k] > 0.0) - (v[k] < 0.0));
}

// A face of A (outward normal and a point of its plane, in A's frame) and a point of B.
FeatureId FaceFeature(const Vector3d& face_normal, const Vector3d& face_point,
                      ContactFeature::Incident incident) {
  FeatureId f;
  f.kind = ContactFeature::Kind::kFace;
  f.incident = incident;
  f.face_body = 0;
  Signs(face_normal, f.signs[0]);
  Signs(face_point, f.signs[1]);
  return f;
}

FeatureId FaceVertex(const Vector3d& face_normal, const Vector3d& face_point,
                     const Vector3d& vertex) {
  FeatureId f = FaceFeature(face_normal, face_point, ContactFeature::Incident::kPoint);
  Signs(vertex, f.signs[2]);
  return f;
}

FeatureId FaceSphere(const Vector3d& face_normal, const Vector3d& face_point) {
  return FaceFeature(face_normal, face_point, ContactFeature::Incident::kSphere);
}

// Half-space A (solid where the body z <= 0; outward normal R e_z) and sphere B.
void PlaneSphere(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                 std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const double height = n.dot(pb.position - pa.position);
  const double distance = height - b.size[0];
  if (distance >= threshold) return;
  Add(pb.position - height * n, n, distance, out, FaceSphere(Vector3d::UnitZ(), Vector3d::Zero()));
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
    if (distance < threshold) {
      Add(vertex - distance * n, n, distance, out,
          FaceVertex(Vector3d::UnitZ(), Vector3d::Zero(), local));
    }
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
  FeatureId feature;
  if (length > 0.0) feature.kind = ContactFeature::Kind::kSpheres;
  Add(pa.position + a.size[0] * n, n, distance, out, feature);
}

// ---- Capsules: a segment of length l along the body x axis, radius r about it ----

// The segment's ends in the world: centre -+ (l/2) R e_x.
void CapsuleEnds(const Shape& capsule, const ShapePose& pose, Vector3d* first, Vector3d* last) {
  const Vector3d half = (0.5 * capsule.size[1]) * pose.rotation.col(0);
  *first = pose.position - half;
  *last = pose.position + half;
}

// The point of the segment [p, q] nearest x.
Vector3d NearestOnSegment(const Vector3d& p, const Vector3d& q, const Vector3d& x) {
  const Vector3d d = q - p;
  const double t = std::clamp((x - p).dot(d) / d.squaredNorm(), 0.0, 1.0);
  return p + t * d;
}

// The nearest points *x on [p1, q1] and *y on [p2, q2] (segments of positive length): the
// unconstrained minimizer clamped to [0, 1] in one parameter and the other then re-solved
// (Ericson, Real-Time Collision Detection, 2005, sec. 5.1.9). Parallel segments: the pair at the
// first one's start.
void NearestOnSegments(const Vector3d& p1, const Vector3d& q1, const Vector3d& p2,
                       const Vector3d& q2, Vector3d* x, Vector3d* y) {
  const Vector3d d1 = q1 - p1, d2 = q2 - p2, w = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), b = d1.dot(d2);
  const double c = d1.dot(w), f = d2.dot(w);
  const double denominator = a * e - b * b;
  double s =
      denominator > 1e-14 * a * e ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1.0) {
    t = 1.0;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  *x = p1 + s * d1;
  *y = p2 + t * d2;
}

// The contact between balls of radii ra about x (of A) and rb about y (of B), into *c if closer
// than the threshold (then true); `fallback` the normal where the centres coincide. AddBalls
// appends it.
bool Balls(const Vector3d& x, double ra, const Vector3d& y, double rb, const Vector3d& fallback,
           double threshold, ContactPoint* c) {
  const Vector3d d = y - x;
  const double length = d.norm();
  const double distance = length - ra - rb;
  if (distance >= threshold) return false;
  const Vector3d n = length > 1e-12 * (ra + rb) ? Vector3d(d / length) : fallback;
  c->point_a = x + ra * n;
  c->normal = n;
  c->distance = distance;
  c->point_b = c->point_a + distance * n;
  c->feature = FeatureId();
  return true;
}

void AddBalls(const Vector3d& x, double ra, const Vector3d& y, double rb, const Vector3d& fallback,
              double threshold, std::vector<ContactPoint>* out) {
  ContactPoint c;
  if (Balls(x, ra, y, rb, fallback, threshold, &c)) out->push_back(c);
}

// A unit vector square to the unit axis, for centres that coincide.
Vector3d Square(const Vector3d& axis) {
  const Vector3d other = std::abs(axis.x()) < 0.9 ? Vector3d::UnitX() : Vector3d::UnitY();
  return axis.cross(other).normalized();
}

// Half-space A and capsule B: each end's ball closer than the threshold (a capsule lying on the
// plane touches it along a line, held at both ends).
void PlaneCapsule(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                  std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  Vector3d ends[2];
  CapsuleEnds(b, pb, &ends[0], &ends[1]);
  for (const Vector3d& end : ends) {
    const double height = n.dot(end - pa.position);
    const double distance = height - b.size[0];
    if (distance < threshold) Add(end - height * n, n, distance, out);
  }
}

// Sphere A and capsule B: the ball about the segment's point nearest the centre.
void SphereCapsule(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                   double threshold, std::vector<ContactPoint>* out) {
  Vector3d first, last;
  CapsuleEnds(b, pb, &first, &last);
  const Vector3d nearest = NearestOnSegment(first, last, pa.position);
  AddBalls(pa.position, a.size[0], nearest, b.size[0], Square(pb.rotation.col(0)), threshold, out);
}

// Two capsules: the balls about the segments' nearest points. Where the segments lie side by
// side (both ends of the stretch of A's segment that B's projects onto are within the
// threshold) the contact is a line held at that stretch's two ends, and the nearest points are
// added only where they come closer than both ends (segments crossing at a small angle). As in
// BandPointContacts, points within 5 % of the shapes' size of one already taken repeat it and
// are left out: capsules crossing nearly square have a stretch of a millimetre or two whose ends
// lie beside the nearest points, and three such points make W all but singular (an eigenvalue
// of 3e-8 against 17 in a pile of mixed shapes, where no solver reached its tolerance).
void CapsuleCapsule(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                    double threshold, std::vector<ContactPoint>* out) {
  Vector3d a0, a1, b0, b1;
  CapsuleEnds(a, pa, &a0, &a1);
  CapsuleEnds(b, pb, &b0, &b1);
  const double ra = a.size[0], rb = b.size[0];
  const Vector3d axis = pa.rotation.col(0);
  const Vector3d across = axis.cross(pb.rotation.col(0));
  Vector3d fallback = across.norm() > 1e-9 ? Vector3d(across.normalized()) : Square(axis);
  if (fallback.dot(pb.position - pa.position) < 0.0) fallback = -fallback;
  const size_t first = out->size();
  Vector3d x, y;
  NearestOnSegments(a0, a1, b0, b1, &x, &y);
  AddBalls(x, ra, y, rb, fallback, threshold, out);
  if (out->size() == first) return;  // the nearest points are beyond the threshold
  const double nearest = out->back().distance;
  // B's segment projected on A's axis, as parameters from A's centre, clipped to A's segment.
  const double half = 0.5 * a.size[1], scale = half + ra + rb;
  const double apart = 0.05 * std::max(a.BoundingRadius(), b.BoundingRadius());
  const double s0 = axis.dot(b0 - pa.position), s1 = axis.dot(b1 - pa.position);
  const double low = std::max(-half, std::min(s0, s1)), high = std::min(half, std::max(s0, s1));
  if (!(high - low >= apart)) return;
  ContactPoint ends[2];
  for (int k = 0; k < 2; ++k) {
    const Vector3d end = pa.position + (k == 0 ? low : high) * axis;
    if (!Balls(end, ra, NearestOnSegment(b0, b1, end), rb, fallback, threshold, &ends[k])) return;
  }
  const bool nearer = nearest < std::min(ends[0].distance, ends[1].distance) - 1e-9 * scale;
  const Vector3d nearest_point = out->back().point_a;
  if (!nearer) out->pop_back();
  for (const ContactPoint& end : ends) {
    if (!nearer || (end.point_a - nearest_point).norm() >= apart) out->push_back(end);
  }
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
  // Nearest a face (one coordinate clamped, or the centre inside): that face and the sphere;
  // nearest an edge or a vertex the normal turns with the centre, not described.
  bool on_face = true;
  if ((local - clamped).squaredNorm() > 0.0) {
    const Vector3d d = local - clamped;
    on_face = (d.array() != 0.0).count() == 1;
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
  Add(pa.position + pa.rotation * surface, pa.rotation * normal_local, distance, out,
      on_face ? FaceSphere(normal_local, normal_local) : FeatureId());
}

// Where a point of an incident face clipped to a reference face lies (FaceContact): at an
// incident corner (0-3, in order round the face), where an incident edge (corner a to a + 1)
// crosses a side plane of the reference face (0-3: +x, -x, +y, -y of its frame), or where the
// line of two side planes (through a corner of the reference face, along its normal) crosses the
// incident face's plane. Made as ClipTag{} (kUnknown, all zero): without member initialisers,
// a Polygon's 40 slots are not written each time one is made.
struct ClipTag {
  enum Kind : signed char { kUnknown, kCorner, kEdgePlane, kCornerLine };
  Kind kind;
  signed char a, b;  // kCorner: a; kEdgePlane: edge a, plane b; kCornerLine: planes a, b
  // Bit k: the point lies within the clipping tolerance of side plane k besides its own planes
  // (a corner of a face flush with the reference face's side is kept, or moved onto the plane,
  // as a corner): the segment to a neighbour on the same plane then runs along it.
  signed char on_planes;

  int Edges() const {  // bit e: on incident edge e
    if (kind == kCorner) return (1 << a) | (1 << ((a + 3) % 4));
    return kind == kEdgePlane ? 1 << a : 0;
  }
  int Planes() const {  // bit k: on side plane k
    if (kind == kCornerLine) return (1 << a) | (1 << b) | on_planes;
    return (kind == kEdgePlane ? 1 << b : 0) | on_planes;
  }
  // The point where the segment from p to q (neighbours on the polygon) crosses side plane k.
  static ClipTag Crossing(const ClipTag& p, const ClipTag& q, int k) {
    ClipTag t{};
    const int edges = p.Edges() & q.Edges(), planes = p.Planes() & q.Planes();
    const auto lowest = [](int bits) {
      int i = 0;
      while (!(bits & (1 << i))) ++i;
      return static_cast<signed char>(i);
    };
    if (edges != 0) {
      t.kind = kEdgePlane;
      t.a = lowest(edges);
    } else if (planes != 0) {
      t.kind = kCornerLine;
      t.a = lowest(planes);
    }
    t.b = static_cast<signed char>(k);
    return t;
  }
};

// A convex polygon of at most 40 points, on the stack (a face of 4 clipped by 4 lines has at
// most 8; a cylinder's two rims are sampled at 32), with each point's ClipTag where it has one.
struct Polygon {
  static constexpr int kCapacity = 40;
  Vector3d points[kCapacity];
  ClipTag tags[kCapacity];
  int size = 0;
  Polygon() = default;
  // Copies the points in use only.
  Polygon(const Polygon& other) : size(other.size) {
    std::copy(other.points, other.points + size, points);
    std::copy(other.tags, other.tags + size, tags);
  }
  Polygon& operator=(const Polygon& other) {
    size = other.size;
    std::copy(other.points, other.points + size, points);
    std::copy(other.tags, other.tags + size, tags);
    return *this;
  }
  void Push(const Vector3d& p, ClipTag tag = ClipTag{}) {
    if (size < kCapacity) {
      tags[size] = tag;
      points[size++] = p;
    }
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

// Clip() of `from` against the half-space sign * x[axis] <= limit of a frame's coordinate axis,
// into `kept`; false, with `kept` untouched, where `from` lies inside by more than `tol`
// everywhere (a smaller face on a larger one) and is its own answer.
bool ClipAxis(int axis, double sign, double limit, double tol, const Polygon& from, Polygon* kept) {
  const int n = from.size;
  double depth[Polygon::kCapacity];
  bool inside = true;
  for (int i = 0; i < n; ++i) {
    depth[i] = sign * from.points[i][axis] - limit;
    inside = inside && depth[i] < -tol;
  }
  if (inside) return false;
  kept->size = 0;
  const int plane = 2 * axis + (sign > 0.0 ? 0 : 1);  // ClipTag's numbering
  for (int i = 0; i < n; ++i) {
    const int next = i + 1 < n ? i + 1 : 0;
    const Vector3d& p = from.points[i];
    const Vector3d& q = from.points[next];
    const double dp = depth[i];
    const double dq = depth[next];
    if (dp <= tol) {
      Vector3d x = p;
      if (dp > 0.0) x[axis] = sign * limit;
      ClipTag tag = from.tags[i];
      if (dp >= -tol) tag.on_planes = static_cast<signed char>(tag.on_planes | (1 << plane));
      kept->Push(x, tag);
    }
    if ((dp < -tol && dq > tol) || (dp > tol && dq < -tol)) {
      kept->Push(p + (dp / (dp - dq)) * (q - p),
                 ClipTag::Crossing(from.tags[i], from.tags[next], plane));
    }
  }
  return true;
}

// Whether d.norm() <= tol, to the bit, with a square root only near the boundary.
bool WithinDistance(const Vector3d& d, double tol) {
  const double squared = d.squaredNorm(), bound = tol * tol;
  if (bound >= 1e-290) {  // tol * tol has not underflowed
    if (squared < 0.999999 * bound) return true;
    if (squared > 1.000001 * bound) return false;
  }
  return std::sqrt(squared) <= tol;  // also false for NaN
}

// The points of a polygon but those within tol of one before them.
Polygon UniquePoints(const Polygon& points, double tol) {
  Polygon unique;
  for (int i = 0; i < points.size; ++i) {
    const Vector3d& p = points.points[i];
    bool seen = false;
    for (int k = 0; k < unique.size && !seen; ++k) seen = WithinDistance(p - unique.points[k], tol);
    if (!seen) unique.Push(p, points.tags[i]);
  }
  return unique;
}

// At most four points of a clipped polygon that keep its extent: the deepest, the farthest from
// it, and the two farthest on either side of the line through those (depth along n).
Polygon ReducePolygon(const Polygon& points, const Vector3d& n, double tol) {
  const Polygon unique = UniquePoints(points, tol);
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
  kept.Push(u[a], unique.tags[a]);
  kept.Push(u[b], unique.tags[b]);
  if (c != a) kept.Push(u[c], unique.tags[c]);
  if (d != a) kept.Push(u[d], unique.tags[d]);
  return kept;
}

// The points of a face-on-face patch of two boxes. Gaps are affine over a flat patch, so rows at
// all its vertices (two rectangles clip to at most eight) keep all of it out to first order; four
// of them do not: a vertex left out lies outside their hull, and a box turning about the hull's
// edge sinks it into the face below within a step (1.5e-5 m on a tower's box;
// docs/reliability.md). A vertex within `merge` of the line through its neighbours is left out:
// flush faces cross along nearly parallel edges, anywhere along them and inexactly, at points
// that add nothing to the patch. max_points 4 keeps the four of ReducePolygon.
Polygon PatchPoints(const Polygon& points, const Vector3d& n, double tol, int max_points,
                    double merge) {
  if (max_points <= 4) return ReducePolygon(points, n, tol);
  Polygon patch = UniquePoints(points, tol);
  for (int i = 0; patch.size > 3 && i < patch.size;) {
    const Vector3d& before = patch.points[(i + patch.size - 1) % patch.size];
    const Vector3d& after = patch.points[(i + 1) % patch.size];
    const Vector3d chord = after - before;
    const double off = chord.cross(patch.points[i] - before).norm();
    if (off < merge * chord.norm()) {
      std::copy(patch.points + i + 1, patch.points + patch.size, patch.points + i);
      std::copy(patch.tags + i + 1, patch.tags + patch.size, patch.tags + i);
      --patch.size;
      i = 0;  // its neighbours' lines changed
    } else {
      ++i;
    }
  }
  return patch.size <= max_points ? patch : ReducePolygon(patch, n, tol);
}

// The reference and incident faces of a box face contact in the boxes' own frames, for the
// ContactFeature of each clipped point: the reference face's axis and sign, its side planes
// (ClipTag's numbering) and the incident face's corners (in order) and plane.
struct ClippedFaces {
  Vector3d ref_half, inc_half;
  int ref_axis = 2, inc_axis = 2;
  double ref_sign = 1.0, inc_sign = 1.0;

  Vector3d Corner(int k) const {  // incident corner k: (+, +), (-, +), (-, -), (+, -)
    const int i1 = (inc_axis + 1) % 3, i2 = (inc_axis + 2) % 3;
    Vector3d c = inc_sign * inc_half[inc_axis] * Vector3d::Unit(inc_axis);
    c += (k == 0 || k == 3 ? 1.0 : -1.0) * inc_half[i1] * Vector3d::Unit(i1);
    c += (k < 2 ? 1.0 : -1.0) * inc_half[i2] * Vector3d::Unit(i2);
    return c;
  }
  int SideAxis(int plane) const { return (ref_axis + (plane < 2 ? 1 : 2)) % 3; }
  Vector3d SidePoint(int plane) const {
    const int axis = SideAxis(plane);
    return (plane % 2 == 0 ? 1.0 : -1.0) * ref_half[axis] * Vector3d::Unit(axis);
  }

  FeatureId Feature(const ClipTag& tag) const {
    const Vector3d ref_normal = ref_sign * Vector3d::Unit(ref_axis);
    FeatureId f = FaceFeature(ref_normal, ref_normal, ContactFeature::Incident::kPoint);
    switch (tag.kind) {
      case ClipTag::kCorner:
        Signs(Corner(tag.a), f.signs[2]);
        return f;
      case ClipTag::kEdgePlane:  // an incident edge (B's) crossing a side plane (A's)
        f.incident = ContactFeature::Incident::kLinePlane;
        f.line_body = 1;
        Signs(Corner(tag.a), f.signs[2]);
        Signs(Corner((tag.a + 1) % 4) - Corner(tag.a), f.signs[3]);
        Signs(SidePoint(tag.b), f.signs[4]);
        Signs(Vector3d::Unit(SideAxis(tag.b)), f.signs[5]);
        return f;
      case ClipTag::kCornerLine:  // a corner line of the reference face (A's) crossing B's face
        if (SideAxis(tag.a) == SideAxis(tag.b)) break;
        f.incident = ContactFeature::Incident::kLinePlane;
        f.line_body = 0;
        Signs(SidePoint(tag.a) + SidePoint(tag.b), f.signs[2]);
        Signs(Vector3d::Unit(ref_axis), f.signs[3]);
        Signs(inc_sign * Vector3d::Unit(inc_axis), f.signs[4]);
        Signs(Vector3d::Unit(inc_axis), f.signs[5]);
        return f;
      case ClipTag::kUnknown:
        break;
    }
    return FeatureId();
  }
};

// Face contact: the reference box's face with outward normal n (towards the incident box)
// against the incident box's most opposed face. Points are reported from the reference side:
// point_a on the reference face, the normal n.
void FaceContact(const ShapePose& ref, const Vector3d& ref_half, int ref_axis, double ref_sign,
                 const ShapePose& inc, const Vector3d& inc_half, double threshold, int max_points,
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
  // The incident face in the reference face's frame (x, y along its edges from its centre, z
  // along n), where clipping to the face is against |x| <= h1, |y| <= h2.
  const Vector3d ref_centre = ref.position + ref_half[ref_axis] * n;
  const int k1 = (ref_axis + 1) % 3, k2 = (ref_axis + 2) % 3;
  const Vector3d u1 = ref.rotation.col(k1), u2 = ref.rotation.col(k2);
  const auto in_frame = [&](const Vector3d& x) {
    const Vector3d d = x - ref_centre;
    return Vector3d(d.dot(u1), d.dot(u2), d.dot(n));
  };
  // Clipped back and forth between two polygons, not copied back after each side.
  Polygon buffers[2];
  Polygon* polygon = &buffers[0];
  Polygon* spare = &buffers[1];
  const Vector3d corners[4] = {face_centre + e1 + e2, face_centre - e1 + e2, face_centre - e1 - e2,
                               face_centre + e1 - e2};
  for (int k = 0; k < 4; ++k) {
    ClipTag corner{};
    corner.kind = ClipTag::kCorner;
    corner.a = static_cast<signed char>(k);
    polygon->Push(in_frame(corners[k]), corner);
  }
  const double tol = 1e-9 * std::max(ref_half.maxCoeff(), inc_half.maxCoeff());
  const auto clip = [&](int axis, double sign, double limit) {
    if (ClipAxis(axis, sign, limit, tol, *polygon, spare)) std::swap(polygon, spare);
  };
  clip(0, 1.0, ref_half[k1]);
  clip(0, -1.0, ref_half[k1]);
  clip(1, 1.0, ref_half[k2]);
  clip(1, -1.0, ref_half[k2]);
  const Polygon reduced = PatchPoints(*polygon, Vector3d::UnitZ(), 1e3 * tol, max_points,
                                      1e-3 * std::min(ref_half.minCoeff(), inc_half.minCoeff()));
  const ClippedFaces faces{ref_half, inc_half, ref_axis, inc_axis, ref_sign, inc_sign};
  for (int k = 0; k < reduced.size; ++k) {
    const Vector3d& p = reduced.points[k];
    const double distance = p.z();
    if (distance < threshold) {
      Add(ref_centre + p.x() * u1 + p.y() * u2, n, distance, out, faces.Feature(reduced.tags[k]));
    }
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
  // Bounds on the edge axes' separations, so that an axis that could neither separate the boxes
  // nor pass the tests below is not formed (a box resting face on face on another skips most).
  // The axis l = a_i x b_j is perpendicular to a_i and to b_j: |t . l| is at most t's length
  // across a_i (and tb's across b_j), and A's extent along l at least its smaller half side
  // across a_i (B's likewise). The margin is far above rounding, also for the shortest l.
  // First one bound for all nine, |t| less both boxes' smallest half sides.
  const auto passes = [&](double bound) {
    return !(bound < threshold) || (bound > best.separation + 10.0 * face_bias &&
                                    bound > 0.95 * best.face_separation + 5e-3 * scale);
  };
  const double margin = 1e-7 * (d.norm() + scale);
  if (!passes(d.norm() - ha.minCoeff() - hb.minCoeff() + margin)) return best;
  double across_a[3], across_b[3], half_a[3], half_b[3];
  for (int k = 0; k < 3; ++k) {
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    across_a[k] = std::sqrt(t[k1] * t[k1] + t[k2] * t[k2]);
    across_b[k] = std::sqrt(tb[k1] * tb[k1] + tb[k2] * tb[k2]);
    half_a[k] = std::min(ha[k1], ha[k2]);
    half_b[k] = std::min(hb[k1], hb[k2]);
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (!passes(std::min(across_a[i], across_b[j]) - half_a[i] - half_b[j] + margin)) continue;
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
  // The supporting edges' centres; an edge whose segment comes closest at an end keeps that end.
  Vector3d local_a = Vector3d::Zero(), local_b = Vector3d::Zero();
  for (int k = 0; k < 3; ++k) {
    if (k != i) local_a[k] = pa.rotation.col(k).dot(n) > 0.0 ? ha[k] : -ha[k];
    if (k != j) local_b[k] = pb.rotation.col(k).dot(n) > 0.0 ? -hb[k] : hb[k];
  }
  const Vector3d edge_a = pa.position + pa.rotation * local_a;
  const Vector3d edge_b = pb.position + pb.rotation * local_b;
  const Vector3d da = ha[i] * pa.rotation.col(i), db = hb[j] * pb.rotation.col(j);
  Vector3d ca, cb;
  ClosestOnSegments(edge_a, da, edge_b, db, &ca, &cb);
  // The point is where the segments come closest: inside both edges, the lines' closest point;
  // at an end of A's edge (speculative contact of separated boxes, whose edges' lines cross
  // beside them), that end; at an end of B's edge alone, the foot of that end on A's line. The
  // feature keeps a clamped edge's end as its point (a vertex: its component along the edge is
  // not zero), which tells EvaluateContactFeature which of the three it is.
  const double margin = 1.0 - 1e-9;
  const double along_a = (ca - edge_a).dot(da), along_b = (cb - edge_b).dot(db);
  if (std::abs(along_a) >= margin * da.squaredNorm()) local_a[i] = along_a > 0.0 ? ha[i] : -ha[i];
  if (std::abs(along_b) >= margin * db.squaredNorm()) local_b[j] = along_b > 0.0 ? hb[j] : -hb[j];
  FeatureId feature;
  feature.kind = ContactFeature::Kind::kEdges;
  Signs(local_a, feature.signs[2]);
  Signs(Vector3d::Unit(i), feature.signs[3]);
  Signs(local_b, feature.signs[4]);
  Signs(Vector3d::Unit(j), feature.signs[5]);
  feature.sign = n.dot(pa.rotation.col(i).cross(pb.rotation.col(j))) > 0.0 ? 1 : -1;
  Add(ca, n, axis.separation, out, feature);
}

// The face contact of face axis `axis` (0-2 A's, 3-5 B's) with the normal from A to B.
void FaceAxisContact(const ShapePose& pa, const Vector3d& ha, const ShapePose& pb,
                     const Vector3d& hb, int axis, const Vector3d& normal, double threshold,
                     int max_points, std::vector<ContactPoint>* out) {
  if (axis < 3) {
    const double sign = pa.rotation.col(axis).dot(normal) > 0.0 ? 1.0 : -1.0;
    FaceContact(pa, ha, axis, sign, pb, hb, threshold, max_points, out);
    return;
  }
  // B's face is the reference: its normal points towards A, so flip to A -> B.
  const size_t first = out->size();
  const int k = axis - 3;
  const double sign = pb.rotation.col(k).dot(-normal) > 0.0 ? 1.0 : -1.0;
  FaceContact(pb, hb, k, sign, pa, ha, threshold, max_points, out);
  for (size_t i = first; i < out->size(); ++i) {
    ContactPoint& c = (*out)[i];
    std::swap(c.point_a, c.point_b);
    c.normal = -c.normal;
    c.feature.Flip();
  }
}

// Box against box, keeping at most max_points of a face-on-face patch (PatchPoints).
void BoxBoxPatch(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                 double threshold, int max_points, std::vector<ContactPoint>* out) {
  const Vector3d ha = 0.5 * a.size, hb = 0.5 * b.size;
  const double scale = std::max(a.size.maxCoeff(), b.size.maxCoeff());
  const SeparatingAxis best = BestSeparatingAxis(pa, ha, pb, hb, scale, threshold);
  // No axis at all: a pose or size that is not finite compares false with everything.
  if (best.axis < 0 || best.beyond_threshold || best.separation >= threshold) return;
  if (best.axis < 6) {
    FaceAxisContact(pa, ha, pb, hb, best.axis, best.normal, threshold, max_points, out);
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
    FaceAxisContact(pa, ha, pb, hb, best.face_axis, best.face_normal, threshold, max_points, out);
  }
}

void BoxBox(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
            double threshold, std::vector<ContactPoint>* out) {
  BoxBoxPatch(a, pa, b, pb, threshold, 4, out);
}

// ---- Support-point contact of the pairs without a closed form (cylinders and ellipsoids against
// boxes, spheres, cylinders and ellipsoids). ----

Vector3d WorldSupport(const Shape& shape, const ShapePose& pose, const Vector3d& d) {
  return pose.position + pose.rotation * shape.SupportPoint(pose.rotation.transpose() * d, 0.0);
}

// s(d) = min over B of d.y - max over A of d.x for unit d (from A to B): a lower bound of the
// signed distance for every d, equal to it at the maximizing d (separating-axis theorem).
double SupportSeparation(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                         const Vector3d& d) {
  return d.dot(WorldSupport(b, pb, -d)) - d.dot(WorldSupport(a, pa, d));
}

// Orders points of a plane polygon (normal n) by angle about their centroid.
void OrderPolygon(const Vector3d& n, Polygon* polygon) {
  if (polygon->size < 3) return;
  Vector3d centre = Vector3d::Zero();
  for (int k = 0; k < polygon->size; ++k) centre += polygon->points[k];
  centre /= polygon->size;
  const Vector3d u = n.unitOrthogonal(), v = n.cross(u);
  std::sort(polygon->points, polygon->points + polygon->size,
            [&](const Vector3d& x, const Vector3d& y) {
              return std::atan2((x - centre).dot(v), (x - centre).dot(u)) <
                     std::atan2((y - centre).dot(v), (y - centre).dot(u));
            });
}

// What a shape shows in direction n (world, unit).
struct Feature {
  // Surface points that may come within the threshold (within `band` of the support plane),
  // from the kind's candidates (ShapeType::candidates): a box's vertices; a cylinder's extreme
  // rim point on each cap, and the rest of a cap's rim (sampled every 22.5 degrees) where that
  // cap lies flat against n; otherwise the support point.
  Polygon points;
  // The candidates within `flat` of the support plane, whatever their number: what touches the
  // plane (a vertex, an edge or a capsule's side line, a face).
  Polygon support;
  // A flat face against n, when the kind has faces and one lies against n (a box face, a
  // cylinder cap): `support` ordered, when it has at least three points; else empty.
  Polygon face;
};

Feature SupportFeature(const Shape& shape, const ShapePose& pose, const Vector3d& n, double band,
                       double flat) {
  const ShapeType& type = *FindShapeType(shape.kind);
  Polygon candidates;
  if (type.candidates != nullptr) {
    Vector3d local_points[kMaxSupportCandidates];
    const int count = type.candidates(shape, pose.rotation.transpose() * n, flat, local_points);
    for (int k = 0; k < count; ++k)
      candidates.Push(pose.position + pose.rotation * local_points[k]);
  } else {
    candidates.Push(WorldSupport(shape, pose, n));
  }
  double top = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < candidates.size; ++k) top = std::max(top, candidates.points[k].dot(n));
  Feature feature;
  for (int k = 0; k < candidates.size; ++k) {
    const double below = top - candidates.points[k].dot(n);
    if (below <= band) feature.points.Push(candidates.points[k]);
    if (below <= flat) feature.support.Push(candidates.points[k]);
  }
  if (type.has_faces && feature.support.size >= 3) {
    feature.face = feature.support;
    OrderPolygon(n, &feature.face);
  }
  return feature;
}

// The separating direction from A to B maximizing s(d), and s there (the signed distance), by
// GJK/EPA (contact/gjk.h). Where flat features meet (a face on a face, a cylinder lying on a face
// or beside another) s has a kink or ridge at its maximum, and GJK's normal holds there to about
// 1e-10 rad; the directions those contacts have exactly are tried too and taken when one does at
// least as well to within 1e-12 of the shapes' size: the shapes' own axes (a box's face normals,
// a cylinder's axis, a polyhedron's face facing the other body), a cylinder's radial direction
// towards the other body, and the crossings of those axes. So a face resting on a face keeps its
// exact normal from step to step. Returns false (and s in *separation) when the shapes are at least
// the threshold apart.
bool SeparatingDirection(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                         double threshold, Vector3d* direction, double* separation) {
  const ConvexSeparation found = GetSeparation(a, pa, b, pb, threshold);
  *direction = found.normal;
  *separation = found.distance;
  if (found.beyond || found.distance >= threshold) return false;
  constexpr int kMaxAxes = 10;
  Vector3d axes[kMaxAxes];
  int num_axes = 0;
  for (const auto& [shape, pose] : {std::make_pair(&a, &pa), std::make_pair(&b, &pb)}) {
    const ShapeType& type = *FindShapeType(shape->kind);
    for (const Vector3d& normal : type.face_normals) {
      if (num_axes < kMaxAxes - 2) axes[num_axes++] = pose->rotation * normal;
    }
    // A kind whose faces are the shape's own (a polyhedron): its face facing the other body.
    if (type.facing_normal != nullptr) {
      const Vector3d towards = shape == &a ? found.normal : Vector3d(-found.normal);
      axes[num_axes++] =
          pose->rotation * type.facing_normal(*shape, pose->rotation.transpose() * towards);
    }
  }
  // GJK's distance |v| is an upper bound of the true one, s at its normal a lower bound: a
  // candidate doing at least as well as the lower bound is as good a separating direction.
  const double slack = 1e-12 * std::max(a.BoundingRadius(), b.BoundingRadius());
  double best = std::min(found.distance, SupportSeparation(a, pa, b, pb, found.normal)) - slack;
  const auto consider = [&](const Vector3d& d) {
    const double length = d.norm();
    if (!(length > 1e-12)) return;
    const Vector3d unit = d.dot(found.normal) >= 0.0 ? Vector3d(d / length) : Vector3d(-d / length);
    const double s = SupportSeparation(a, pa, b, pb, unit);
    if (s >= best) {
      best = s;
      *direction = unit;
      *separation = s;
    }
  };
  const Vector3d between = pb.position - pa.position;
  for (int i = 0; i < num_axes; ++i) {
    consider(axes[i]);
    consider(between - between.dot(axes[i]) * axes[i]);
    for (int j = i + 1; j < num_axes; ++j) consider(axes[i].cross(axes[j]));
  }
  return *separation < threshold;
}

// Clips the polygon `points` to the prism over the convex polygon `reference` (ordered) along n.
void ClipToPrism(const Polygon& reference, const Vector3d& n, double tol, Polygon* points) {
  Vector3d centre = Vector3d::Zero();
  for (int k = 0; k < reference.size; ++k) centre += reference.points[k];
  centre /= reference.size;
  for (int k = 0; k < reference.size && points->size > 0; ++k) {
    const Vector3d& p = reference.points[k];
    const Vector3d& q = reference.points[(k + 1) % reference.size];
    Vector3d side = (q - p).cross(n);
    const double length = side.norm();
    if (!(length > 0.0)) continue;
    side /= length;
    if (side.dot(centre - p) > 0.0) side = -side;
    if (points->size == 1) {
      if ((points->points[0] - p).dot(side) > tol) points->size = 0;
    } else if (points->size == 2) {
      // A segment: cut at the side plane (a polygon's closing edge would double the cut).
      Vector3d& x = points->points[0];
      Vector3d& y = points->points[1];
      const double dx = (x - p).dot(side), dy = (y - p).dot(side);
      if (dx > tol && dy > tol) {
        points->size = 0;
      } else if (dx > tol) {
        x = x + (dx / (dx - dy)) * (y - x);
      } else if (dy > tol) {
        y = y + (dy / (dy - dx)) * (x - y);
      }
    } else {
      Clip(p, side, 0.0, tol, points);
    }
  }
}

// Facing features with a flat face: the larger face is the reference and the other's points
// are clipped to its prism; face on face keeps at most four points that keep the patch's
// extent. top_a and bottom_b: A's support plane along n and B's along -n.
void FaceContacts(const Feature& feature_a, const Feature& feature_b, const Vector3d& n,
                  double top_a, double bottom_b, double threshold, double scale,
                  std::vector<ContactPoint>* out) {
  const bool reference_a = feature_a.face.size >= feature_b.face.size;
  Polygon incident = reference_a ? feature_b.points : feature_a.points;
  ClipToPrism(reference_a ? feature_a.face : feature_b.face, n, 1e-9 * scale, &incident);
  Polygon kept = incident;
  if ((reference_a ? feature_b.face.size : feature_a.face.size) >= 3) {
    kept = ReducePolygon(incident, reference_a ? Vector3d(n) : Vector3d(-n), 1e-6 * scale);
  }
  for (int k = 0; k < kept.size; ++k) {
    const Vector3d& x = kept.points[k];
    if (reference_a) {
      const double distance = x.dot(n) - top_a;
      if (distance < threshold) Add(x - distance * n, n, distance, out);
    } else {
      const double distance = bottom_b - x.dot(n);
      if (distance < threshold) Add(x, n, distance, out);
    }
  }
}

// Two parallel segments (cylinders side by side): the ends of B's segment's overlap with A's,
// each with its own gap to B's line. Nothing when they are not parallel.
void ParallelSegmentContacts(const Polygon& fa, const Polygon& fb, const Vector3d& n,
                             double threshold, std::vector<ContactPoint>* out) {
  const Vector3d da = fa.points[1] - fa.points[0], db = fb.points[1] - fb.points[0];
  if (da.cross(db).norm() > 1e-6 * da.norm() * db.norm()) return;
  const double length2 = da.squaredNorm();
  double t0 = (fb.points[0] - fa.points[0]).dot(da) / length2;
  double t1 = (fb.points[1] - fa.points[0]).dot(da) / length2;
  if (t0 > t1) std::swap(t0, t1);
  t0 = std::max(t0, 0.0);
  t1 = std::min(t1, 1.0);
  for (const double t : {t0, t1}) {
    if (t1 < t0) break;
    const Vector3d x = fa.points[0] + t * da;
    const Vector3d y = fb.points[0] + ((x - fb.points[0]).dot(db) / db.squaredNorm()) * db;
    const double distance = n.dot(y - x);
    if (distance < threshold) Add(x, n, distance, out);
    if (t1 - t0 <= 1e-9) break;  // one point where they only touch
  }
}

// A feature's longest chord from its first point: its middle and half its extent.
void Chord(const Polygon& f, Vector3d* middle, Vector3d* half) {
  Vector3d hi = f.points[0];
  double spread = 0.0;
  for (int k = 1; k < f.size; ++k) {
    const double d = (f.points[k] - f.points[0]).norm();
    if (d > spread) spread = d, hi = f.points[k];
  }
  *middle = 0.5 * (f.points[0] + hi);
  *half = 0.5 * (hi - f.points[0]);
}

// One point: a curved body's support point, else the closest points of the features' longest
// chords (edge against edge, rim against edge). The features are what touches each support plane
// (Feature::support), not the points within the threshold's band: a box tilted over a capsule
// lying flat has several corners within the band, and a chord through them would put the point
// at either end of the capsule, away from where the box's lowest corner meets it.
void SinglePointContact(const Polygon& fa, const Polygon& fb, const Vector3d& n, double separation,
                        std::vector<ContactPoint>* out) {
  Vector3d point_a;
  if (fb.size == 1) {
    point_a = fb.points[0] - separation * n;
  } else if (fa.size == 1) {
    point_a = fa.points[0];
  } else {
    Vector3d ma, ha, mb, hb, cb;
    Chord(fa, &ma, &ha);
    Chord(fb, &mb, &hb);
    ClosestOnSegments(ma, ha, mb, hb, &point_a, &cb);
  }
  Add(point_a, n, separation, out);
}

// The other points within the threshold's band of a pair whose contact is one point (a vertex,
// an edge or a curved side nearest), each by its own distance to the other shape (GJK from the
// point): a box's other corners over a cylinder, a cylinder's other rim, a rock's other
// vertices. The one point constrains the pair only where it is; a body that the step turns about
// it (a cylinder tipping over a rim, a box rocking on a corner, a rock spinning) brings these in,
// and without their own constraints they enter the other shape within the step. Each is a point
// of one surface at its true distance from the other, apart or inside, so it asks no more than
// that point's own non-penetration. Points within 5 % of the shapes' size of the first point
// repeat it and are left out.
void BandPointContacts(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                       const Polygon& band_a, const Polygon& band_b, double threshold, double scale,
                       std::vector<ContactPoint>* out) {
  Shape point;  // a ball of radius zero
  point.kind = ShapeKind::Sphere;
  point.size = Vector3d::Zero();
  const Vector3d first_a = out->back().point_a, first_b = out->back().point_b;
  const double apart = 0.05 * scale;
  for (int k = 0; k < band_a.size; ++k) {
    const Vector3d& x = band_a.points[k];
    if ((x - first_a).norm() < apart) continue;
    const ConvexSeparation found = GetSeparation(point, ShapePose{x}, b, pb, threshold);
    if (!found.beyond && found.distance < threshold) Add(x, found.normal, found.distance, out);
  }
  for (int k = 0; k < band_b.size; ++k) {
    const Vector3d& y = band_b.points[k];
    if ((y - first_b).norm() < apart) continue;
    const ConvexSeparation found = GetSeparation(a, pa, point, ShapePose{y}, threshold);
    if (!found.beyond && found.distance < threshold) {
      Add(y - found.distance * found.normal, found.normal, found.distance, out);
    }
  }
}

// Support-point contact: the direction and signed distance from SeparatingDirection, then the
// facing features (SupportFeature, band: what may come within the threshold). A polygon feature
// (a box face, a cylinder cap) is the reference: the other feature is clipped to its prism and
// each point kept measures its gap to the reference plane (at most four points that keep the
// patch's extent). Two parallel segments (cylinders side by side) give the ends of their
// overlap; anything else one point, the closest points of the two touching features, and the
// band's other points by their own distances (BandPointContacts).

void SupportContact(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                    double threshold, std::vector<ContactPoint>* out) {
  Vector3d n;
  double separation;
  if (!SeparatingDirection(a, pa, b, pb, threshold, &n, &separation)) return;
  const double scale = std::max(a.BoundingRadius(), b.BoundingRadius());
  const double band = std::max(threshold - separation, 0.0) + 1e-9 * scale;
  const double flat = 1e-6 * scale;
  const Feature feature_a = SupportFeature(a, pa, n, band, flat);
  const Feature feature_b = SupportFeature(b, pb, -n, band, flat);
  const size_t first = out->size();
  if (feature_a.face.size >= 3 || feature_b.face.size >= 3) {
    const double top_a = WorldSupport(a, pa, n).dot(n);
    const double bottom_b = WorldSupport(b, pb, -n).dot(n);
    FaceContacts(feature_a, feature_b, n, top_a, bottom_b, threshold, scale, out);
  } else if (feature_a.points.size == 2 && feature_b.points.size == 2) {
    ParallelSegmentContacts(feature_a.points, feature_b.points, n, threshold, out);
  }
  if (out->size() == first) {
    SinglePointContact(feature_a.support, feature_b.support, n, separation, out);
    BandPointContacts(a, pa, b, pb, feature_a.points, feature_b.points, threshold, scale, out);
  }
}

// Half-space A and convex polyhedron B: the hull's vertices closer than the threshold (a rock
// tumbling on the ground turns down other vertices than those of the face facing it). Where more
// than four lie flat on the plane together (within 1e-6 of the size of the deepest: a face of
// many vertices lying on it), four of them that keep the patch's extent (ReducePolygon): as many
// redundant contacts would make the solvers hold their tolerance less well.
void PlanePolyhedron(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                     std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const double flat = 1e-6 * b.polyhedron->radius;
  double deepest = std::numeric_limits<double>::infinity();
  for (const Vector3d& local : b.polyhedron->vertices) {
    deepest = std::min(deepest, n.dot(pb.position + pb.rotation * local - pa.position));
  }
  Polygon face;
  int on_face = 0;
  for (const Vector3d& local : b.polyhedron->vertices) {
    const Vector3d vertex = pb.position + pb.rotation * local;
    const double distance = n.dot(vertex - pa.position);
    if (distance >= threshold) continue;
    if (distance <= deepest + flat) {
      face.Push(vertex);
      ++on_face;
    } else {
      Add(vertex - distance * n, n, distance, out);
    }
  }
  if (on_face > 4) face = ReducePolygon(face, n, 1e-9 * b.polyhedron->radius);
  for (int k = 0; k < face.size; ++k) {
    const double distance = n.dot(face.points[k] - pa.position);
    Add(face.points[k] - distance * n, n, distance, out);
  }
}

// ---- The collision table ----

using PairContacts = void (*)(const Shape& a, const ShapePose& pa, const Shape& b,
                              const ShapePose& pb, double threshold,
                              std::vector<ContactPoint>* out);

// The half-space functions take no shape for the plane; these give them the table's signature.
template <void (*kPlaneFunction)(const ShapePose&, const Shape&, const ShapePose&, double,
                                 std::vector<ContactPoint>*)>
void WithPlane(const Shape& /*plane*/, const ShapePose& pa, const Shape& b, const ShapePose& pb,
               double threshold, std::vector<ContactPoint>* out) {
  kPlaneFunction(pa, b, pb, threshold, out);
}

// One cell per ordered pair of kinds: the function and whether it takes the pair swapped (its
// points are then flipped back: A and B exchanged, the normal reversed).
struct PairEntry {
  PairContacts contacts = nullptr;  // nullptr: not supported (two half-spaces)
  bool swapped = false;
};

constexpr int kNumShapeKinds = 7;  // the built-in kinds

int KindIndex(ShapeKind kind) { return static_cast<int>(kind); }

// Rows and columns in ShapeKind's order: half-space, box, sphere, ellipsoid, cylinder, capsule,
// polyhedron. Closed forms where there is one; support-point contact (SupportContact) for the
// rest.
struct CollisionTable {
  PairEntry cells[kNumShapeKinds][kNumShapeKinds];

  CollisionTable() {
    using K = ShapeKind;
    Set(K::HalfSpace, K::Box, &WithPlane<PlaneBox>);
    Set(K::HalfSpace, K::Sphere, &WithPlane<PlaneSphere>);
    Set(K::HalfSpace, K::Ellipsoid, &WithPlane<PlaneEllipsoid>);
    Set(K::HalfSpace, K::Cylinder, &WithPlane<PlaneCylinder>);
    Set(K::Box, K::Box, &BoxBox);
    Set(K::Box, K::Sphere, &BoxSphere);
    Set(K::Sphere, K::Sphere, &SphereSphere);
    Set(K::HalfSpace, K::Capsule, &WithPlane<PlaneCapsule>);
    Set(K::Sphere, K::Capsule, &SphereCapsule);
    Set(K::Capsule, K::Capsule, &CapsuleCapsule);
    Set(K::Box, K::Capsule, &SupportContact);
    Set(K::HalfSpace, K::Polyhedron, &WithPlane<PlanePolyhedron>);
    for (const K a : {K::Box, K::Sphere, K::Ellipsoid, K::Cylinder, K::Capsule, K::Polyhedron}) {
      Set(a, K::Polyhedron, &SupportContact);
    }
    for (const K a : {K::Box, K::Sphere, K::Ellipsoid, K::Cylinder, K::Capsule}) {
      for (const K b : {K::Ellipsoid, K::Cylinder}) Set(a, b, &SupportContact);
    }
  }

  // Sets (a, b) and, for two kinds, (b, a) swapped; a pair of curved kinds (ellipsoid,
  // cylinder) is taken in the order given, both ways.
  void Set(ShapeKind a, ShapeKind b, PairContacts contacts) {
    cells[KindIndex(a)][KindIndex(b)] = {contacts, false};
    const bool curved_pair = (a == ShapeKind::Ellipsoid || a == ShapeKind::Cylinder) &&
                             (b == ShapeKind::Ellipsoid || b == ShapeKind::Cylinder);
    if (a != b && !curved_pair) cells[KindIndex(b)][KindIndex(a)] = {contacts, true};
  }
};

// A half-space A and a shape B of any kind: B's candidate points along -n (ShapeType), each
// closer than the threshold, or its support point alone.
void PlaneSupport(const ShapePose& pa, const Shape& b, const ShapePose& pb, double threshold,
                  std::vector<ContactPoint>* out) {
  const Vector3d n = pa.rotation.col(2);
  const ShapeType& type = *FindShapeType(b.kind);
  Vector3d local_points[kMaxSupportCandidates];
  const Vector3d down = pb.rotation.transpose() * -n;
  int count = 1;
  if (type.candidates != nullptr) {
    count = type.candidates(b, down, 1e-6 * b.BoundingRadius(), local_points);
  } else {
    local_points[0] = b.SupportPoint(down, 0.0);
  }
  for (int k = 0; k < count; ++k) {
    const Vector3d x = pb.position + pb.rotation * local_points[k];
    const double distance = n.dot(x - pa.position);
    if (distance < threshold) Add(x - distance * n, n, distance, out);
  }
}

// A registered kind (shape_registry.h) has no closed form with any other: support-point contact
// against every shape, the candidates against a half-space.
PairEntry GenericEntry(ShapeKind a, ShapeKind b) {
  if (FindShapeType(a) == nullptr || FindShapeType(b) == nullptr) return {};
  const bool plane_a = a == ShapeKind::HalfSpace, plane_b = b == ShapeKind::HalfSpace;
  if (plane_a && plane_b) return {};
  if (plane_a) return {&WithPlane<PlaneSupport>, false};
  if (plane_b) return {&WithPlane<PlaneSupport>, true};
  return {&SupportContact, false};
}

PairEntry Entry(ShapeKind a, ShapeKind b) {
  static const CollisionTable table;
  if (KindIndex(a) < kNumShapeKinds && KindIndex(b) < kNumShapeKinds) {
    return table.cells[KindIndex(a)][KindIndex(b)];
  }
  return GenericEntry(a, b);
}

}  // namespace

bool ExplicitContactGeometry::Supports(ShapeKind a, ShapeKind b) const {
  return Entry(a, b).contacts != nullptr;
}

void ExplicitContactGeometry::FindContacts(const Shape& a, const ShapePose& pose_a, const Shape& b,
                                           const ShapePose& pose_b, double threshold,
                                           std::vector<ContactPoint>* contacts) const {
  if (box_patch_ == BoxPatch::kEveryVertex && a.kind == ShapeKind::Box &&
      b.kind == ShapeKind::Box) {
    BoxBoxPatch(a, pose_a, b, pose_b, threshold, 8, contacts);
    return;
  }
  const PairEntry entry = Entry(a.kind, b.kind);
  if (entry.contacts == nullptr) {
    throw InputError("explicit contact between a " + a.Name() + " and a " + b.Name() +
                     " is not implemented");
  }
  if (!entry.swapped) {
    entry.contacts(a, pose_a, b, pose_b, threshold, contacts);
    return;
  }
  // The points of (b, a), appended and then flipped in place.
  const size_t first = contacts->size();
  entry.contacts(b, pose_b, a, pose_a, threshold, contacts);
  for (size_t k = first; k < contacts->size(); ++k) {
    ContactPoint& c = (*contacts)[k];
    std::swap(c.point_a, c.point_b);
    c.normal = -c.normal;
    c.feature.Flip();
  }
}

}  // namespace ncpkit
