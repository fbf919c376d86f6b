// MJCF files as scenes (integrators/mjcf.h). The element tree (with includes expanded) comes
// from integrators/mjcf/tree.h; here the compiler settings, default classes and mesh assets are
// read first, as MuJoCo applies them wherever they stand in the file, then the world's bodies.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "contact/overlap.h"
#include "dynamics/mesh_file.h"
#include "dynamics/shapes/polyhedron.h"
#include "integrators/mjcf.h"
#include "integrators/mjcf/tree.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using internal::MjcfElement;
using Attributes = std::map<std::string, std::string>;

constexpr double kPi = 3.14159265358979323846;
// More bodies than this are refused (each becomes a body of the scene).
constexpr size_t kMaxMjcfBodies = 100'000;
// Pair laws a file may need when geoms' frictions differ (each is a row of the law table).
constexpr size_t kMaxPairLaws = 2'000'000;

const char* const kSupported =
    "ncpkit reads free bodies (<freejoint/>) of one geom and fixed geoms (plane, box, sphere, "
    "capsule, cylinder, ellipsoid, mesh), <option> timestep and gravity, <compiler>, <default>, "
    "<asset> meshes and <include>";

// ---------------------------------------------------------------------------------------------
// Messages and attribute values

std::string Describe(const MjcfElement& e) {
  const std::string* name = e.Find("name");
  return "<" + e.name + (name != nullptr ? " name=\"" + *name + "\"" : std::string()) + ">";
}

[[noreturn]] void Fail(const MjcfElement& e, const std::string& what) {
  throw InputError(e.file, e.line, Describe(e), what);
}

[[noreturn]] void Unsupported(const MjcfElement& e, const std::string& why) {
  Fail(e, why + " is not supported: " + kSupported);
}

// Every attribute of `e` must be in `allowed`.
void OnlyAttributes(const MjcfElement& e, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : e.attributes) {
    if (allowed.count(key) != 0) continue;
    std::string list;
    for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
    Fail(e, "attribute '" + key + "' is not supported (supported: " + list + ")");
  }
}

void NoChildren(const MjcfElement& e) {
  if (!e.children.empty()) Fail(e, "takes no elements, found <" + e.children[0].name + ">");
}

// Whitespace-separated numbers, each finite; between `min` and `max` of them.
std::vector<double> Numbers(const MjcfElement& e, const std::string& key, const std::string& text,
                            size_t min, size_t max) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (true) {
    while (*p != '\0' && std::isspace(static_cast<unsigned char>(*p)) != 0) ++p;
    if (*p == '\0') break;
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(p, &end);
    if (end == p || (*end != '\0' && std::isspace(static_cast<unsigned char>(*end)) == 0)) {
      Fail(e, key + ": '" + internal::Printable(text) + "' is not a list of numbers");
    }
    if (!std::isfinite(x) || errno == ERANGE) {
      Fail(e, key + ": every number must be finite, got '" + internal::Printable(text) + "'");
    }
    if (out.size() == max) Fail(e, key + ": more than " + std::to_string(max) + " numbers");
    out.push_back(x);
    p = end;
  }
  if (out.size() < min) {
    Fail(e, key + ": expected " + (min == max ? "" : "at least ") + std::to_string(min) +
                " numbers, got " + std::to_string(out.size()));
  }
  return out;
}

Eigen::Vector3d Vector3(const MjcfElement& e, const std::string& key, const std::string& text) {
  const std::vector<double> v = Numbers(e, key, text, 3, 3);
  return {v[0], v[1], v[2]};
}

double Number(const MjcfElement& e, const std::string& key, const std::string& text) {
  return Numbers(e, key, text, 1, 1)[0];
}

double Positive(const MjcfElement& e, const std::string& key, const std::string& text) {
  const double x = Number(e, key, text);
  if (!(x > 0.0)) Fail(e, key + " must be positive, got " + text);
  return x;
}

bool Boolean(const MjcfElement& e, const std::string& key, const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  Fail(e, key + ": expected true or false, got '" + internal::Printable(text) + "'");
}

// The attribute must be absent or one of `values`.
void RequireValue(const MjcfElement& e, const Attributes& a, const std::string& key,
                  const std::set<std::string>& values, const std::string& why) {
  const auto it = a.find(key);
  if (it != a.end() && values.count(it->second) == 0) {
    Fail(e, key + "=\"" + internal::Printable(it->second) + "\" is not supported: " + why);
  }
}

// A numeric attribute, absent or zero in every component.
void RequireZero(const MjcfElement& e, const Attributes& a, const std::string& key,
                 const std::string& why) {
  const auto it = a.find(key);
  if (it == a.end()) return;
  for (double x : Numbers(e, key, it->second, 1, 10)) {
    if (x != 0.0) Fail(e, key + "=\"" + it->second + "\" is not supported: " + why);
  }
}

// ---------------------------------------------------------------------------------------------
// The file's settings

struct Pose {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
};

