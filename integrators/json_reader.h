// Reading scene files: JSON fields with errors that name the file and the field path.
#ifndef NCPKIT_INTEGRATORS_JSON_READER_H_
#define NCPKIT_INTEGRATORS_JSON_READER_H_

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/overlap.h"
#include "dynamics/mesh_file.h"
#include "dynamics/shape_registry.h"
#include "dynamics/shapes.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {

using Json = nlohmann::json;

// Reading fields with errors that name the file and the field.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  // The file read (or the name the text was given under).
  const std::string& source() const { return source_; }

  [[noreturn]] void Fail(const std::string& path, const std::string& what) const {
    throw InputError(source_, 0, path, what);
  }

  void OnlyKeys(const Json& object, const std::string& path,
                std::initializer_list<const char*> keys) const {
    OnlyKeys(object, path, std::vector<std::string>(keys.begin(), keys.end()));
  }
  void OnlyKeys(const Json& object, const std::string& path,
                const std::vector<std::string>& keys) const {
    if (!object.is_object()) Fail(path, "expected an object");
    // A linear search: the lists are a few dozen keys at most, and a set built per object was
    // a tenth of reading a scene of 10^4 bodies.
    for (const auto& item : object.items()) {
      if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) {
        std::string list;
        for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
        Fail(path, "unknown field '" + item.key() + "' (expected: " + list + ")");
      }
    }
  }

  const Json& Required(const Json& object, const std::string& path, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) Fail(path, std::string("missing field '") + key + "'");
    return *it;
  }

  double Number(const Json& value, const std::string& path) const {
    if (!value.is_number()) Fail(path, "expected a number, got " + std::string(value.type_name()));
    const double x = value.get<double>();
    if (!std::isfinite(x)) Fail(path, "must be finite");
    return x;
  }

  double Number(const Json& object, const std::string& path, const char* key,
                double fallback) const {
    const auto it = object.find(key);
    if (it == object.end()) return fallback;
    double x;
    return FiniteNumber(*it, &x) ? x : Number(*it, path + "." + key);
  }

  double Positive(const Json& object, const std::string& path, const char* key) const {
    const double x = Number(Required(object, path, key), path + "." + key);
    if (!(x > 0.0)) Fail(path + "." + key, "must be positive, got " + Format(x));
    return x;
  }

  // An integer field in [min, max]; the message quotes the value as written (1e20, 2.5, -3).
  int64_t Integer(const Json& object, const std::string& path, const char* key, int64_t fallback,
                  int64_t min, int64_t max) const {
    if (!object.contains(key)) return fallback;
    const Json& value = object.at(key);
    const std::string field = path + "." + key;
    const double x = Number(value, field);
    if (!(x >= static_cast<double>(min) && x <= static_cast<double>(max)) || x != std::floor(x)) {
      Fail(field, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                      "], got " + value.dump());
    }
    return static_cast<int64_t>(x);
  }

  Eigen::VectorXd Vector(const Json& value, const std::string& path, int size) const {
    if (!value.is_array() || static_cast<int>(value.size()) != size) {
      Fail(path, "expected an array of " + std::to_string(size) + " numbers");
    }
    Eigen::VectorXd v(size);
    for (int k = 0; k < size; ++k) {
      // (The element's path is spelled out only for the message: a scene of 10^5 bodies reads
      // half a million numbers.)
      if (!FiniteNumber(value[k], &v[k])) {
        v[k] = Number(value[k], path + "[" + std::to_string(k) + "]");
      }
    }
    return v;
  }

  Eigen::Vector3d Vector3(const Json& object, const std::string& path, const char* key,
                          const Eigen::Vector3d& fallback) const {
    return object.contains(key) ? Eigen::Vector3d(Vector(object.at(key), path + "." + key, 3))
                                : fallback;
  }

  bool Bool(const Json& object, const std::string& path, const char* key, bool fallback) const {
    if (!object.contains(key)) return fallback;
    if (!object.at(key).is_boolean()) Fail(path + "." + key, "expected true or false");
    return object.at(key).get<bool>();
  }

  std::string String(const Json& value, const std::string& path) const {
    if (!value.is_string()) Fail(path, "expected a string");
    return value.get<std::string>();
  }

  static std::string Format(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
  }

 private:
  // A finite number into *x, as Number() reads it; false (with *x untouched) for anything that
  // Number() would reject.
  static bool FiniteNumber(const Json& value, double* x) {
    if (!value.is_number()) return false;
    const double v = value.get<double>();
    if (!std::isfinite(v)) return false;
    *x = v;
    return true;
  }

  std::string source_;
};

inline Eigen::Quaterniond ReadOrientation(const Reader& in, const Json& object,
                                          const std::string& path) {
  if (!object.contains("orientation")) return Eigen::Quaterniond::Identity();
  const Eigen::VectorXd q = in.Vector(object.at("orientation"), path + ".orientation", 4);
  const double norm = q.norm();
  if (std::abs(norm - 1.0) > 1e-6) {
    in.Fail(path + ".orientation",
            "must be a unit quaternion [w, x, y, z] (norm " + Reader::Format(norm) + ")");
  }
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized();
}

