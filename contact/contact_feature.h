// How an explicit contact point moves with its two bodies: the features of their surfaces that
// made it (a face and a vertex, an edge crossing a face's side, two edges, two spheres), kept in
// the bodies' frames, so that the point, normal and distance can be evaluated again at other
// poses with the same features, on any scalar type. With Jets this gives the derivatives of a
// contact with respect to the poses that derivatives of steps need (docs/derivatives.md "Contact
// geometry"); where the features change (a vertex leaves a face, another face becomes the
// reference) the contact is a different one, as it is for the narrow phase.
#ifndef NCPKIT_CONTACT_CONTACT_FEATURE_H_
#define NCPKIT_CONTACT_CONTACT_FEATURE_H_

#include <Eigen/Dense>
#include <cmath>

#include "dynamics/shapes.h"

namespace ncpkit {

struct ContactFeature {
  enum class Kind : unsigned char {
    kNone,     // not described: no derivative with respect to the poses
    kFace,     // a face of one body and a point of the other (below)
    kSpheres,  // two spheres: the normal along their centres
    kEdges,    // an edge of each body: the normal along their cross product
  };
  // kFace: how the point of the body without the face is placed.
  enum class Incident : unsigned char {
    kPoint,      // a point fixed in that body (a vertex): `point`
    kLinePlane,  // a line of body `line_body` (`point` + t `direction`) where it crosses a plane
                 // of the other body (through `plane_point`, normal `plane_normal`)
    kSphere,     // the point of a sphere of radius `radius` about that body's origin nearest the
                 // face's plane
  };
  Kind kind = Kind::kNone;
  Incident incident = Incident::kPoint;
  int face_body = 0;  // kFace: 0 (A) or 1 (B), the body whose face gives the normal
  int line_body = 0;  // kLinePlane: 0 (A) or 1 (B)
  // Every vector in the frame of the body it belongs to. kFace: the face's outward normal and a
  // point of its plane. kEdges: A's edge (point, direction) and B's (plane_point, plane_normal
  // hold B's edge point and direction), and `sign` orients their cross product from A to B; an
  // edge's point is its centre, or the end where the contact's segments come closest (a vertex:
  // its component along the edge is not zero).
  Eigen::Vector3d face_normal = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d face_point = Eigen::Vector3d::Zero();
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d direction = Eigen::Vector3d::Zero();
  Eigen::Vector3d plane_point = Eigen::Vector3d::Zero();
  Eigen::Vector3d plane_normal = Eigen::Vector3d::Zero();
  double radius = 0.0;    // kSphere: the sphere's; kSpheres: A's
  double radius_b = 0.0;  // kSpheres: B's
  double sign = 1.0;      // kEdges
};

// A contact's features as the narrow phase keeps them with every contact point (24 bytes: a
// stack's steps copy several hundred points each, and the ContactFeature above is 184): every
// vector of a feature the narrow phase makes is a unit axis of its body (normals, directions) or
// a signed combination of its half extents (points: vertices, edge centres, face planes), so
// each is stored as the signs of its three components, and the radii are the shapes'. Expand()
// gives the ContactFeature back from the two shapes.
struct FeatureId {
  ContactFeature::Kind kind = ContactFeature::Kind::kNone;
  ContactFeature::Incident incident = ContactFeature::Incident::kPoint;
  signed char face_body = 0, line_body = 0, sign = 1;
  // The signs (-1, 0, 1) of each vector's components, in ContactFeature's order: face_normal,
  // face_point, point, direction, plane_point, plane_normal.
  signed char signs[6][3] = {};

