#include "dynamics/shapes/polyhedron.h"

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "dynamics/shape_registry.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

using Eigen::Vector3d;

namespace {

[[noreturn]] void FailHull(const std::string& why) { throw InputError("convex hull: " + why); }

// Qhull's reentrant state, freed on every way out; its messages go to a buffer, so that a
// failure's reason can be given in the error (its first line).
class Qhull {
 public:
  Qhull() : errors_(open_memstream(&text_, &length_)) { qh_zero(&qh_, errors_); }
  ~Qhull() {
    qh_freeqhull(&qh_, !qh_ALL);
    int current = 0, total = 0;
    qh_memfreeshort(&qh_, &current, &total);
    if (errors_ != nullptr) std::fclose(errors_);
    std::free(text_);  // NOLINT(cppcoreguidelines-no-malloc): open_memstream's buffer
  }
  Qhull(const Qhull&) = delete;
  Qhull& operator=(const Qhull&) = delete;

  // "qhull": merged coplanar facets (the default C-0 in three dimensions).
  bool Run(std::vector<double>* coordinates) {
    char options[] = "qhull";
    const int count = static_cast<int>(coordinates->size() / 3);
    return qh_new_qhull(&qh_, 3, count, coordinates->data(), False, options, nullptr, errors_) == 0;
  }
  std::string FirstError() {
    if (errors_ != nullptr) std::fflush(errors_);
    const std::string all = text_ != nullptr ? std::string(text_, length_) : std::string();
    return all.substr(0, all.find('\n'));
  }
  qhT* get() { return &qh_; }