Pose Compose(const Pose& a, const Pose& b) { return {a.p + a.q * b.p, (a.q * b.q).normalized()}; }

struct MeshAsset {
  const MjcfElement* element = nullptr;
  Attributes attributes;                         // with the mesh defaults of its class
  std::shared_ptr<const ConvexPolyhedron> hull;  // made when a geom first uses it
};

struct Model {
  std::string source;
  double angle = kPi / 180.0;  // radians per unit of the file's angles (compiler angle)
  std::string eulerseq = "xyz";
  std::string meshdir;  // folder of mesh files, with a trailing '/' (or "")
  bool strip_path = false;
  double timestep = 0.002;
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  // class -> element kind ("geom", "mesh", "joint") -> attributes
  std::map<std::string, std::map<std::string, Attributes>> classes;
  std::map<std::string, MeshAsset> meshes;
};

const std::set<std::string> kFrameKeys = {"pos", "quat", "euler", "axisangle", "xyaxes", "zaxis"};

std::set<std::string> With(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

void ReadCompiler(const MjcfElement& e, Model* model) {
  OnlyAttributes(e, {"angle", "eulerseq", "meshdir", "assetdir", "texturedir", "coordinate",
                     "inertiafromgeom", "discardvisual", "convexhull", "strippath", "usethread",
                     "exactmeshinertia", "autolimits"});
  NoChildren(e);
  Attributes a(e.attributes.begin(), e.attributes.end());
  RequireValue(e, a, "angle", {"degree", "radian"}, "angles are in degree or radian");
  if (a.count("angle") != 0) model->angle = a["angle"] == "radian" ? 1.0 : kPi / 180.0;
  if (a.count("eulerseq") != 0) {
    const std::string& seq = a["eulerseq"];
    const bool valid = seq.size() == 3 && std::all_of(seq.begin(), seq.end(), [](char c) {
                         return std::string("xyzXYZ").find(c) != std::string::npos;
                       });
    if (!valid) Fail(e, "eulerseq must be three of x, y, z, X, Y, Z, got '" + seq + "'");
    model->eulerseq = seq;
  }
  RequireValue(e, a, "coordinate", {"local"}, "frames are local to their parents");
  RequireValue(e, a, "inertiafromgeom", {"true", "auto"},
               "a body's mass comes from its geom or its <inertial>");
  RequireValue(e, a, "convexhull", {"true"}, "meshes collide as their convex hulls");
  const std::string folder = internal::FolderOf(model->source);
  for (const char* key : {"assetdir", "meshdir"}) {
    if (a.count(key) == 0) continue;
    const std::string& dir = a[key];
    model->meshdir = (dir.empty() || dir[0] == '/' ? dir : folder + dir);
    if (!model->meshdir.empty() && model->meshdir.back() != '/') model->meshdir += '/';
  }
  if (a.count("strippath") != 0) model->strip_path = Boolean(e, "strippath", a["strippath"]);
}

void ReadOption(const MjcfElement& e, Model* model) {
  OnlyAttributes(e, {"timestep",       "gravity",       "integrator",        "cone",
                     "impratio",       "solver",        "iterations",        "tolerance",
                     "ls_iterations",  "ls_tolerance",  "noslip_iterations", "noslip_tolerance",
                     "mpr_iterations", "mpr_tolerance", "jacobian",          "collision",
                     "apirate",        "wind",          "density",           "viscosity",
                     "magnetic"});
  for (const MjcfElement& child : e.children) {
    Unsupported(child, "<" + child.name + "> (flags that switch parts of MuJoCo's model off)");
  }
  const Attributes a(e.attributes.begin(), e.attributes.end());
  if (a.count("timestep") != 0) model->timestep = Positive(e, "timestep", a.at("timestep"));
  if (a.count("gravity") != 0) model->gravity = Vector3(e, "gravity", a.at("gravity"));
  RequireValue(e, a, "collision", {"all", "dynamic"}, "every pair of geoms may touch");
  for (const char* key : {"wind", "density", "viscosity"}) {
    RequireZero(e, a, key, "ncpkit's bodies move in vacuum");
  }
}

// ---------------------------------------------------------------------------------------------
// Default classes

const std::set<std::string> kGeomKeys = With(
    {"name",   "class",  "type",   "size",     "fromto",   "mass",    "density",     "friction",
     "condim", "mesh",   "rgba",   "material", "group",    "contype", "conaffinity", "solref",
     "solimp", "solmix", "margin", "gap",      "priority", "user"},
    kFrameKeys);
const std::set<std::string> kMeshKeys = {"name",         "class",  "file",     "vertex",
                                         "scale",        "normal", "texcoord", "face",
                                         "smoothnormal", "refpos", "refquat",  "content_type"};
const std::set<std::string> kJointKeys = {
    "name",        "class",          "type",           "group",
    "pos",         "axis",           "range",          "limited",
    "ref",         "springref",      "margin",         "solreflimit",
    "solimplimit", "solreffriction", "solimpfriction", "user",
    "damping",     "armature",       "frictionloss",   "stiffness"};
// Defaults of elements this reader refuses or never reads: harmless until such an element uses
// them.
const std::set<std::string> kInertDefaults = {
    "site",     "camera",  "light",    "material",    "motor",    "position",
    "velocity", "general", "tendon",   "pair",        "equality", "texture",
    "cylinder", "muscle",  "adhesion", "intvelocity", "damper"};

void ReadDefault(const MjcfElement& e, const std::string& parent, bool top, Model* model) {
  OnlyAttributes(e, {"class"});
  const std::string* given = e.Find("class");
  if (!top && given == nullptr) Fail(e, "a nested <default> needs a class");
  const std::string name = given != nullptr ? *given : "main";
  if (!top || name != "main") {
    if (model->classes.count(name) != 0) Fail(e, "the class '" + name + "' is defined twice");
    model->classes[name] = model->classes[parent];
  }
  for (const MjcfElement& child : e.children) {
    if (child.name == "default") {
      ReadDefault(child, name, false, model);
      continue;
    }
    if (kInertDefaults.count(child.name) != 0) continue;
    const std::set<std::string>* keys = child.name == "geom"    ? &kGeomKeys
                                        : child.name == "mesh"  ? &kMeshKeys
                                        : child.name == "joint" ? &kJointKeys
                                                                : nullptr;
    if (keys == nullptr) Unsupported(child, "a default for <" + child.name + ">");
    OnlyAttributes(child, *keys);
    NoChildren(child);
    for (const auto& [key, value] : child.attributes) {
      if (key != "name" && key != "class") model->classes[name][child.name][key] = value;
    }
  }
}

// The attributes of `e` (a geom, mesh or joint) over those of its class: its own class
// attribute, else `inherited` (a body's childclass), else "main".
Attributes Resolve(const Model& model, const MjcfElement& e, const std::string& inherited) {
  const std::string* own = e.Find("class");
  const std::string cls = own != nullptr ? *own : inherited;
  const auto found = model.classes.find(cls);
  if (found == model.classes.end()) Fail(e, "no default class '" + cls + "'");
  Attributes out;
  const auto kind = found->second.find(e.name);
  if (kind != found->second.end()) out = kind->second;
  for (const auto& [key, value] : e.attributes) out[key] = value;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Frames

Eigen::Quaterniond AxisAngle(const Eigen::Vector3d& axis, double angle) {
  return Eigen::Quaterniond(Eigen::AngleAxisd(angle, axis.normalized()));
}

Eigen::Quaterniond Euler(const Model& model, const MjcfElement& e, const std::string& text) {
  const Eigen::Vector3d angles = Vector3(e, "euler", text) * model.angle;
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  for (int k = 0; k < 3; ++k) {
    const char c = model.eulerseq[k];
    const Eigen::Vector3d axis = Eigen::Vector3d::Unit(std::tolower(c) - 'x');
    const Eigen::Quaterniond r = AxisAngle(axis, angles[k]);
    // Lower case: about the axes as they have turned (intrinsic); upper case: about the fixed
    // ones (extrinsic).
    q = std::islower(static_cast<unsigned char>(c)) != 0 ? q * r : r * q;
  }
  return q.normalized();
}

Eigen::Vector3d NonZero(const MjcfElement& e, const std::string& key, const Eigen::Vector3d& v) {
  if (!(v.norm() > 1e-12)) Fail(e, key + " must not be zero");
  return v;
}

Eigen::Quaterniond XyAxes(const MjcfElement& e, const std::string& text) {
  const std::vector<double> v = Numbers(e, "xyaxes", text, 6, 6);
  const Eigen::Vector3d x = NonZero(e, "xyaxes", Eigen::Vector3d(v[0], v[1], v[2])).normalized();
  Eigen::Vector3d y(v[3], v[4], v[5]);
  y -= x * x.dot(y);
  y = NonZero(e, "xyaxes (y off x)", y).normalized();
  Eigen::Matrix3d R;
  R << x, y, x.cross(y);
  return Eigen::Quaterniond(R).normalized();
}

Eigen::Quaterniond Orientation(const Model& model, const MjcfElement& e, const Attributes& a) {
  int given = 0;
  for (const char* key : {"quat", "euler", "axisangle", "xyaxes", "zaxis"}) given += a.count(key);
  if (given > 1) Fail(e, "give one of quat, euler, axisangle, xyaxes, zaxis");
  if (a.count("quat") != 0) {
    const std::vector<double> v = Numbers(e, "quat", a.at("quat"), 4, 4);
    const Eigen::Quaterniond q(v[0], v[1], v[2], v[3]);
    if (!(q.norm() > 1e-12)) Fail(e, "quat must not be zero");
    return q.normalized();
  }
  if (a.count("euler") != 0) return Euler(model, e, a.at("euler"));
  if (a.count("axisangle") != 0) {
    const std::vector<double> v = Numbers(e, "axisangle", a.at("axisangle"), 4, 4);
    return AxisAngle(NonZero(e, "axisangle's axis", Eigen::Vector3d(v[0], v[1], v[2])),
                     v[3] * model.angle);
  }
  if (a.count("xyaxes") != 0) return XyAxes(e, a.at("xyaxes"));
  if (a.count("zaxis") != 0) {
    const Eigen::Vector3d z = NonZero(e, "zaxis", Vector3(e, "zaxis", a.at("zaxis")));
    return Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), z).normalized();
  }
  return Eigen::Quaterniond::Identity();
}

