#include "integrators/scene.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "contact/overlap.h"
#include "integrators/json_reader.h"
#include "integrators/limits.h"
#include "readers/text_scanner.h"

namespace ncpkit {
namespace {

using Json = nlohmann::json;
using internal::ApplyInitialOverlapPolicy;
using internal::Reader;
using internal::ReadOrientation;
using internal::ReadShape;

const char* const kQuantities[] = {"x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"};

void ReadLawFields(const Reader& in, const Json& object, const std::string& path, ContactLaw* law) {
  law->mu = in.Number(object, path, "mu", law->mu);
  law->e_t = in.Number(object, path, "e_t", law->e_t);
  law->e_o = in.Number(object, path, "e_o", law->e_o);
  law->e_r = in.Number(object, path, "e_r", law->e_r);
  law->torsion = in.Bool(object, path, "torsion", law->torsion);
  if (object.contains("compliance")) {
    const Json& c = object.at("compliance");
    const std::string cpath = path + ".compliance";
    in.OnlyKeys(
        c, cpath,
        {"thickness", "stiffness", "damping", "tangential_stiffness", "tangential_damping"});
    law->thickness = in.Positive(c, cpath, "thickness");
    law->stiffness = in.Positive(c, cpath, "stiffness");
    law->damping = in.Number(c, cpath, "damping", 0.0);
    law->tangential_stiffness = in.Number(c, cpath, "tangential_stiffness", 0.0);
    law->tangential_damping = in.Number(c, cpath, "tangential_damping", 0.0);
  }
  std::string why;
  if (!law->IsValid(&why)) in.Fail(path, why);
}

// Bodies overlapping at the start would be pushed apart in the first step at any speed (a cube
// 0.5 m into the ground leaves at 50 m/s): see ApplyInitialOverlapPolicy().
void CheckInitialOverlap(const Reader& in, const Json& root, std::vector<Body>* bodies) {
  std::vector<PlacedShape> placed;
  for (const Body& b : *bodies) {
    PlacedShape p;
    p.name = b.name;
    p.shape = b.shape;
    p.pose.position = b.state.position;
    p.pose.rotation = b.state.orientation.toRotationMatrix();
    p.inverse_mass = b.fixed ? 0.0 : 1.0 / b.mass.mass;
    placed.push_back(p);
  }
  ApplyInitialOverlapPolicy(in, root, &placed);
  for (size_t i = 0; i < placed.size(); ++i) (*bodies)[i].state.position = placed[i].pose.position;
}

}  // namespace

bool IsSolverVariant(const std::string& variant) {
  try {
    ImplicitStepperOptions options;
    ApplySolverVariant(variant, &options);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options) {
  SolverVariant parsed;
  try {
    parsed = ParseSolverVariant(variant);
  } catch (const InputError&) {
    parsed = SolverVariant();
  }
  if (!parsed.model.empty() || !IsSolverName(parsed.solver, ProblemKind::Mixed)) {
    throw InputError("unknown solver '" + variant + "' (expected one of " +
                     SolverNameList(ProblemKind::Mixed) +
                     ", or any of them with -cold: no warm start)");
  }
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
}

double StateQuantity(const RigidBodyState& state, int quantity) {
  if (quantity < 3) return state.position[quantity];
  if (quantity < 6) return state.linear_velocity[quantity - 3];
  return state.angular_velocity[quantity - 6];
}

Scene ParseScene(const std::string& text, const std::string& source) {
  const Reader in(source);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    throw std::invalid_argument(source + ": not valid JSON: " + e.what());
  }
  in.OnlyKeys(root, "scene",
              {"name", "description", "h", "duration", "gravity", "solver", "tolerance",
               "max_iterations", "warm_start", "contact_margin", "bodies", "fixed", "contact",
               "pairs", "impulses", "initial_overlap"});
  Scene scene;
  scene.name = root.contains("name") ? in.String(root.at("name"), "name") : source;
  if (root.contains("description")) {
    scene.description = in.String(root.at("description"), "description");
  }
  ImplicitStepperOptions& options = scene.options;
  options.h = in.Positive(root, "scene", "h");
  scene.duration = in.Positive(root, "scene", "duration");
  options.gravity = in.Vector3(root, "scene", "gravity", options.gravity);
  if (root.contains("solver")) {
    options.solver = in.String(root.at("solver"), "solver");
    if (!IsSolverName(options.solver, ProblemKind::Mixed)) {
      in.Fail("solver", "unknown solver '" + options.solver + "'");
    }
  }
  options.tolerance = in.Number(root, "scene", "tolerance", options.tolerance);
  if (!(options.tolerance > 0.0)) in.Fail("tolerance", "must be positive");
  options.max_iterations = static_cast<int>(
      in.Integer(root, "scene", "max_iterations", options.max_iterations, 1, kMaxSolverIterations));
  options.warm_start = in.Bool(root, "scene", "warm_start", options.warm_start);
  options.contact_margin = in.Number(root, "scene", "contact_margin", options.contact_margin);
  if (options.contact_margin < 0.0) in.Fail("contact_margin", "must be >= 0");

  const Json& bodies = in.Required(root, "scene", "bodies");
  if (!bodies.is_array() || bodies.empty()) in.Fail("bodies", "expected a non-empty array");
  std::set<std::string> names;
  auto add_name = [&](const std::string& name, const std::string& path) {
    if (name.empty()) in.Fail(path + ".name", "must not be empty");
    if (!names.insert(name).second) in.Fail(path + ".name", "'" + name + "' is used twice");
  };
  for (size_t k = 0; k < bodies.size(); ++k) {
    const std::string path = "bodies[" + std::to_string(k) + "]";
    const Json& b = bodies[k];
    in.OnlyKeys(b, path,
                {"name", "shape", "size", "mass", "inertia", "position", "orientation", "velocity",
                 "angular_velocity"});
    Body body;
    body.name = in.String(in.Required(b, path, "name"), path + ".name");
    add_name(body.name, path);
    body.shape = ReadShape(in, b, path);
    if (body.shape.kind == ShapeKind::HalfSpace) {
      in.Fail(path + ".shape", "a plane cannot move: list it under \"fixed\"");
    }
    const double mass = in.Number(in.Required(b, path, "mass"), path + ".mass");
    if (!(mass > 0.0)) in.Fail(path + ".mass", "must be positive, got " + Reader::Format(mass));
    switch (body.shape.kind) {
      case ShapeKind::Box:
        body.mass = MassProperties::Box(mass, body.shape.size);
        break;
      case ShapeKind::Cylinder:
        body.mass = MassProperties::Cylinder(mass, body.shape.size[0], body.shape.size[1]);
        break;
      case ShapeKind::Sphere:
        body.mass = MassProperties::Ellipsoid(mass, Eigen::Vector3d::Constant(body.shape.size[0]));
        break;
      default:
        body.mass = MassProperties::Ellipsoid(mass, body.shape.size);
        break;
    }
    if (b.contains("inertia")) {
      const Json& inertia = b.at("inertia");
      if (inertia.is_array() && inertia.size() == 3 && inertia[0].is_number()) {
        body.mass.body_inertia = in.Vector(inertia, path + ".inertia", 3).asDiagonal();
      } else if (inertia.is_array() && inertia.size() == 3) {
        for (int r = 0; r < 3; ++r) {
          body.mass.body_inertia.row(r) =
              in.Vector(inertia[r], path + ".inertia[" + std::to_string(r) + "]", 3).transpose();
        }
      } else {
        in.Fail(path + ".inertia", "expected [Ixx, Iyy, Izz] or a 3 x 3 array");
      }
    }
    std::string why;
    if (!body.mass.IsValid(&why)) in.Fail(path, why);
    body.state.position =
        Eigen::Vector3d(in.Vector(in.Required(b, path, "position"), path + ".position", 3));
    body.state.orientation = ReadOrientation(in, b, path);
    body.state.linear_velocity = in.Vector3(b, path, "velocity", Eigen::Vector3d::Zero());
    body.state.angular_velocity = in.Vector3(b, path, "angular_velocity", Eigen::Vector3d::Zero());
    scene.bodies.push_back(body);
  }
  if (root.contains("fixed")) {
    const Json& fixed = root.at("fixed");
    if (!fixed.is_array()) in.Fail("fixed", "expected an array");
    for (size_t k = 0; k < fixed.size(); ++k) {
      const std::string path = "fixed[" + std::to_string(k) + "]";
      const Json& b = fixed[k];
      in.OnlyKeys(b, path, {"name", "shape", "size", "normal", "point", "position", "orientation"});
      Body body;
      body.fixed = true;
      body.name = in.String(in.Required(b, path, "name"), path + ".name");
      add_name(body.name, path);
      body.shape = ReadShape(in, b, path);
      if (body.shape.kind == ShapeKind::HalfSpace) {
        const Eigen::Vector3d normal =
            in.Vector(in.Required(b, path, "normal"), path + ".normal", 3);
        if (normal.norm() < 1e-12) in.Fail(path + ".normal", "must not be zero");
        body.state.orientation =
            Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), normal.normalized());
        body.state.position = in.Vector3(b, path, "point", Eigen::Vector3d::Zero());
      } else {
        body.state.position =
            Eigen::Vector3d(in.Vector(in.Required(b, path, "position"), path + ".position", 3));
        body.state.orientation = ReadOrientation(in, b, path);
      }
      scene.bodies.push_back(body);
    }
  }
  CheckInitialOverlap(in, root, &scene.bodies);
  if (root.contains("contact")) {
    in.OnlyKeys(root.at("contact"), "contact",
                {"mu", "e_t", "e_o", "e_r", "torsion", "compliance"});
    ReadLawFields(in, root.at("contact"), "contact", &scene.laws.default_law);
  }
  auto body_index = [&](const Json& value, const std::string& path) {
    const std::string name = in.String(value, path);
    for (size_t i = 0; i < scene.bodies.size(); ++i) {
      if (scene.bodies[i].name == name) return static_cast<int>(i);
    }
    in.Fail(path, "no body named '" + name + "'");
  };
  if (root.contains("pairs")) {
    const Json& pairs = root.at("pairs");
    if (!pairs.is_array()) in.Fail("pairs", "expected an array");
    for (size_t k = 0; k < pairs.size(); ++k) {
      const std::string path = "pairs[" + std::to_string(k) + "]";
      const Json& p = pairs[k];
      in.OnlyKeys(p, path, {"bodies", "mu", "e_t", "e_o", "e_r", "torsion", "compliance"});
      const Json& two = in.Required(p, path, "bodies");
      if (!two.is_array() || two.size() != 2) in.Fail(path + ".bodies", "expected two names");
      const int a = body_index(two[0], path + ".bodies[0]");
      const int b = body_index(two[1], path + ".bodies[1]");
      if (a == b) in.Fail(path + ".bodies", "a body cannot touch itself");
      ContactLaw law = scene.laws.default_law;
      ReadLawFields(in, p, path, &law);
      scene.laws.Set(scene.bodies[a].name, scene.bodies[b].name, law);
    }
  }
  if (root.contains("impulses")) {
    const Json& impulses = root.at("impulses");
    if (!impulses.is_array()) in.Fail("impulses", "expected an array");
    for (size_t k = 0; k < impulses.size(); ++k) {
      const std::string path = "impulses[" + std::to_string(k) + "]";
      const Json& e = impulses[k];
      in.OnlyKeys(e, path, {"body", "impulse", "at", "when", "after", "repeat"});
      ImpulseEvent event;
      event.body = body_index(in.Required(e, path, "body"), path + ".body");
      if (scene.bodies[event.body].fixed) in.Fail(path + ".body", "a fixed body cannot be pushed");
      event.impulse = in.Vector(in.Required(e, path, "impulse"), path + ".impulse", 6);
      if (e.contains("at") == e.contains("when")) {
        in.Fail(path, "give exactly one of \"at\" (a time) and \"when\" (a condition)");
      }
      if (e.contains("at")) {
        event.at = in.Number(e.at("at"), path + ".at");
      } else {
        const Json& w = e.at("when");
        const std::string wpath = path + ".when";
        in.OnlyKeys(w, wpath, {"body", "quantity", "value", "tolerance"});
        event.timed = false;
        event.watch = body_index(in.Required(w, wpath, "body"), wpath + ".body");
        const std::string q = in.String(in.Required(w, wpath, "quantity"), wpath + ".quantity");
        event.quantity = -1;
        for (int i = 0; i < 9; ++i) {
          if (q == kQuantities[i]) event.quantity = i;
        }
        if (event.quantity < 0) {
          in.Fail(wpath + ".quantity",
                  "unknown quantity '" + q + "' (expected x, y, z, vx, vy, vz, wx, wy or wz)");
        }
        event.value = in.Number(w, wpath, "value", 0.0);
        event.tolerance = in.Number(w, wpath, "tolerance", event.tolerance);
        if (event.tolerance < 0.0) in.Fail(wpath + ".tolerance", "must be >= 0");
        event.after = in.Number(e, path, "after", 0.0);
        event.repeat = in.Bool(e, path, "repeat", false);
      }
      scene.impulses.push_back(event);
    }
  }
  std::string why;
  if (!scene.options.IsValid(&why)) in.Fail("scene", why);
  return scene;
}

