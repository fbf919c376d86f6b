#include "contact/gjk.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace ncpkit {
namespace {

using Eigen::Vector3d;

// GJK's and EPA's iteration caps. GJK on curved shapes gains a digit or more per iteration; EPA
// adds one vertex per iteration, and its polytope needs some tens of them on a curved surface,
// a few hundred where one curved shape lies deep in another (at most 339 in 17 000 random deep
// cylinder-ellipsoid overlaps): stopped short, its nearest face may sit over the wrong one of
// two nearly equally deep directions, which the local search after it cannot leave.
constexpr int kMaxGjkIterations = 100;
constexpr int kMaxEpaIterations = 400;
constexpr int kMaxGjkRestarts = 3;
// GJK short of its tolerance by more than this factor has stalled rather than converged.
constexpr double kStallFactor = 1e3;
// Tolerance on the distance, relative to the larger bounding radius.
constexpr double kRelativeTolerance = 1e-14;
// EPA's tolerance: its normal only starts RefineNormal.
constexpr double kEpaRelativeTolerance = 1e-6;

// A point of the Minkowski difference B - A, with the points of A and B it comes from.
struct Vertex {
  Vector3d w, a, b;  // w = b - a
};

class MinkowskiDifference {
 public:
  MinkowskiDifference(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb)
      : a_(a), pa_(pa), b_(b), pb_(pb) {}
  // The point of B - A extreme along d: B's support along d minus A's along -d.
  Vertex Support(const Vector3d& d) {
    ++evaluations_;
    Vertex v;
    v.a = World(a_, pa_, -d);
    v.b = World(b_, pb_, d);
    v.w = v.b - v.a;
    return v;
  }
  int evaluations() const { return evaluations_; }
  // The separating-axis value s(n) of a unit n.
  double Separation(const Vector3d& n) { return n.dot(Support(-n).w); }

 private:
  static Vector3d World(const Shape& shape, const ShapePose& pose, const Vector3d& d) {
    return pose.position + pose.rotation * shape.SupportPoint(pose.rotation.transpose() * d, 0.0);
  }
  const Shape& a_;
  const ShapePose& pa_;
  const Shape& b_;
  const ShapePose& pb_;
  int evaluations_ = 0;
};

// Up to four vertices with the barycentric weights of the point of their hull closest to the
// origin.
struct Simplex {
  std::array<Vertex, 4> v;
  std::array<double, 4> weight = {};
  int size = 0;