Pose Frame(const Model& model, const MjcfElement& e, const Attributes& a) {
  Pose pose;
  if (a.count("pos") != 0) pose.p = Vector3(e, "pos", a.at("pos"));
  pose.q = Orientation(model, e, a);
  return pose;
}

// ---------------------------------------------------------------------------------------------
// Geoms

// A geom as a shape, its frame in its body's (the shape's centre and axes), its volume and its
// contact settings.
struct Geom {
  Shape shape;
  Pose frame;
  double volume = 0.0;
  double mu = 1.0;
  int condim = 3;
};

std::shared_ptr<const ConvexPolyhedron> MeshHull(Model* model, const MjcfElement& geom,
                                                 const std::string& name) {
  const auto found = model->meshes.find(name);
  if (found == model->meshes.end()) Fail(geom, "no mesh asset named '" + name + "'");
  MeshAsset& asset = found->second;
  if (asset.hull) return asset.hull;
  const MjcfElement& e = *asset.element;
  const Attributes& a = asset.attributes;
  std::vector<Eigen::Vector3d> points;
  try {
    if (a.count("vertex") != 0) {
      const std::vector<double> v =
          Numbers(e, "vertex", a.at("vertex"), 12, 3 * static_cast<size_t>(kMaxHullPoints));
      if (v.size() % 3 != 0) Fail(e, "vertex: the number of coordinates must be a multiple of 3");
      for (size_t k = 0; k < v.size(); k += 3) points.emplace_back(v[k], v[k + 1], v[k + 2]);
    } else {
      std::string file = a.at("file");
      if (model->strip_path) file = file.substr(file.find_last_of('/') + 1);
      points = ReadMeshVertices(file[0] == '/' ? file : model->meshdir + file);
    }
    if (a.count("scale") != 0) {
      const Eigen::Vector3d scale = Vector3(e, "scale", a.at("scale"));
      if (!(scale.minCoeff() > 0.0)) Fail(e, "scale must be positive");
      for (Eigen::Vector3d& p : points) p = p.cwiseProduct(scale);
    }
    asset.hull = MakeConvexHull(points);
  } catch (const InputError& error) {
    if (error.line() > 0 && error.source() == e.file) throw;
    Fail(e, error.what());
  }
  return asset.hull;
}

