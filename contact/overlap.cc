#include "contact/overlap.h"

#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "contact/broad_phase.h"
#include "contact/gjk.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

Eigen::Vector3d Support(const Shape& shape, const ShapePose& pose, const Eigen::Vector3d& d) {
  return pose.position + pose.rotation * shape.SupportPoint(pose.rotation.transpose() * d, 0.0);
}

// s(d) for unit d: A's lowest point along d minus B's highest.
double Separation(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                  const Eigen::Vector3d& d) {
  return d.dot(Support(a, pa, -d)) - d.dot(Support(b, pb, d));
}

void AddFaceAxes(const Shape& shape, const ShapePose& pose, std::vector<Eigen::Vector3d>* axes) {
  if (shape.kind == ShapeKind::Box || shape.kind == ShapeKind::Cylinder) {
    for (int k = 0; k < 3; ++k) {
      axes->push_back(pose.rotation.col(k));
      axes->push_back(-pose.rotation.col(k));
    }
  }
}

}  // namespace

Overlap MeasureOverlap(const Shape& a, const ShapePose& pose_a, const Shape& b,
                       const ShapePose& pose_b) {
  if (a.kind == ShapeKind::HalfSpace) {
    throw InputError("MeasureOverlap: a half-space must be the second shape");
  }
  Overlap result;
  if (b.kind == ShapeKind::HalfSpace) {
    // The plane z = 0 of B's frame with B on the side z <= 0: the normal is the only axis.
    const Eigen::Vector3d n = pose_b.rotation.col(2);
    result.direction = n;
    result.depth = -(n.dot(Support(a, pose_a, -n)) - n.dot(pose_b.position));
    return result;
  }
  std::vector<Eigen::Vector3d> axes;
  const Eigen::Vector3d between = pose_a.position - pose_b.position;
  if (between.norm() > 0.0) axes.push_back(between.normalized());
  AddFaceAxes(a, pose_a, &axes);
  AddFaceAxes(b, pose_b, &axes);
  if (a.kind == ShapeKind::Box && b.kind == ShapeKind::Box) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        const Eigen::Vector3d c = pose_a.rotation.col(i).cross(pose_b.rotation.col(j));
        if (c.norm() > 1e-9) {
          axes.push_back(c.normalized());
          axes.push_back(-c.normalized());
        }
      }
    }
  }
  const bool exact = (a.kind == ShapeKind::Box && b.kind == ShapeKind::Box) ||
                     (a.kind == ShapeKind::Sphere && b.kind == ShapeKind::Sphere);
  if (!exact) {
    // GJK/EPA's normal points from A towards B; the overlap's direction is the other way. Its s
    // is evaluated here again so that whatever wins below is a value s(d) of a direction, never
    // more than the true largest separation.
    const ConvexSeparation found =
        GetSeparation(a, pose_a, b, pose_b, std::numeric_limits<double>::infinity());
    axes.push_back(-found.normal);
  }
  double best = -std::numeric_limits<double>::infinity();
  Eigen::Vector3d best_axis = Eigen::Vector3d::UnitZ();
  for (const Eigen::Vector3d& d : axes) {
    const double s = Separation(a, pose_a, b, pose_b, d);
    if (s > best) {
      best = s;
      best_axis = d;
    }
  }
  result.depth = -best;
  result.direction = best_axis;
  return result;
}

std::vector<OverlappingPair> FindOverlaps(const std::vector<PlacedShape>& bodies,
                                          double tolerance) {
  std::vector<OverlappingPair> found;
  std::vector<BoundingSphere> spheres(bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) {
    spheres[i].centre = bodies[i].pose.position;
    spheres[i].radius = bodies[i].shape.BoundingRadius();
    // The box too: a long wall's sphere would reach every body of a wide scene.
    spheres[i].half_extents = bodies[i].shape.BoundingHalfExtents(bodies[i].pose.rotation);
    spheres[i].fixed = bodies[i].inverse_mass == 0.0;
  }
  std::vector<std::pair<int, int>> candidates;
  BroadPhase().Find(spheres, &candidates);
  for (const auto& [i, j] : candidates) {
    const PlacedShape& p = bodies[i];
    const PlacedShape& q = bodies[j];
    const bool q_is_plane = q.shape.kind == ShapeKind::HalfSpace;
    if (p.shape.kind == ShapeKind::HalfSpace && q_is_plane) continue;
    const int a = q_is_plane || p.shape.kind != ShapeKind::HalfSpace ? i : j;
    const int b = a == i ? j : i;
    // The bounding spheres' exact test (the broad phase's is a hair conservative).
    const double reach = bodies[a].shape.BoundingRadius() + bodies[b].shape.BoundingRadius();
    if ((bodies[a].pose.position - bodies[b].pose.position).norm() > reach) continue;
    OverlappingPair pair;
    pair.a = a;
    pair.b = b;
    pair.overlap = MeasureOverlap(bodies[a].shape, bodies[a].pose, bodies[b].shape, bodies[b].pose);
    if (pair.overlap.depth > tolerance) found.push_back(pair);
  }
  return found;
}

std::string DescribeOverlaps(const std::vector<PlacedShape>& bodies,
                             const std::vector<OverlappingPair>& pairs) {
  if (pairs.empty()) return "";
  std::ostringstream os;
  const OverlappingPair& p = pairs.front();
  os << "bodies '" << bodies[p.a].name << "' and '" << bodies[p.b].name << "' overlap by "
     << p.overlap.depth << " m at the start";
  if (pairs.size() > 1) os << " (and " << pairs.size() - 1 << " more pair(s))";
  return os.str();
}

void SeparateOverlaps(std::vector<PlacedShape>* bodies, double tolerance) {
  for (int pass = 0; pass < 100; ++pass) {
    const std::vector<OverlappingPair> pairs = FindOverlaps(*bodies, tolerance);
    if (pairs.empty()) return;
    for (const OverlappingPair& p : pairs) {
      PlacedShape& a = (*bodies)[p.a];
      PlacedShape& b = (*bodies)[p.b];
      const double total = a.inverse_mass + b.inverse_mass;
      // Push a little past contact so that the pair ends touching, not overlapping.
      const Eigen::Vector3d push = (p.overlap.depth + 0.5 * tolerance) * p.overlap.direction;
      a.pose.position += push * (a.inverse_mass / total);
      b.pose.position -= push * (b.inverse_mass / total);
    }
  }
  throw InputError(DescribeOverlaps(*bodies, FindOverlaps(*bodies, tolerance)) +
                   "; they could not be separated");
}

}  // namespace ncpkit