  Vector3d Point() const {
    Vector3d p = Vector3d::Zero();
    for (int k = 0; k < size; ++k) p += weight[k] * v[k].w;
    return p;
  }
  void Witnesses(Vector3d* a, Vector3d* b) const {
    a->setZero();
    b->setZero();
    for (int k = 0; k < size; ++k) {
      *a += weight[k] * v[k].a;
      *b += weight[k] * v[k].b;
    }
  }
  // Keeps the listed vertices with their weights.
  void Keep(std::initializer_list<std::pair<int, double>> kept) {
    std::array<Vertex, 4> vertices;
    std::array<double, 4> weights = {};
    int n = 0;
    for (const auto& [index, w] : kept) {
      vertices[n] = v[index];
      weights[n++] = w;
    }
    for (int k = 0; k < n; ++k) {  // the entries in use only
      v[k] = vertices[k];
      weight[k] = weights[k];
    }
    size = n;
  }
};

void ClosestOnSegment(Simplex* s) {
  const Vector3d& a = s->v[0].w;
  const Vector3d ab = s->v[1].w - a;
  const double length2 = ab.squaredNorm();
  const double t = length2 > 0.0 ? -a.dot(ab) / length2 : 0.0;
  if (t <= 0.0) {
    s->Keep({{0, 1.0}});
  } else if (t >= 1.0) {
    s->Keep({{1, 1.0}});
  } else {
    s->Keep({{0, 1.0 - t}, {1, t}});
  }
}

// The point of triangle (i, j, k) of the simplex closest to the origin, by its Voronoi regions
// (Ericson, Real-Time Collision Detection, 5.1.5): the kept vertices and weights in *kept.
struct TrianglePoint {
  std::array<int, 3> index = {};
  std::array<double, 3> weight = {};
  int size = 0;
  Vector3d point = Vector3d::Zero();
};

TrianglePoint ClosestOnTriangle(const Simplex& s, int i, int j, int k) {
  const Vector3d &a = s.v[i].w, &b = s.v[j].w, &c = s.v[k].w;
  const Vector3d ab = b - a, ac = c - a;
  TrianglePoint r;
  const auto vertex = [&](int index, const Vector3d& p) {
    r.index[0] = index;
    r.weight[0] = 1.0;
    r.size = 1;
    r.point = p;
    return r;
  };
  const auto edge = [&](int first, const Vector3d& p, int second, const Vector3d& q, double t) {
    r.index = {first, second, 0};
    r.weight = {1.0 - t, t, 0.0};
    r.size = 2;
    r.point = p + t * (q - p);
    return r;
  };
  const double d1 = -ab.dot(a), d2 = -ac.dot(a);
  if (d1 <= 0.0 && d2 <= 0.0) return vertex(i, a);
  const double d3 = -ab.dot(b), d4 = -ac.dot(b);
  if (d3 >= 0.0 && d4 <= d3) return vertex(j, b);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return edge(i, a, j, b, d1 / (d1 - d3));
  const double d5 = -ab.dot(c), d6 = -ac.dot(c);
  if (d6 >= 0.0 && d5 <= d6) return vertex(k, c);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return edge(i, a, k, c, d2 / (d2 - d6));
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    return edge(j, b, k, c, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
  }
  const double denominator = va + vb + vc;
  const double v = vb / denominator, w = vc / denominator;
  r.index = {i, j, k};
  r.weight = {1.0 - v - w, v, w};
  r.size = 3;
  r.point = a + v * ab + w * ac;
  return r;
}

void KeepTrianglePoint(const TrianglePoint& t, Simplex* s) {
  if (t.size == 1) {
    s->Keep({{t.index[0], 1.0}});
  } else if (t.size == 2) {
    s->Keep({{t.index[0], t.weight[0]}, {t.index[1], t.weight[1]}});
  } else {
    s->Keep({{t.index[0], t.weight[0]}, {t.index[1], t.weight[1]}, {t.index[2], t.weight[2]}});
  }
}

// False when the origin is inside the tetrahedron. Outside, the closest point is the closest
// of the four faces' (all four are measured: a sign test on a nearly flat face could skip the
// right one).
bool ClosestOnTetrahedron(Simplex* s) {
  static constexpr int kFaces[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
  const Vector3d& a0 = s->v[0].w;
  const Vector3d e1 = s->v[1].w - a0, e2 = s->v[2].w - a0, e3 = s->v[3].w - a0;
  const double volume = std::abs(e1.cross(e2).dot(e3));
  const double extent = std::max({e1.norm(), e2.norm(), e3.norm()});
  bool inside = volume > 1e-12 * extent * extent * extent;  // a flat one holds no origin
  for (const auto& f : kFaces) {
    if (!inside) break;
    const Vector3d& a = s->v[f[0]].w;
    const Vector3d n = (s->v[f[1]].w - a).cross(s->v[f[2]].w - a);
    inside = (-n.dot(a)) * n.dot(s->v[f[3]].w - a) > 0.0;
  }
  if (inside) return false;
  TrianglePoint best;
  double best_norm = std::numeric_limits<double>::infinity();
  for (const auto& f : kFaces) {
    const TrianglePoint t = ClosestOnTriangle(*s, f[0], f[1], f[2]);
    if (t.point.squaredNorm() < best_norm) {
      best_norm = t.point.squaredNorm();
      best = t;
    }
  }
  KeepTrianglePoint(best, s);
  return true;
}

// Reduces the simplex to the vertices of its hull's point closest to the origin; false when
// that hull (a tetrahedron) contains the origin.
bool ReduceSimplex(Simplex* s) {
  switch (s->size) {
    case 1:
      s->weight[0] = 1.0;
      return true;
    case 2:
      ClosestOnSegment(s);
      return true;
    case 3:
      KeepTrianglePoint(ClosestOnTriangle(*s, 0, 1, 2), s);
      return true;
    default:
      return ClosestOnTetrahedron(s);
  }
}

// ---- EPA ----

// A vector of at most N items kept in place: EPA's polytope is bounded by its iteration cap, and
// a contact search in a simulation's step should not allocate.
template <typename T, int N>
class FixedVector {
 public:
  FixedVector() = default;
  // Copies the items in use only.
  FixedVector(const FixedVector& other) : size_(other.size_) {
    std::copy(other.begin(), other.end(), items_.begin());
  }
  FixedVector& operator=(const FixedVector& other) {
    size_ = other.size_;
    std::copy(other.begin(), other.end(), items_.begin());
    return *this;
  }
  // False (and nothing added) when full.
  bool push_back(const T& item) {
    if (size_ == N) return false;
    items_[size_++] = item;
    return true;
  }
  void erase_at(int index) {
    std::move(items_.begin() + index + 1, items_.begin() + size_, items_.begin() + index);
    --size_;
  }
  int size() const { return size_; }
  const T& operator[](int k) const { return items_[k]; }
  T& operator[](int k) { return items_[k]; }
  T& back() { return items_[size_ - 1]; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }

 private:
  std::array<T, N> items_;
  int size_ = 0;
};

// The polytope starts as a tetrahedron and gains one vertex per EPA iteration; a closed
// triangulated surface of V vertices has 2 V - 4 faces, and one expansion's horizon has at most
// as many edges as the faces it removes have.
constexpr int kMaxPolytopeVertices = 4 + kMaxEpaIterations;
constexpr int kMaxPolytopeFaces = 2 * kMaxPolytopeVertices;
using PolytopeVertices = FixedVector<Vertex, kMaxPolytopeVertices>;

struct Face {
  std::array<int, 3> v;
  Vector3d normal;  // outward, unit
  double distance;  // of the face's plane from the origin
};

class Polytope {
 public:
  explicit Polytope(const PolytopeVertices& vertices) : vertices_(vertices) {}

  // The tetrahedron of the first four vertices, faces turned outward; false if it is flat.
  bool StartTetrahedron(double tiny) {
    const Vector3d centre =
        0.25 * (vertices_[0].w + vertices_[1].w + vertices_[2].w + vertices_[3].w);
    static constexpr int kFaces[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    for (const auto& f : kFaces) {
      if (!AddFace(f[0], f[1], f[2], tiny)) return false;
      Face& face = faces_.back();
      if (face.normal.dot(vertices_[face.v[0]].w - centre) < 0.0) {
        std::swap(face.v[1], face.v[2]);
        face.normal = -face.normal;
        face.distance = -face.distance;
      }
    }
    return true;
  }

  const Face& Closest() const {
    return *std::min_element(faces_.begin(), faces_.end(),
                             [](const Face& x, const Face& y) { return x.distance < y.distance; });
  }

  // Adds `w` and replaces the faces it sees by a fan from their horizon; false if that fails
  // (no face seen, or a new face without area).
  bool Expand(const Vertex& w, double tiny) {
    const int index = vertices_.size();
    if (!vertices_.push_back(w)) return false;
    Edges edges;
    Faces kept;
    for (const Face& f : faces_) {
      if (f.normal.dot(w.w - vertices_[f.v[0]].w) > tiny) {
        for (int e = 0; e < 3; ++e) {
          if (!ToggleEdge(f.v[e], f.v[(e + 1) % 3], &edges)) return false;
        }
      } else {
        kept.push_back(f);
      }
    }
    if (kept.size() == faces_.size()) return false;
    faces_ = kept;
    for (const Edge& edge : edges) {
      if (!AddFace(edge.from, edge.to, index, tiny)) return false;
    }
    return true;
  }

  const Vertex& vertex(int k) const { return vertices_[k]; }

 private:
  // An edge shared by two removed faces (seen once each way) is inside the hole: drop it.
  using Faces = FixedVector<Face, kMaxPolytopeFaces>;
  // Plain ints, not std::pair, so that a fresh edge list is not zero-filled (its capacity is
  // some thousands of edges, one expansion uses a few).
  struct Edge {
    int from, to;
  };
  using Edges = FixedVector<Edge, 3 * kMaxPolytopeFaces>;

  // False when the edge list is full.
  static bool ToggleEdge(int from, int to, Edges* edges) {
    for (int k = 0; k < edges->size(); ++k) {
      if ((*edges)[k].from == to && (*edges)[k].to == from) {
        edges->erase_at(k);
        return true;
      }
    }
    return edges->push_back({from, to});
  }

  bool AddFace(int i, int j, int k, double tiny) {
    const Vector3d& a = vertices_[i].w;
    Vector3d n = (vertices_[j].w - a).cross(vertices_[k].w - a);
    const double length = n.norm();
    if (!(length > tiny * tiny)) return false;
    n /= length;
    return faces_.push_back({{i, j, k}, n, n.dot(a)});
  }

  PolytopeVertices vertices_;
  Faces faces_;
};

// Grows a simplex around the origin (GJK stopped with it on or near its hull) into a
// tetrahedron of points of B - A.
bool Tetrahedron(MinkowskiDifference* difference, const Simplex& simplex, double tiny,
                 PolytopeVertices* vertices) {
  for (int k = 0; k < simplex.size; ++k) vertices->push_back(simplex.v[k]);
  const auto add_farthest = [&](std::initializer_list<Vector3d> directions, auto distance) {
    Vertex best{Vector3d::Zero(), Vector3d::Zero(), Vector3d::Zero()};
    double farthest = -1.0;
    for (const Vector3d& d : directions) {
      const Vertex v = difference->Support(d);
      const double away = distance(v.w);
      if (away > farthest) {
        farthest = away;
        best = v;
      }
    }
    if (!(farthest > tiny)) return false;
    vertices->push_back(best);
    return true;
  };
  if (vertices->size() == 1) {
    const Vector3d p = (*vertices)[0].w;
    if (!add_farthest({Vector3d::UnitX(), -Vector3d::UnitX(), Vector3d::UnitY(), -Vector3d::UnitY(),
                       Vector3d::UnitZ(), -Vector3d::UnitZ()},
                      [&](const Vector3d& w) { return (w - p).norm(); })) {
      return false;
    }
  }
  if (vertices->size() == 2) {
    const Vector3d p = (*vertices)[0].w;
    const Vector3d e = ((*vertices)[1].w - p).normalized();
    const Vector3d u = e.unitOrthogonal(), v = e.cross(u);
    if (!add_farthest({u, -u, v, -v, (u + v).normalized(), -(u + v).normalized()},
                      [&](const Vector3d& w) { return (w - p - (w - p).dot(e) * e).norm(); })) {
      return false;
    }
  }
  if (vertices->size() == 3) {
    const Vector3d p = (*vertices)[0].w;
    const Vector3d n = ((*vertices)[1].w - p).cross((*vertices)[2].w - p).normalized();
    if (!add_farthest({n, -n}, [&](const Vector3d& w) { return std::abs((w - p).dot(n)); })) {
      return false;
    }
  }
  return vertices->size() == 4;
}

// EPA from GJK's last simplex: the face of B - A's boundary nearest the origin, to a coarse
// tolerance (`tolerance`): its normal and depth start the refinement below. False when the
// iteration cap or the polytope's capacity stopped it short of the tolerance.
bool Penetration(MinkowskiDifference* difference, const Simplex& simplex, double tolerance,
                 ConvexSeparation* out) {
  PolytopeVertices start;
  const double tiny = 1e-3 * tolerance;
  const bool solid = Tetrahedron(difference, simplex, tiny, &start);
  Polytope polytope(start);
  if (!solid || !polytope.StartTetrahedron(tiny)) {
    // B - A is flat around the origin: the shapes only touch.
    out->distance = 0.0;
    simplex.Witnesses(&out->point_a, &out->point_b);
    return true;
  }
  Face face = polytope.Closest();
  bool reached = false;
  for (int iteration = 0; iteration < kMaxEpaIterations; ++iteration) {
    const Vertex w = difference->Support(face.normal);
    if (w.w.dot(face.normal) - face.distance <= tolerance) {
      reached = true;
      break;
    }
    if (!polytope.Expand(w, tiny)) break;
    face = polytope.Closest();
  }
  out->normal = -face.normal;
  out->distance = -face.distance;
  return reached;
}

enum class GjkEnd { kApart, kOverlap, kBeyond };

// GJK on B - A from `start`, a point of it: the point v of B - A closest to
// the origin and the simplex whose hull holds it. kBeyond as soon as a support plane shows the
// shapes at least `stop_beyond` apart.
GjkEnd Gjk(MinkowskiDifference* difference, const Vector3d& start_direction, double stop_beyond,
           double tolerance, Simplex* simplex, Vector3d* v, bool* converged) {
  simplex->v[0] = difference->Support(start_direction);
  simplex->weight[0] = 1.0;
  simplex->size = 1;
  *v = simplex->v[0].w;
  *converged = false;
  int restarts = 0;
  for (int iteration = 0; iteration < kMaxGjkIterations; ++iteration) {
    const double vv = v->squaredNorm();
    if (vv <= tolerance * tolerance) return GjkEnd::kOverlap;
    const Vertex w = difference->Support(-*v);
    const double vw = v->dot(w.w);
    const double length = std::sqrt(vv);
    if (vw >= stop_beyond * length) {
      *converged = true;
      return GjkEnd::kBeyond;
    }
    if (vv - vw <= tolerance * length) {
      *converged = true;
      return GjkEnd::kApart;
    }
    const Simplex previous = *simplex;
    simplex->v[simplex->size++] = w;
    if (!ReduceSimplex(simplex)) return GjkEnd::kOverlap;
    const Vector3d next = simplex->Point();
    if (!(next.squaredNorm() < vv)) {
      *simplex = previous;
      // A nearly flat simplex can stall the reduction far from the tolerance: start again from
      // the last support point alone, a few times; otherwise v is as close as the arithmetic
      // allows.
      if (restarts < kMaxGjkRestarts && vv - vw > kStallFactor * tolerance * length) {
        ++restarts;
        simplex->v[0] = w;
        simplex->weight[0] = 1.0;
        simplex->size = 1;
        *v = w.w;
        continue;
      }
      *converged = true;
      return GjkEnd::kApart;
    }
    *v = next;
  }
  return GjkEnd::kApart;
}

// The normal n maximizing the separating-axis value s(n) (the distance, or minus the depth),
// from a start near it: EPA's normal (a polytope approximates a curved surface's normal only to
// about the square root of its tolerance) or a stalled GJK's. A local search on the sphere of
// directions: four moves about the current best, the step halved when none raises s(n), from
// 1e-2 rad down to 1e-10 rad; it climbs to the maximum nearest its start.
void RefineNormal(MinkowskiDifference* difference, ConvexSeparation* out) {
  Vector3d best = out->normal;
  double best_s = difference->Separation(best);
  bool capped = false;  // some step size still improving after 64 moves: the start was far
  for (double step = 1e-2; step > 1e-10; step *= 0.5) {
    for (int moves = 0;; ++moves) {
      if (moves == 64) {
        capped = true;
        break;
      }
      const Vector3d u = best.unitOrthogonal(), v = best.cross(u);
      std::array<Vector3d, 4> support;
      int k = 0;
      bool improved = false;
      const auto try_move = [&](const Vector3d& t) {
        const Vector3d d = (best + step * t).normalized();
        const Vertex w = difference->Support(-d);
        if (k < 4) support[k++] = w.w;
        if (d.dot(w.w) > best_s) {
          best_s = d.dot(w.w);
          best = d;
          improved = true;
        }
      };
      for (const Vector3d& t : {u, Vector3d(-u), v, Vector3d(-v)}) try_move(t);
      if (!improved) {
        // On a ridge of s (a straight edge or line of one shape against a face or a line of the
        // other) no compass move climbs: the ridge runs across the chord between the support
        // points of opposite moves, so move along it too.
        const Vector3d chord = (support[0] - support[1]).norm() > (support[2] - support[3]).norm()
                                   ? Vector3d(support[0] - support[1])
                                   : Vector3d(support[2] - support[3]);
        const Vector3d ridge = best.cross(chord);
        if (ridge.norm() > 0.0) {
          const Vector3d r = ridge.normalized();
          for (const Vector3d& t : {r, Vector3d(-r)}) try_move(t);
        }
      }
      if (!improved) break;
    }
  }
  out->converged = !capped;
  out->normal = best;
  out->distance = best_s;
  const Vertex w = difference->Support(-best);
  out->point_a = w.a;
  out->point_b = w.a + best_s * best;
}

// After RefineNormal: where GJK stalled, |v| (`upper`) bounds the distance from above and s(n)
// from below, so a gap wider than `slack` between them means the local search climbed another
// hill of s than the highest. Shapes that all but touch stall GJK with |v| at the level of
// rounding (1e-11 of the size for a capsule and a cylinder lying side by side), v / |v| pointing
// anywhere, and the search from it can end on a hill 0.14 m deep. Then, and where the search or
// EPA stopped short (not converged: a start far from the normal), the search runs again from the
// direction between the centres. The higher of the two is kept (each is a separating-axis
// value, a lower bound of the distance), or the one that converged where both reach the same
// value to within `same`.
void RefineAgainFromCentres(MinkowskiDifference* difference, double upper, const Vector3d& between,
                            double slack, double same, ConvexSeparation* out) {
  const bool gap = upper - out->distance > slack;
  if ((!gap && out->converged) || !(between.norm() > 0.0)) return;
  ConvexSeparation again = *out;
  again.normal = between.normalized();
  RefineNormal(difference, &again);
  if (again.distance > out->distance ||
      (again.converged && !out->converged && again.distance >= out->distance - same)) {
    *out = again;
  }
}

// The normal of GJK's final triangle, oriented like GJK's v, when its separation s(n) is the
// support distance along n to within the tolerance (the triangle lies on a flat part of B - A
// facing the origin); then taken, with s(n) as the distance. False otherwise.
bool TakeTriangleNormal(MinkowskiDifference* difference, const Simplex& simplex, double tolerance,
                        ConvexSeparation* out) {
  if (simplex.size != 3) return false;
  Vector3d n = (simplex.v[1].w - simplex.v[0].w).cross(simplex.v[2].w - simplex.v[0].w);
  const double length = n.norm();
  if (!(length > 0.0)) return false;
  n /= length;
  if (n.dot(out->normal) < 0.0) n = -n;
  const Vertex w = difference->Support(-n);
  const double s = n.dot(w.w);
  // s(n) is at most the distance; n . v0 at least (a point of B - A's plane along n through the
  // triangle, on the triangle's plane, is not nearer than the plane): equal, n is the normal.
  if (!(n.dot(simplex.v[0].w) - s <= kStallFactor * tolerance)) return false;
  out->normal = n;
  out->distance = s;
  out->point_a = w.a;
  out->point_b = w.a + s * n;
  return true;
}

}  // namespace

ConvexSeparation GetSeparation(const Shape& a, const ShapePose& pose_a, const Shape& b,
                               const ShapePose& pose_b, double stop_beyond) {
  const double scale = std::max(a.BoundingRadius(), b.BoundingRadius());
  const double tolerance = kRelativeTolerance * scale;
  MinkowskiDifference difference(a, pose_a, b, pose_b);
  ConvexSeparation out;
  Vector3d between = pose_b.position - pose_a.position;
  if (!(between.norm() > tolerance)) between = Vector3d::UnitZ();
  Simplex simplex;
  Vector3d v;
  const GjkEnd end =
      Gjk(&difference, -between, stop_beyond, tolerance, &simplex, &v, &out.converged);
  if (end == GjkEnd::kOverlap) {
    const bool reached = Penetration(&difference, simplex, kEpaRelativeTolerance * scale, &out);
    RefineNormal(&difference, &out);
    out.converged = out.converged && reached;
    // No upper bound here (the depth is what is sought): again only where EPA or the search
    // stopped short.
    RefineAgainFromCentres(&difference, out.distance, between, kEpaRelativeTolerance * scale,
                           kStallFactor * tolerance, &out);
  } else {
    const double length = v.norm();
    out.normal = v / length;
    if (end == GjkEnd::kBeyond) {
      out.beyond = true;
      out.distance = difference.Separation(out.normal);
    } else {
      out.distance = length;
      simplex.Witnesses(&out.point_a, &out.point_b);
      // GJK's direction v / |v| carries the rounding of v's terms over |v|: shapes all but
      // touching along a line or a face can stall it with a normal off by 1e-5 rad. A gap
      // between |v| and s(v / |v|) shows it. A final triangle then lies on a flat part of
      // B - A (a face on a face, a straight edge or line on a face), and its plane's normal,
      // from differences of support points, is exact to rounding; otherwise the local search
      // finds the normal.
      // The same gap certifies the distance: GJK may also end at its iteration cap crawling
      // towards a tolerance that rounding keeps it from (the result is then as good as a
      // converged one when the gap is small).
      if (length - difference.Separation(out.normal) <= kStallFactor * tolerance) {
        out.converged = true;
      } else if (TakeTriangleNormal(&difference, simplex, tolerance, &out)) {
        out.converged = true;
      } else {
        RefineNormal(&difference, &out);
        RefineAgainFromCentres(&difference, length, between, kEpaRelativeTolerance * scale,
                               kStallFactor * tolerance, &out);
      }
    }
  }
  out.iterations = difference.evaluations();
  return out;
}

}  // namespace ncpkit