void ReadMeshAsset(const MjcfElement& e, Model* model) {
  OnlyAttributes(e, kMeshKeys);
  NoChildren(e);
  const std::string* name = e.Find("name");
  const std::string* file = e.Find("file");
  // MuJoCo names a mesh without a name by its file's name without the extension.
  std::string key = name != nullptr ? *name : std::string();
  if (key.empty() && file != nullptr) {
    key = file->substr(file->find_last_of('/') + 1);
    key = key.substr(0, key.find_last_of('.'));
  }
  if (key.empty()) Fail(e, "a mesh needs a name or a file");
  if (model->meshes.count(key) != 0) Fail(e, "the mesh name '" + key + "' is used twice");
  MeshAsset asset;
  asset.element = &e;
  asset.attributes = Resolve(*model, e, "main");
  const Attributes& a = asset.attributes;
  if ((a.count("file") != 0) == (a.count("vertex") != 0)) {
    Fail(e, "a mesh takes a file or a vertex list, one of them");
  }
  RequireZero(e, a, "refpos", "a mesh's points are in its geom's frame");
  if (a.count("refquat") != 0) {
    const std::vector<double> q = Numbers(e, "refquat", a.at("refquat"), 4, 4);
    if (q[0] <= 0.0 || q[1] != 0.0 || q[2] != 0.0 || q[3] != 0.0) {
      Fail(e, "refquat is not supported: a mesh's points are in its geom's frame");
    }
  }
  model->meshes[key] = std::move(asset);
}

void ReadAsset(const MjcfElement& e, Model* model) {
  OnlyAttributes(e, {});
  for (const MjcfElement& child : e.children) {
    if (child.name == "mesh") {
      ReadMeshAsset(child, model);
    } else if (child.name != "texture" && child.name != "material" && child.name != "skin") {
      Unsupported(child, "the asset <" + child.name + ">");
    }
  }
}

double SizeAt(const MjcfElement& e, const std::vector<double>& size, size_t k) {
  if (size.size() <= k) {
    Fail(e, "size needs " + std::to_string(k + 1) + " numbers, got " + std::to_string(size.size()));
  }
  if (!(size[k] > 0.0)) Fail(e, "size's number " + std::to_string(k + 1) + " must be positive");
  return size[k];
}