// A mesh file named in a scene file: relative to the scene file's folder.
inline std::string MeshPath(const Reader& in, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  const size_t slash = in.source().find_last_of('/');
  return slash == std::string::npos ? name : in.source().substr(0, slash + 1) + name;
}

// "convex": the hull of "vertices" [[x, y, z], ...] or of a "mesh" file's vertices (.obj, .stl),
// scaled by "scale" (a number or [sx, sy, sz], default 1) about the points' frame.
inline std::shared_ptr<const ConvexPolyhedron> ReadConvexHull(const Reader& in, const Json& object,
                                                              const std::string& path) {
  const bool listed = object.contains("vertices"), meshed = object.contains("mesh");
  if (listed == meshed) in.Fail(path, "a convex shape takes \"vertices\" or \"mesh\", one of them");
  std::vector<Eigen::Vector3d> points;
  std::string field = path + (listed ? ".vertices" : ".mesh");
  if (listed) {
    const Json& vertices = object.at("vertices");
    if (!vertices.is_array()) in.Fail(field, "expected an array of [x, y, z]");
    if (vertices.size() > static_cast<size_t>(kMaxHullPoints)) {
      in.Fail(field, "more than " + std::to_string(kMaxHullPoints) + " points");
    }
    points.reserve(vertices.size());
    for (size_t k = 0; k < vertices.size(); ++k) {
      points.emplace_back(in.Vector(vertices[k], field + "[" + std::to_string(k) + "]", 3));
    }
  } else {
    try {
      points = ReadMeshVertices(MeshPath(in, in.String(object.at("mesh"), field)));
    } catch (const InputError& e) {
      in.Fail(field, e.what());
    }
  }
  Eigen::Vector3d scale = Eigen::Vector3d::Ones();
  if (object.contains("scale")) {
    const Json& s = object.at("scale");
    scale = s.is_number() ? Eigen::Vector3d::Constant(in.Number(object, path, "scale", 1.0))
                          : Eigen::Vector3d(in.Vector(s, path + ".scale", 3));
    if (!(scale.allFinite() && scale.minCoeff() > 0.0)) {
      in.Fail(path + ".scale", "must be positive and finite");
    }
  }
  for (Eigen::Vector3d& p : points) p = p.cwiseProduct(scale);
  try {
    return MakeConvexHull(points);
  } catch (const InputError& e) {
    in.Fail(field, e.what());
  }
}

inline Shape ReadShape(const Reader& in, const Json& object, const std::string& path) {
  Shape shape;
  const std::string kind = in.String(in.Required(object, path, "shape"), path + ".shape");
  if (!ParseShapeKind(kind, &shape.kind)) {
    std::string known;
    for (const std::string& name : ShapeNames()) known += (known.empty() ? "" : ", ") + name;
    in.Fail(path + ".shape", "unknown shape '" + kind + "' (expected one of " + known + ")");
  }
  if (shape.kind == ShapeKind::Polyhedron) {
    shape.polyhedron = ReadConvexHull(in, object, path);
    return shape;
  }
  const ShapeType& type = *FindShapeType(shape.kind);
  const int count = type.size_count;
  if (count == 0) return shape;
  const Json& size = in.Required(object, path, "size");
  if (!size.is_array() || static_cast<int>(size.size()) != count) {
    in.Fail(path + ".size", "a " + kind + " takes " + type.size_meaning);
  }
  const Eigen::VectorXd v = in.Vector(size, path + ".size", count);
  shape.size.head(count) = v;
  std::string why;
  if (!shape.IsValid(&why)) in.Fail(path + ".size", why);
  return shape;
}

// The scene's "initial_overlap" policy on the bodies as placed: "reject" (default) fails with
// the pair and the depth; "separate" moves the movable bodies apart (SeparateOverlaps), with no
// velocity, and fails only if that cannot be done.
inline void ApplyInitialOverlapPolicy(const Reader& in, const Json& root,
                                      std::vector<PlacedShape>* placed) {
  std::string policy = "reject";
  if (root.contains("initial_overlap")) {
    policy = in.String(root.at("initial_overlap"), "initial_overlap");
    if (policy != "reject" && policy != "separate") {
      in.Fail("initial_overlap", "expected \"reject\" or \"separate\", got '" + policy + "'");
    }
  }
  if (policy == "reject") {
    const std::vector<OverlappingPair> pairs = FindOverlaps(*placed);
    if (!pairs.empty()) {
      in.Fail("bodies", DescribeOverlaps(*placed, pairs) +
                            " (move them apart, or set \"initial_overlap\": \"separate\")");
    }
    return;
  }
  try {
    SeparateOverlaps(placed);
  } catch (const std::invalid_argument& e) {
    in.Fail("bodies", e.what());
  }
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_JSON_READER_H_