Scene LoadScene(const std::string& path) {
  // ReadTextFile's InputError is an std::invalid_argument, as scene errors are.
  return ParseScene(internal::ReadTextFile(path), path);
}

SceneRunner::SceneRunner(const Scene& scene)
    : scene_(scene),
      stepper_(scene.bodies, scene.laws, scene.options),
      armed_(scene.impulses.size(), 1),
      done_(scene.impulses.size(), 0),
      previous_(scene.impulses.size(), std::nan("")) {
  num_steps_ = CountSteps(scene.duration, scene.options.h, scene.max_steps);
}

bool SceneRunner::Done() const { return step_ >= num_steps_; }

StepRecord SceneRunner::Step() {
  const double t = stepper_.time();
  const double h = scene_.options.h;
  std::vector<Vector6d> impulses(stepper_.bodies().size(), Vector6d::Zero());
  bool any = false;
  fired_.clear();
  for (size_t k = 0; k < scene_.impulses.size(); ++k) {
    const ImpulseEvent& e = scene_.impulses[k];
    bool fire = false;
    if (e.timed) {
      fire = !done_[k] && t >= e.at - 0.5 * h;
      if (fire) done_[k] = 1;
    } else {
      const double value = StateQuantity(stepper_.bodies()[e.watch].state, e.quantity) - e.value;
      const double before = previous_[k];
      const bool reached = std::abs(value) <= e.tolerance ||
                           (std::isfinite(before) && std::abs(before) > e.tolerance &&
                            (before > 0.0) != (value > 0.0));
      previous_[k] = value;
      if (reached && armed_[k] && !done_[k] && t >= e.after - 0.5 * h) {
        fire = true;
        armed_[k] = 0;
        if (!e.repeat) done_[k] = 1;
      } else if (!reached) {
        armed_[k] = 1;
      }
    }
    if (fire) {
      impulses[e.body] += e.impulse;
      fired_.push_back({t, static_cast<int>(k)});
      any = true;
    }
  }
  ++step_;
  return stepper_.Step(any ? impulses : std::vector<Vector6d>());
}

}  // namespace ncpkit