// A capsule's or cylinder's axis is z in MJCF, x in ncpkit: its frame turns x onto z.
const Eigen::Quaterniond kXToZ(Eigen::AngleAxisd(-kPi / 2.0, Eigen::Vector3d::UnitY()));

// The frame of a capsule or cylinder given by fromto (its half-length into `half`).
Pose FromTo(const MjcfElement& e, const std::string& text, double* half) {
  const std::vector<double> v = Numbers(e, "fromto", text, 6, 6);
  const Eigen::Vector3d a(v[0], v[1], v[2]), b(v[3], v[4], v[5]);
  *half = 0.5 * (b - a).norm();
  if (!(*half > 0.0)) Fail(e, "fromto's two points must differ");
  return {0.5 * (a + b), Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), b - a)};
}

// The round shapes along an axis: sizes [radius, length].
void ReadAxial(const MjcfElement& e, const Attributes& a, const std::vector<double>& size,
               Geom* g) {
  double half = 0.0;
  if (a.count("fromto") != 0) {
    g->frame = FromTo(e, a.at("fromto"), &half);
  } else {
    half = SizeAt(e, size, 1);
  }
  const double r = SizeAt(e, size, 0);
  g->shape.size.head<2>() << r, 2.0 * half;
  g->frame.q = (g->frame.q * kXToZ).normalized();
  g->volume = kPi * r * r * 2.0 * half +
              (g->shape.kind == ShapeKind::Capsule ? 4.0 / 3.0 * kPi * r * r * r : 0.0);
}

void ReadGeomSize(const MjcfElement& e, const Attributes& a, const std::string& type, Model* model,
                  Geom* g) {
  const std::vector<double> size =
      a.count("size") != 0 ? Numbers(e, "size", a.at("size"), 0, 3) : std::vector<double>();
  if (a.count("fromto") != 0 && type != "capsule" && type != "cylinder") {
    Fail(e, "fromto is read for capsules and cylinders");
  }
  if (type == "plane") {
    g->shape.kind = ShapeKind::HalfSpace;
  } else if (type == "sphere") {
    g->shape.kind = ShapeKind::Sphere;
    g->shape.size[0] = SizeAt(e, size, 0);
    g->volume = 4.0 / 3.0 * kPi * std::pow(g->shape.size[0], 3);
  } else if (type == "box" || type == "ellipsoid") {
    g->shape.kind = type == "box" ? ShapeKind::Box : ShapeKind::Ellipsoid;
    for (size_t k = 0; k < 3; ++k) g->shape.size[k] = SizeAt(e, size, k);
    g->volume = g->shape.size.head<3>().prod() * (type == "box" ? 8.0 : 4.0 / 3.0 * kPi);
    if (type == "box") g->shape.size.head<3>() *= 2.0;
  } else if (type == "capsule" || type == "cylinder") {
    g->shape.kind = type == "capsule" ? ShapeKind::Capsule : ShapeKind::Cylinder;
    ReadAxial(e, a, size, g);
  } else if (type == "mesh") {
    if (a.count("mesh") == 0) Fail(e, "a mesh geom names its mesh asset (mesh=\"...\")");
    g->shape.kind = ShapeKind::Polyhedron;
    g->shape.polyhedron = MeshHull(model, e, a.at("mesh"));
    g->frame.p += g->frame.q * g->shape.polyhedron->centroid;
    g->volume = g->shape.polyhedron->volume;
  } else {
    Unsupported(e, "the geom type '" + internal::Printable(type) + "'");
  }
  std::string why;
  if (!g->shape.IsValid(&why)) Fail(e, why);
}

void CheckGeomContact(const MjcfElement& e, const Attributes& a, Geom* g) {
  RequireValue(e, a, "contype", {"1"}, "every geom collides (no collision filtering)");
  RequireValue(e, a, "conaffinity", {"1"}, "every geom collides (no collision filtering)");
  RequireValue(e, a, "priority", {"0"}, "a pair's friction is the larger of its geoms'");
  RequireZero(e, a, "margin", "contacts are taken at touch");
  RequireZero(e, a, "gap", "contacts are taken at touch");
  if (a.count("condim") != 0) {
    const std::string& c = a.at("condim");
    if (c != "1" && c != "3") Fail(e, "condim " + c + " is not supported (1 or 3)");
    g->condim = c == "1" ? 1 : 3;
  }
  if (a.count("friction") != 0) {
    g->mu = Numbers(e, "friction", a.at("friction"), 1, 3)[0];
    if (!(g->mu >= 0.0)) Fail(e, "friction must be >= 0");
  }
}

Geom ReadGeom(Model* model, const MjcfElement& e, const std::string& cls) {
  OnlyAttributes(e, kGeomKeys);
  NoChildren(e);
  const Attributes a = Resolve(*model, e, cls);
  Geom g;
  g.frame = Frame(*model, e, a);
  const std::string type = a.count("type") != 0 ? a.at("type") : "sphere";
  ReadGeomSize(e, a, type, model, &g);
  CheckGeomContact(e, a, &g);
  return g;
}