 private:
  qhT qh_{};
  char* text_ = nullptr;
  size_t length_ = 0;
  FILE* errors_;
};

// The facets of a finished hull as faces in the points' frame: each facet's vertices (ordered
// round it by Qhull) turned counter-clockwise about its outward normal, indices into `hull`.
void ReadFacets(qhT* qh, std::vector<Vector3d>* hull, std::vector<ConvexPolyhedron::Face>* faces) {
  std::vector<int> index_of(static_cast<size_t>(qh->num_points), -1);
  facetT* facet;
  vertexT* vertex;
  vertexT** vertexp;
  FORALLfacets {
    ConvexPolyhedron::Face face;
    face.normal = Vector3d(facet->normal[0], facet->normal[1], facet->normal[2]);
    face.offset = -facet->offset;
    setT* ordered = qh_facet3vertex(qh, facet);
    FOREACHvertex_(ordered) {
      const int id = qh_pointid(qh, vertex->point);
      if (index_of[id] < 0) {
        index_of[id] = static_cast<int>(hull->size());
        hull->emplace_back(vertex->point[0], vertex->point[1], vertex->point[2]);
      }
      face.vertices.push_back(index_of[id]);
    }
    qh_settempfree(qh, &ordered);
    Vector3d area = Vector3d::Zero();
    for (size_t k = 0; k + 2 < face.vertices.size(); ++k) {
      area += ((*hull)[face.vertices[k + 1]] - (*hull)[face.vertices[0]])
                  .cross((*hull)[face.vertices[k + 2]] - (*hull)[face.vertices[0]]);
    }
    if (area.dot(face.normal) < 0.0) std::reverse(face.vertices.begin(), face.vertices.end());
    faces->push_back(std::move(face));
  }
}

// Volume, centroid and the second moment of the solid by tetrahedra from an inside point to
// each face's fan of triangles: a tetrahedron (0, a, b, c) has volume det[a b c] / 6 and
// integral of x x^T = V / 20 (a a^T + b b^T + c c^T + s s^T), s = a + b + c.
void MassOf(ConvexPolyhedron* p, const Vector3d& inside) {
  double volume = 0.0;
  Vector3d moment = Vector3d::Zero();
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();
  for (const ConvexPolyhedron::Face& face : p->faces) {
    for (size_t k = 0; k + 2 < face.vertices.size(); ++k) {
      const Vector3d a = p->vertices[face.vertices[0]] - inside;
      const Vector3d b = p->vertices[face.vertices[k + 1]] - inside;
      const Vector3d c = p->vertices[face.vertices[k + 2]] - inside;
      const double v = a.dot(b.cross(c)) / 6.0;
      const Vector3d s = a + b + c;
      volume += v;
      moment += v * s / 4.0;
      second += v / 20.0 *
                (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
    }
  }
  const Vector3d centroid = moment / volume;
  second -= volume * centroid * centroid.transpose();  // about the centroid
  p->volume = volume;
  p->centroid = inside + centroid;
  p->unit_inertia = (second.trace() * Eigen::Matrix3d::Identity() - second) / volume;
  p->unit_inertia = (0.5 * (p->unit_inertia + p->unit_inertia.transpose())).eval();
}

void CheckPoints(const std::vector<Vector3d>& points) {
  if (points.size() < 4) {
    FailHull("needs at least 4 points, got " + std::to_string(points.size()));
  }
  if (points.size() > static_cast<size_t>(kMaxHullPoints)) {
    FailHull(std::to_string(points.size()) + " points, more than the " +
             std::to_string(kMaxHullPoints) + " a hull is made of");
  }
  for (size_t k = 0; k < points.size(); ++k) {
    if (!points[k].allFinite()) FailHull("point " + std::to_string(k) + " is not finite");
  }
}

}  // namespace

std::shared_ptr<const ConvexPolyhedron> MakeConvexHull(const std::vector<Vector3d>& points) {
  CheckPoints(points);
  Eigen::AlignedBox3d box;
  for (const Vector3d& x : points) box.extend(x);
  const double extent = box.diagonal().norm();
  if (!(extent > 0.0)) FailHull("the points are all one point");
  // Qhull works on coordinates about the box's centre (its roundoff is relative to them).
  const Vector3d centre = box.center();
  std::vector<double> coordinates;
  coordinates.reserve(3 * points.size());
  for (const Vector3d& x : points) {
    for (int k = 0; k < 3; ++k) coordinates.push_back(x[k] - centre[k]);
  }
  auto p = std::make_shared<ConvexPolyhedron>();
  {
    Qhull qhull;
    if (!qhull.Run(&coordinates)) {
      FailHull("the points span no volume (" + qhull.FirstError() + ")");
    }
    if (qhull.get()->num_vertices > kMaxHullVertices) {
      FailHull("the hull has " + std::to_string(qhull.get()->num_vertices) +
               " vertices, more than " + std::to_string(kMaxHullVertices) + " (simplify the mesh)");
    }
    ReadFacets(qhull.get(), &p->vertices, &p->faces);
  }
  Vector3d inside = Vector3d::Zero();
  for (const Vector3d& v : p->vertices) inside += v / static_cast<double>(p->vertices.size());
  MassOf(p.get(), inside);
  if (!(p->volume > 1e-9 * extent * extent * extent)) {
    FailHull("the points span no volume (flat: volume " + std::to_string(p->volume) + ")");
  }
  // About the centroid, in the points' frame.
  for (Vector3d& v : p->vertices) v -= p->centroid;
  for (ConvexPolyhedron::Face& face : p->faces) face.offset -= face.normal.dot(p->centroid);
  p->centroid += centre;
  for (const Vector3d& v : p->vertices) p->radius = std::max(p->radius, v.norm());
  return p;
}

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace polyhedron_shape {

const ConvexPolyhedron& Of(const Shape& shape) {
  if (shape.polyhedron == nullptr) throw InputError("a convex shape without its vertices");
  return *shape.polyhedron;
}

// The vertex furthest along d; where several are within `flat` (relative to |d| and the size),
// their mean: the centre of the face or edge facing d.
Vector3d Support(const Shape& shape, const Vector3d& d, double flat) {
  const ConvexPolyhedron& p = Of(shape);
  double best = -std::numeric_limits<double>::infinity();
  for (const Vector3d& v : p.vertices) best = std::max(best, d.dot(v));
  const double tie = flat * d.norm() * p.radius;
  Vector3d sum = Vector3d::Zero();
  int count = 0;
  for (const Vector3d& v : p.vertices) {
    if (d.dot(v) >= best - tie) {
      sum += v;
      ++count;
    }
  }
  return sum / count;
}

double BoundingRadius(const Shape& shape) { return Of(shape).radius; }

Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  Vector3d e = Vector3d::Zero();
  for (const Vector3d& v : Of(shape).vertices) e = e.cwiseMax((R * v).cwiseAbs());
  return e;
}

MassProperties SolidMass(const Shape& shape, double mass) {
  MassProperties properties;
  properties.mass = mass;
  properties.body_inertia = mass * Of(shape).unit_inertia;
  return properties;
}

size_t FacingFace(const ConvexPolyhedron& p, const Vector3d& d) {
  size_t facing = 0;
  for (size_t f = 1; f < p.faces.size(); ++f) {
    if (p.faces[f].normal.dot(d) > p.faces[facing].normal.dot(d)) facing = f;
  }
  return facing;
}

Vector3d FacingNormal(const Shape& shape, const Vector3d& d) {
  return Of(shape).faces[FacingFace(Of(shape), d)].normal;
}

// The vertices of the face most nearly facing d (a face lying on a plane touches it at all of
// them, an edge at two of them) and the support vertex, where not among them (a vertex down).
int FaceVertices(const Shape& shape, const Vector3d& d, double /*flat*/, Vector3d* points) {
  const ConvexPolyhedron& p = Of(shape);
  const size_t facing = FacingFace(p, d);
  int count = 0;
  for (const int i : p.faces[facing].vertices) {
    if (count < kMaxSupportCandidates - 1) points[count++] = p.vertices[i];
  }
  int top = 0;
  for (size_t i = 1; i < p.vertices.size(); ++i) {
    if (d.dot(p.vertices[i]) > d.dot(p.vertices[top])) top = static_cast<int>(i);
  }
  const auto& ring = p.faces[facing].vertices;
  if (std::find(ring.begin(), ring.end(), top) == ring.end()) points[count++] = p.vertices[top];
  return count;
}

// Each face a fan of its own vertices (flat shading).
ShapeMesh Mesh(const Shape& shape) {
  const ConvexPolyhedron& p = Of(shape);
  ShapeMesh mesh;
  for (const ConvexPolyhedron::Face& face : p.faces) {
    const int first = static_cast<int>(mesh.vertices.size());
    for (const int i : face.vertices) mesh.vertices.push_back(p.vertices[i]);
    for (int k = 1; k + 1 < static_cast<int>(face.vertices.size()); ++k) {
      mesh.triangles.push_back({first, first + k, first + k + 1});
    }
  }
  return mesh;
}

}  // namespace polyhedron_shape

ShapeType PolyhedronShapeType() {
  ShapeType type;
  type.name = "convex";
  type.size_count = 0;
  type.support = &polyhedron_shape::Support;
  type.bounding_radius = &polyhedron_shape::BoundingRadius;
  type.bounding_half_extents = &polyhedron_shape::BoundingHalfExtents;
  type.solid_mass = &polyhedron_shape::SolidMass;
  type.candidates = &polyhedron_shape::FaceVertices;
  type.has_faces = true;
  type.facing_normal = &polyhedron_shape::FacingNormal;
  type.mesh = &polyhedron_shape::Mesh;
  return type;
}

}  // namespace ncpkit