  // The feature in full, with the half extents (a box's; zero for other shapes, whose features
  // have no points) and radii (a sphere's) of A's shape `a` and B's `b`.
  ContactFeature Expand(const Shape& a, const Shape& b) const;
  // The same contact seen with A and B exchanged: the bodies' roles swap, and for two edges so
  // do the edges' vectors ((B x A) = -(A x B), and the normal is reversed too: the sign stays);
  // two edges of which one ends at the contact become Kind::kNone (contact_feature.cc).
  void Flip();
};

// A body's pose on the scalar type T.
template <class T>
struct FeaturePose {
  Eigen::Matrix<T, 3, 1> position;
  Eigen::Matrix<T, 3, 3> rotation;
  Eigen::Matrix<T, 3, 1> World(const Eigen::Vector3d& local) const {
    return position + rotation * local.cast<T>();
  }
  Eigen::Matrix<T, 3, 1> Direction(const Eigen::Vector3d& local) const {
    return rotation * local.cast<T>();
  }
};

// A contact point on T: as ContactPoint (contact/distance.h).
template <class T>
struct FeatureContact {
  Eigen::Matrix<T, 3, 1> point_a, point_b, normal;
  T distance;
};

// The contact the feature describes at poses a and b; false for Kind::kNone (or a line parallel
// to its plane, two parallel edges, concentric spheres: no contact of that kind there).
template <class T>
bool EvaluateContactFeature(const ContactFeature& f, const FeaturePose<T>& a,
                            const FeaturePose<T>& b, FeatureContact<T>* out) {
  using Vec3 = Eigen::Matrix<T, 3, 1>;
  using std::sqrt;
  const FeaturePose<T>* poses[2] = {&a, &b};
  switch (f.kind) {
    case ContactFeature::Kind::kNone:
      return false;
    case ContactFeature::Kind::kFace: {
      const FeaturePose<T>& face = *poses[f.face_body];
      const FeaturePose<T>& other = *poses[1 - f.face_body];
      const Vec3 face_normal = face.Direction(f.face_normal);
      const Vec3 face_point = face.World(f.face_point);
      Vec3 p;
      if (f.incident == ContactFeature::Incident::kPoint) {
        p = other.World(f.point);
      } else if (f.incident == ContactFeature::Incident::kSphere) {
        p = other.position - T(f.radius) * face_normal;
      } else {
        const FeaturePose<T>& line = *poses[f.line_body];
        const FeaturePose<T>& plane = *poses[1 - f.line_body];
        const Vec3 start = line.World(f.point), along = line.Direction(f.direction);
        const Vec3 normal = plane.Direction(f.plane_normal);
        const T across = normal.dot(along);
        if (across == T(0)) return false;
        p = start + (normal.dot(plane.World(f.plane_point) - start) / across) * along;
      }
      out->distance = face_normal.dot(p - face_point);
      const Vec3 projected = p - out->distance * face_normal;
      out->normal = f.face_body == 0 ? face_normal : Vec3(-face_normal);
      out->point_a = f.face_body == 0 ? projected : p;
      out->point_b = f.face_body == 0 ? p : projected;
      return true;
    }
    case ContactFeature::Kind::kSpheres: {
      const Vec3 d = b.position - a.position;
      const T length = sqrt(d.dot(d));
      if (length == T(0)) return false;
      out->normal = d / length;
      out->distance = length - T(f.radius) - T(f.radius_b);
      out->point_a = a.position + T(f.radius) * out->normal;
      out->point_b = out->point_a + out->distance * out->normal;
      return true;
    }
    case ContactFeature::Kind::kEdges: {
      const Vec3 pa = a.World(f.point), da = a.Direction(f.direction);
      const Vec3 pb = b.World(f.plane_point), db = b.Direction(f.plane_normal);
      const Vec3 cross = da.cross(db);
      const T squared = cross.dot(cross);
      if (squared == T(0)) return false;
      out->normal = T(f.sign) * cross / sqrt(squared);
      // Both edges are perpendicular to the normal: any point of each gives the distance.
      out->distance = out->normal.dot(pb - pa);
      const Vec3 r = pa - pb;
      const T aa = da.dot(da), ab = da.dot(db), bb = db.dot(db), ar = da.dot(r), br = db.dot(r);
      if (f.point.dot(f.direction) != 0.0) {
        out->point_a = pa;  // A's edge ends at its closest point: that vertex
      } else if (f.plane_point.dot(f.plane_normal) != 0.0) {
        out->point_a = pa - (ar / aa) * da;  // B's edge does: the foot of its end on A's line
      } else {                               // the lines' closest point: s along A's, t along B's
        const T s = (ab * br - ar * bb) / (aa * bb - ab * ab);
        out->point_a = pa + s * da;
      }
      out->point_b = out->point_a + out->distance * out->normal;
      return true;
    }
  }
  return false;
}

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_CONTACT_FEATURE_H_