// ---------------------------------------------------------------------------------------------
// Bodies

// The bodies read so far, with their geoms' contact settings and the names taken.
struct World {
  std::vector<Body> bodies;
  std::vector<Geom> geoms;
  std::vector<const MjcfElement*> elements;
  std::unordered_set<std::string> names;
};

// A body's name: the element's, else `kind` and a number, made unique among the scene's.
std::string BodyName(const MjcfElement& e, const std::string& kind, World* world) {
  const std::string* name = e.Find("name");
  if (name != nullptr && !name->empty()) {
    if (world->names.count(*name) != 0) Fail(e, "the name '" + *name + "' is used twice");
    world->names.insert(*name);
    return *name;
  }
  for (size_t k = world->bodies.size();; ++k) {
    const std::string made = kind + std::to_string(k);
    if (world->names.insert(made).second) return made;
  }
}

void AddBody(const MjcfElement& e, Body body, const Geom& geom, World* world) {
  if (world->bodies.size() >= kMaxMjcfBodies) Fail(e, "more than 100,000 bodies");
  try {
    ValidateBody(body, true);
  } catch (const InputError& error) {
    Fail(e, error.what());
  }
  world->bodies.push_back(std::move(body));
  world->geoms.push_back(geom);
  world->elements.push_back(&e);
}

void AddFixedGeom(Model* model, const MjcfElement& e, const Pose& parent, const std::string& cls,
                  World* world) {
  const Geom g = ReadGeom(model, e, cls);
  Body body;
  body.name = BodyName(e, "geom", world);
  body.shape = g.shape;
  body.fixed = true;
  const Pose pose = Compose(parent, g.frame);
  body.state.position = pose.p;
  body.state.orientation = pose.q;
  AddBody(e, std::move(body), g, world);
}

// An <inertial>'s mass and inertia about the geom's centre, in the geom's frame.
MassProperties ReadInertial(const Model& model, const MjcfElement& e, const Geom& geom) {
  OnlyAttributes(e, With({"mass", "diaginertia", "fullinertia"}, kFrameKeys));
  NoChildren(e);
  const Attributes a(e.attributes.begin(), e.attributes.end());
  if (a.count("mass") == 0) Fail(e, "an <inertial> needs a mass");
  if ((a.count("diaginertia") != 0) == (a.count("fullinertia") != 0)) {
    Fail(e, "an <inertial> needs diaginertia or fullinertia, one of them");
  }
  const Pose frame = Frame(model, e, a);
  const double scale = 1.0 + frame.p.norm() + geom.frame.p.norm();
  if ((frame.p - geom.frame.p).norm() > 1e-9 * scale) {
    Fail(e,
         "the centre of mass must be the geom's centre (ncpkit puts a body's centre of mass at "
         "its shape's)");
  }
  Eigen::Matrix3d inertia;
  if (a.count("diaginertia") != 0) {
    const Eigen::Matrix3d R = frame.q.toRotationMatrix();
    inertia = R * Vector3(e, "diaginertia", a.at("diaginertia")).asDiagonal() * R.transpose();
  } else {
    const std::vector<double> v = Numbers(e, "fullinertia", a.at("fullinertia"), 6, 6);
    inertia << v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2];
  }
  // MuJoCo's check: principal moments A, B, C of a solid satisfy A + B >= C.
  const Eigen::Vector3d moments =
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(inertia).eigenvalues();
  if (!(moments[0] > 0.0) || moments[0] + moments[1] < moments[2] * (1.0 - 1e-12)) {
    Fail(e,
         "the principal moments of inertia must be positive and satisfy the triangle "
         "inequality A + B >= C");
  }
  const Eigen::Matrix3d G = geom.frame.q.toRotationMatrix();
  MassProperties mass;
  mass.mass = Positive(e, "mass", a.at("mass"));
  mass.body_inertia = G.transpose() * inertia * G;
  return mass;
}

// Mass from the geom's mass, or its density (MuJoCo's default 1000) times its volume.
MassProperties GeomMass(const Model& model, const MjcfElement& e, const std::string& cls,
                        const Geom& g) {
  const Attributes a = Resolve(model, e, cls);
  double mass = 0.0;
  if (a.count("mass") != 0) {
    mass = Positive(e, "mass", a.at("mass"));
  } else {
    const double density = a.count("density") != 0 ? Number(e, "density", a.at("density")) : 1000.0;
    mass = density * g.volume;
    if (!(mass > 0.0))
      Fail(e,
           "a moving geom's mass must be positive (density " + internal::NumberText(density) + ")");
  }
  return SolidMassProperties(g.shape, mass);
}

// The free joint: <freejoint/>, or a <joint> whose type (with its class's) is free.
bool IsFreeJoint(const Model& model, const MjcfElement& e, const std::string& cls) {
  if (e.name == "freejoint") {
    OnlyAttributes(e, {"name", "group"});
    return true;
  }
  OnlyAttributes(e, kJointKeys);
  const Attributes a = Resolve(model, e, cls);
  const std::string type = a.count("type") != 0 ? a.at("type") : "hinge";
  if (type != "free") Unsupported(e, "a " + type + " joint");
  for (const char* key : {"damping", "armature", "frictionloss", "stiffness"}) {
    RequireZero(e, a, key, "a free body moves without joint damping, armature or friction");
  }
  return true;
}

struct BodyParts {
  bool free = false;
  const MjcfElement* geom = nullptr;
  const MjcfElement* inertial = nullptr;
};

BodyParts SortChildren(const Model& model, const MjcfElement& e, const std::string& cls) {
  BodyParts parts;
  for (const MjcfElement& child : e.children) {
    if (child.name == "freejoint" || child.name == "joint") {
      if (parts.free) Fail(child, "a body takes one free joint");
      parts.free = IsFreeJoint(model, child, cls);
    } else if (child.name == "inertial") {
      if (parts.inertial != nullptr) Fail(child, "a body takes one <inertial>");
      parts.inertial = &child;
    } else if (child.name == "geom" && parts.geom == nullptr) {
      parts.geom = &child;
    } else if (child.name != "geom" && child.name != "body" && child.name != "site" &&
               child.name != "camera" && child.name != "light") {
      Unsupported(child, "<" + child.name + "> in a body");
    }
  }
  return parts;
}

void ReadFreeBody(Model* model, const MjcfElement& e, const Pose& pose, const std::string& cls,
                  const BodyParts& parts, World* world) {
  int geoms = 0;
  for (const MjcfElement& child : e.children) {
    if (child.name == "body") Unsupported(child, "a body inside a moving body (a compound body)");
    geoms += child.name == "geom" ? 1 : 0;
  }
  if (geoms != 1) {
    Unsupported(e, "a moving body of " + std::to_string(geoms) + " geoms (each takes one)");
  }
  const Geom g = ReadGeom(model, *parts.geom, cls);
  if (g.shape.kind == ShapeKind::HalfSpace) Fail(*parts.geom, "a plane cannot move");
  Body body;
  body.name = BodyName(e, "body", world);
  body.shape = g.shape;
  const Pose at = Compose(pose, g.frame);
  body.state.position = at.p;
  body.state.orientation = at.q;
  body.mass = parts.inertial != nullptr ? ReadInertial(*model, *parts.inertial, g)
                                        : GeomMass(*model, *parts.geom, cls, g);
  std::string why;
  if (!body.mass.IsValid(&why)) Fail(parts.inertial != nullptr ? *parts.inertial : e, why);
  AddBody(e, std::move(body), g, world);
}

// A <body>: free (a top-level body with a free joint) or welded to the world with its geoms and
// the bodies inside it.
void ReadBody(Model* model, const MjcfElement& e, const Pose& parent, bool top,
              const std::string& inherited, World* world) {
  OnlyAttributes(e, With({"name", "childclass", "mocap", "user", "gravcomp"}, kFrameKeys));
  const Attributes own(e.attributes.begin(), e.attributes.end());
  RequireValue(e, own, "mocap", {"false"}, "bodies move by contact and gravity");
  RequireZero(e, own, "gravcomp", "gravity acts on every body");
  const std::string cls = own.count("childclass") != 0 ? own.at("childclass") : inherited;
  if (model->classes.count(cls) == 0) Fail(e, "no default class '" + cls + "'");
  const Pose pose = Compose(parent, Frame(*model, e, own));
  const BodyParts parts = SortChildren(*model, e, cls);
  if (parts.free) {
    if (!top) Unsupported(e, "a free joint on a body inside another body");
    ReadFreeBody(model, e, pose, cls, parts, world);
    return;
  }
  for (const MjcfElement& child : e.children) {
    if (child.name == "geom") AddFixedGeom(model, child, pose, cls, world);
    if (child.name == "body") ReadBody(model, child, pose, false, cls, world);
  }
}

void ReadWorldBody(Model* model, const MjcfElement& e, World* world) {
  OnlyAttributes(e, {"name", "childclass"});
  const std::string cls = e.Find("childclass") != nullptr ? *e.Find("childclass") : "main";
  if (model->classes.count(cls) == 0) Fail(e, "no default class '" + cls + "'");
  for (const MjcfElement& child : e.children) {
    if (child.name == "geom") {
      AddFixedGeom(model, child, Pose(), cls, world);
    } else if (child.name == "body") {
      ReadBody(model, child, Pose(), true, cls, world);
    } else if (child.name != "site" && child.name != "camera" && child.name != "light") {
      Unsupported(child, "<" + child.name + "> in the world body");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The scene

// Each pair's friction is the larger of its geoms' (MuJoCo's rule at equal priority), zero when
// both geoms have condim 1; pairs other than the default class's get a law of their own.
void SetFriction(const MjcfElement& root, const Model& model, const World& world, Scene* scene) {
  Geom main;
  const auto defaults = model.classes.at("main").find("geom");
  if (defaults != model.classes.at("main").end()) {
    Attributes a = defaults->second;
    CheckGeomContact(root, a, &main);
  }
  scene->laws.default_law.mu = main.condim == 1 ? 0.0 : main.mu;
  std::vector<size_t> odd;
  for (size_t i = 0; i < world.geoms.size(); ++i) {
    if (world.geoms[i].mu != main.mu || world.geoms[i].condim != main.condim) odd.push_back(i);
  }
  if (odd.size() * world.geoms.size() > kMaxPairLaws) {
    Fail(root, std::to_string(odd.size()) + " geoms have a friction of their own among " +
                   std::to_string(world.geoms.size()) +
                   ": too many pair laws (give the friction in the default class)");
  }
  for (size_t i : odd) {
    for (size_t j = 0; j < world.geoms.size(); ++j) {
      if (j == i || (world.bodies[i].fixed && world.bodies[j].fixed)) continue;
      const Geom &a = world.geoms[i], &b = world.geoms[j];
      ContactLaw law = scene->laws.default_law;
      law.mu = a.condim == 1 && b.condim == 1 ? 0.0 : std::max(a.mu, b.mu);
      scene->laws.Set(world.bodies[i].name, world.bodies[j].name, law);
    }
  }
}

void RejectOverlaps(const World& world, const std::string& source) {
  std::vector<PlacedShape> placed;
  for (const Body& b : world.bodies) {
    PlacedShape p;
    p.name = b.name;
    p.shape = b.shape;
    p.pose.position = b.state.position;
    p.pose.rotation = b.state.orientation.toRotationMatrix();
    p.inverse_mass = b.fixed ? 0.0 : 1.0 / b.mass.mass;
    placed.push_back(p);
  }
  const std::vector<OverlappingPair> pairs = FindOverlaps(placed);
  if (pairs.empty()) return;
  const MjcfElement& e = *world.elements[pairs[0].a];
  throw InputError(source, 0, "",
                   DescribeOverlaps(placed, pairs) + " (the first at " + e.file + ":" +
                       std::to_string(e.line) + "; move them apart)");
}

const std::set<std::string> kIgnoredSections = {"visual", "statistic", "custom", "keyframe"};

// Settings first, wherever they stand: compiler, option and size, then defaults, then assets.
void ReadSettings(const MjcfElement& root, Model* model) {
  model->classes["main"];
  for (const MjcfElement& e : root.children) {
    if (e.name == "compiler") ReadCompiler(e, model);
  }
  for (const MjcfElement& e : root.children) {
    if (e.name == "option") {
      ReadOption(e, model);
    } else if (e.name == "default") {
      ReadDefault(e, "main", true, model);
    } else if (e.name != "compiler" && e.name != "size" && e.name != "asset" &&
               e.name != "worldbody" && kIgnoredSections.count(e.name) == 0) {
      Unsupported(e, "<" + e.name + ">");
    }
  }
  for (const MjcfElement& e : root.children) {
    if (e.name == "asset") ReadAsset(e, model);
  }
}

}  // namespace

bool IsMjcfPath(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return false;
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == "xml" || ext == "mjcf";
}

bool LooksLikeXml(const std::string& text) {
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) return c == '<';
  }
  return false;
}

Scene ParseMjcfScene(const std::string& text, const std::string& source) {
  const MjcfElement root = internal::ParseMjcfTree(text, source);
  OnlyAttributes(root, {"model"});
  Model model;
  model.source = source;
  model.meshdir = internal::FolderOf(source);
  ReadSettings(root, &model);
  World world;
  for (const MjcfElement& e : root.children) {
    if (e.name == "worldbody") ReadWorldBody(&model, e, &world);
  }
  if (world.bodies.empty()) throw InputError(source, 0, "", "the model has no geoms");
  Scene scene;
  scene.SetStepper("explicit");
  // An MJCF file carries no tolerance of ncpkit's. It gets FCLib error 1e-6, the tolerance of
  // the engine scenes and of `ncpkit fclib`, rather than the stepper's 1e-8: engine models are
  // piles of hundreds of bodies, whose Coulomb problems of a thousand contacts the cone's
  // solvers take to 1e-6 three times faster (docs/reliability.md, the rock pile).
  scene.mutable_settings().tolerance = kMjcfTolerance;
  scene.name = root.Find("model") != nullptr ? *root.Find("model") : source;
  scene.mutable_settings().h = model.timestep;
  scene.mutable_settings().gravity = model.gravity;
  SetFriction(root, model, world, &scene);
  RejectOverlaps(world, source);
  scene.bodies = std::move(world.bodies);
  try {
    MakeStepper(scene);
  } catch (const InputError& e) {
    throw InputError(source, 0, "", e.what());
  }
  return scene;
}

Scene LoadMjcfScene(const std::string& path) {
  return ParseMjcfScene(internal::ReadTextFile(path), path);
}

}  // namespace ncpkit
