#include "integrators/scene.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_set>

#include "contact/overlap.h"
#include "integrators/json_reader.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/enum_names.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

constexpr internal::EnumName<StepperKind> kStepperKindNames[] = {
    {StepperKind::Implicit, "implicit"},
    {StepperKind::Quasistatic, "quasistatic"},
    {StepperKind::Explicit, "explicit"}};

}  // namespace

namespace {

using internal::ApplyInitialOverlapPolicy;
using internal::Json;
using internal::Reader;
using internal::ReadOrientation;
using internal::ReadShape;

const char* const kQuantities[] = {"x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"};
const char* const kDofs[] = {"x", "y", "z", "rx", "ry", "rz"};

Json ParseJson(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    throw InputError(source, 0, "", std::string("not valid JSON: ") + e.what());
  }
}

int BodyIndex(const Reader& in, const Scene& scene, const Json& value, const std::string& path) {
  const std::string name = in.String(value, path);
  const int index = scene.FindBody(name);
  if (index < 0) in.Fail(path, "no body named '" + name + "'");
  return index;
}

// Adds a body, checked as ValidateBodies does (`names`: those of the bodies before it), errors
// at `path`.
void AddBody(const Reader& in, const std::string& path, Body body, Scene* scene,
             std::unordered_set<std::string>* names) {
  if (!names->insert(body.name).second) {
    in.Fail(path, "the body name '" + body.name + "' is used twice");
  }
  try {
    ValidateBody(body, scene->stepper != StepperKind::Quasistatic);
  } catch (const InputError& e) {
    in.Fail(path, e.what());
  }
  scene->bodies.push_back(std::move(body));
}

void ReadHeader(const Reader& in, const Json& root, const std::string& source, Scene* scene) {
  scene->name = root.contains("name") ? in.String(root.at("name"), "name") : source;
  if (root.contains("description")) {
    scene->description = in.String(root.at("description"), "description");
  }
  scene->duration = in.Positive(root, "scene", "duration");
}

// ---------------------------------------------------------------------------------------------
// Contact laws

void ReadLawFields(const Reader& in, const Json& object, const std::string& path,
                   StepperKind stepper, ContactLaw* law) {
  if (object.contains("restitution") && stepper != StepperKind::Explicit) {
    in.Fail(path + ".restitution",
            "restitution is the explicit stepper's (\"stepper\": "
            "\"explicit\"); the implicit stepper has none");
  }
  law->mu = in.Number(object, path, "mu", law->mu);
  law->e_t = in.Number(object, path, "e_t", law->e_t);
  law->e_o = in.Number(object, path, "e_o", law->e_o);
  law->e_r = in.Number(object, path, "e_r", law->e_r);
  law->torsion = in.Bool(object, path, "torsion", law->torsion);
  law->restitution = in.Number(object, path, "restitution", law->restitution);
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

// "pairs": per-pair laws (implicit: every law field; quasistatic: mu, required).
void ReadPairs(const Reader& in, const Json& root, Scene* scene) {
  if (!root.contains("pairs")) return;
  const Json& pairs = root.at("pairs");
  if (!pairs.is_array()) in.Fail("pairs", "expected an array");
  const bool quasistatic = scene->stepper == StepperKind::Quasistatic;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const std::string path = "pairs[" + std::to_string(k) + "]";
    const Json& p = pairs[k];
    if (quasistatic) {
      in.OnlyKeys(p, path, {"bodies", "mu"});
      in.Required(p, path, "mu");
    } else {
      in.OnlyKeys(p, path,
                  {"bodies", "mu", "e_t", "e_o", "e_r", "torsion", "compliance", "restitution"});
    }
    const Json& two = in.Required(p, path, "bodies");
    if (!two.is_array() || two.size() != 2) in.Fail(path + ".bodies", "expected two names");
    const int a = BodyIndex(in, *scene, two[0], path + ".bodies[0]");
    const int b = BodyIndex(in, *scene, two[1], path + ".bodies[1]");
    if (a == b) in.Fail(path + ".bodies", "a body cannot touch itself");
    ContactLaw law = scene->laws.default_law;
    ReadLawFields(in, p, path, scene->stepper, &law);
    scene->laws.Set(scene->bodies[a].name, scene->bodies[b].name, law);
  }
}

// Bodies overlapping at the start would be pushed apart in the first step at any speed (a cube
// 0.5 m into the ground leaves at 50 m/s): see ApplyInitialOverlapPolicy(). `posed`: the
// bodies where the stepper starts them (actuated ones where their commands put them);
// `movable`: which of them "separate" may move.
void CheckInitialOverlap(const Reader& in, const Json& root, const std::vector<Body>& posed,
                         const std::vector<char>& movable, std::vector<Body>* bodies) {
  std::vector<PlacedShape> placed;
  for (size_t i = 0; i < posed.size(); ++i) {
    const Body& b = posed[i];
    PlacedShape p;
    p.name = b.name;
    p.shape = b.shape;
    p.pose.position = b.state.position;
    p.pose.rotation = b.state.orientation.toRotationMatrix();
    p.inverse_mass = movable[i] ? 1.0 / b.mass.mass : 0.0;
    placed.push_back(p);
  }
  ApplyInitialOverlapPolicy(in, root, &placed);
  for (size_t i = 0; i < placed.size(); ++i) {
    if (movable[i]) (*bodies)[i].state.position = placed[i].pose.position;
  }
}

// ---------------------------------------------------------------------------------------------
// Implicit scenes

// The settings every stepper shares (StepperSettings), spelled the same for each: in `object`
// (the scene's top level, or its "quasistatic" object, `path`), field paths `prefix` + key.
// `h_required`: the schema has no default step; `min_iterations`: the stepper's least
// max_iterations.
void ReadSettings(const Reader& in, const Json& object, const std::string& path,
                  const std::string& prefix, bool h_required, int min_iterations,
                  StepperSettings* settings) {
  settings->h =
      h_required ? in.Positive(object, path, "h") : in.Number(object, path, "h", settings->h);
  if (!(settings->h > 0.0)) in.Fail(prefix + "h", "must be positive");
  settings->gravity = in.Vector3(object, path, "gravity", settings->gravity);
  if (object.contains("solver")) {
    settings->solver = in.String(object.at("solver"), prefix + "solver");
  }
  settings->tolerance = in.Number(object, path, "tolerance", settings->tolerance);
  if (!(settings->tolerance > 0.0)) in.Fail(prefix + "tolerance", "must be positive");
  settings->max_iterations =
      static_cast<int>(in.Integer(object, path, "max_iterations", settings->max_iterations,
                                  min_iterations, kMaxSolverIterations));
  settings->warm_start = in.Bool(object, path, "warm_start", settings->warm_start);
}

void ReadImplicitOptions(const Reader& in, const Json& root, ImplicitStepperOptions* options) {
  ReadSettings(in, root, "scene", "", /*h_required=*/true, 1, options);
  if (!IsSolverName(options->solver, ProblemKind::Mixed)) {
    in.Fail("solver", "unknown solver '" + options->solver + "'");
  }
  options->contact_margin = in.Number(root, "scene", "contact_margin", options->contact_margin);
  if (options->contact_margin < 0.0) in.Fail("contact_margin", "must be >= 0");
}

// The same keys for the explicit stepper, and its own: "model" (cone, pyramid, relaxed, soft),
// "friction_directions", "restitution_velocity", "soft": {"stiffness", "damping"}; "solver"
// names a solver of the model's problem (frictional contact for cone, linear otherwise).
void ReadExplicitOptions(const Reader& in, const Json& root, ExplicitStepperOptions* options) {
  ReadSettings(in, root, "scene", "", /*h_required=*/true, 0, options);
  if (root.contains("model")) {
    const std::string model = in.String(root.at("model"), "model");
    if (!ParseExplicitModel(model, &options->model)) {
      in.Fail("model",
              "must be \"cone\", \"pyramid\", \"relaxed\" or \"soft\", not \"" + model + "\"");
    }
  }
  if (root.contains("solver")) {
    const ProblemKind kind =
        options->model == ExplicitModel::Cone ? ProblemKind::GlobalFriction : ProblemKind::Linear;
    if (!IsSolverName(options->solver, kind)) {
      in.Fail("solver",
              "unknown solver '" + options->solver + "' for the " + ToString(options->model) +
                  " model (expected a " +
                  (kind == ProblemKind::GlobalFriction ? "frictional contact" : "linear") +
                  " solver: " + SolverNameList(kind) + ")");
    }
  }
  options->contact_margin = in.Number(root, "scene", "contact_margin", options->contact_margin);
  if (!(options->contact_margin > 0.0)) in.Fail("contact_margin", "must be > 0");
  options->friction_directions = static_cast<int>(
      in.Integer(root, "scene", "friction_directions", options->friction_directions, 3, 64));
  options->restitution_velocity =
      in.Number(root, "scene", "restitution_velocity", options->restitution_velocity);
  if (!(options->restitution_velocity >= 0.0)) in.Fail("restitution_velocity", "must be >= 0");
  if (root.contains("soft")) {
    const Json& soft = root.at("soft");
    in.OnlyKeys(soft, "soft", {"stiffness", "damping"});
    options->soft_stiffness = in.Positive(soft, "soft", "stiffness");
    options->soft_damping = in.Number(soft, "soft", "damping", 0.0);
    if (!(options->soft_damping >= 0.0)) in.Fail("soft.damping", "must be >= 0");
  }
  if (options->model == ExplicitModel::Soft && !(options->soft_stiffness > 0.0)) {
    in.Fail("soft", "the soft model needs \"soft\": {\"stiffness\": K_p, \"damping\": K_d}");
  }
}

void ReadInertia(const Reader& in, const Json& b, const std::string& path, Body* body) {
  if (!b.contains("inertia")) return;
  const Json& inertia = b.at("inertia");
  if (inertia.is_array() && inertia.size() == 3 && inertia[0].is_number()) {
    body->mass.body_inertia = in.Vector(inertia, path + ".inertia", 3).asDiagonal();
  } else if (inertia.is_array() && inertia.size() == 3) {
    for (int r = 0; r < 3; ++r) {
      body->mass.body_inertia.row(r) =
          in.Vector(inertia[r], path + ".inertia[" + std::to_string(r) + "]", 3).transpose();
    }
  } else {
    in.Fail(path + ".inertia", "expected [Ixx, Iyy, Izz] or a 3 x 3 array");
  }
}

Body ReadMovingBody(const Reader& in, const Json& b, const std::string& path) {
  in.OnlyKeys(b, path,
              {"name", "shape", "size", "mass", "inertia", "position", "orientation", "velocity",
               "angular_velocity"});
  Body body;
  body.name = in.String(in.Required(b, path, "name"), path + ".name");
  if (body.name.empty()) in.Fail(path + ".name", "must not be empty");
  body.shape = ReadShape(in, b, path);
  if (body.shape.kind == ShapeKind::HalfSpace) {
    in.Fail(path + ".shape", "a plane cannot move: list it under \"fixed\"");
  }
  const double mass = in.Number(in.Required(b, path, "mass"), path + ".mass");
  if (!(mass > 0.0)) in.Fail(path + ".mass", "must be positive, got " + Reader::Format(mass));
  body.mass = SolidMassProperties(body.shape, mass);
  ReadInertia(in, b, path, &body);
  std::string why;
  if (!body.mass.IsValid(&why)) in.Fail(path, why);
  body.state.position =
      Eigen::Vector3d(in.Vector(in.Required(b, path, "position"), path + ".position", 3));
  body.state.orientation = ReadOrientation(in, b, path);
  body.state.linear_velocity = in.Vector3(b, path, "velocity", Eigen::Vector3d::Zero());
  body.state.angular_velocity = in.Vector3(b, path, "angular_velocity", Eigen::Vector3d::Zero());
  return body;
}

Body ReadFixedBody(const Reader& in, const Json& b, const std::string& path) {
  in.OnlyKeys(b, path, {"name", "shape", "size", "normal", "point", "position", "orientation"});
  Body body;
  body.fixed = true;
  body.name = in.String(in.Required(b, path, "name"), path + ".name");
  if (body.name.empty()) in.Fail(path + ".name", "must not be empty");
  body.shape = ReadShape(in, b, path);
  if (body.shape.kind == ShapeKind::HalfSpace) {
    const Eigen::Vector3d normal = in.Vector(in.Required(b, path, "normal"), path + ".normal", 3);
    if (normal.norm() < 1e-12) in.Fail(path + ".normal", "must not be zero");
    body.state.orientation =
        Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), normal.normalized());
    body.state.position = in.Vector3(b, path, "point", Eigen::Vector3d::Zero());
  } else {
    body.state.position =
        Eigen::Vector3d(in.Vector(in.Required(b, path, "position"), path + ".position", 3));
    body.state.orientation = ReadOrientation(in, b, path);
  }
  return body;
}

void ReadImplicitBodies(const Reader& in, const Json& root, Scene* scene) {
  const Json& bodies = in.Required(root, "scene", "bodies");
  if (!bodies.is_array() || bodies.empty()) in.Fail("bodies", "expected a non-empty array");
  std::unordered_set<std::string> names;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const std::string path = "bodies[" + std::to_string(k) + "]";
    AddBody(in, path, ReadMovingBody(in, bodies[k], path), scene, &names);
  }
  if (!root.contains("fixed")) return;
  const Json& fixed = root.at("fixed");
  if (!fixed.is_array()) in.Fail("fixed", "expected an array");
  for (size_t k = 0; k < fixed.size(); ++k) {
    const std::string path = "fixed[" + std::to_string(k) + "]";
    AddBody(in, path, ReadFixedBody(in, fixed[k], path), scene, &names);
  }
}

void ReadCondition(const Reader& in, const Scene& scene, const Json& e, const std::string& path,
                   ImpulseEvent* event) {
  const Json& w = e.at("when");
  const std::string wpath = path + ".when";
  in.OnlyKeys(w, wpath, {"body", "quantity", "value", "tolerance"});
  event->timed = false;
  event->watch = BodyIndex(in, scene, in.Required(w, wpath, "body"), wpath + ".body");
  const std::string q = in.String(in.Required(w, wpath, "quantity"), wpath + ".quantity");
  event->quantity = -1;
  for (int i = 0; i < 9; ++i) {
    if (q == kQuantities[i]) event->quantity = i;
  }
  if (event->quantity < 0) {
    in.Fail(wpath + ".quantity",
            "unknown quantity '" + q + "' (expected x, y, z, vx, vy, vz, wx, wy or wz)");
  }
  event->value = in.Number(w, wpath, "value", 0.0);
  event->tolerance = in.Number(w, wpath, "tolerance", event->tolerance);
  if (event->tolerance < 0.0) in.Fail(wpath + ".tolerance", "must be >= 0");
  event->after = in.Number(e, path, "after", 0.0);
  event->repeat = in.Bool(e, path, "repeat", false);
}

void ReadImpulses(const Reader& in, const Json& root, Scene* scene) {
  if (!root.contains("impulses")) return;
  const Json& impulses = root.at("impulses");
  if (!impulses.is_array()) in.Fail("impulses", "expected an array");
  for (size_t k = 0; k < impulses.size(); ++k) {
    const std::string path = "impulses[" + std::to_string(k) + "]";
    const Json& e = impulses[k];
    in.OnlyKeys(e, path, {"body", "impulse", "at", "when", "after", "repeat"});
    ImpulseEvent event;
    event.body = BodyIndex(in, *scene, in.Required(e, path, "body"), path + ".body");
    if (scene->bodies[event.body].fixed) in.Fail(path + ".body", "a fixed body cannot be pushed");
    event.impulse = in.Vector(in.Required(e, path, "impulse"), path + ".impulse", 6);
    if (e.contains("at") == e.contains("when")) {
      in.Fail(path, "give exactly one of \"at\" (a time) and \"when\" (a condition)");
    }
    if (e.contains("at")) {
      event.at = in.Number(e.at("at"), path + ".at");
    } else {
      ReadCondition(in, *scene, e, path, &event);
    }
    scene->impulses.push_back(event);
  }
}

void ReadImplicitScene(const Reader& in, const Json& root, const std::string& source,
                       Scene* scene) {
  in.OnlyKeys(root, "scene",
              {"name",
               "description",
               "h",
               "duration",
               "gravity",
               "solver",
               "tolerance",
               "max_iterations",
               "warm_start",
               "contact_margin",
               "bodies",
               "fixed",
               "contact",
               "pairs",
               "impulses",
               "initial_overlap",
               "stepper",
               "model",
               "friction_directions",
               "restitution_velocity",
               "soft"});
  scene->stepper = StepperKind::Implicit;
  if (root.contains("stepper")) {
    // (A quasistatic scene is one with a "quasistatic" object, read elsewhere.)
    const std::string stepper = in.String(root.at("stepper"), "stepper");
    if (!internal::ValueIn(kStepperKindNames, stepper, &scene->stepper) ||
        scene->stepper == StepperKind::Quasistatic) {
      in.Fail("stepper", "must be \"implicit\" or \"explicit\", not \"" + stepper + "\"");
    }
  }
  ReadHeader(in, root, source, scene);
  if (scene->stepper == StepperKind::Explicit) {
    ReadExplicitOptions(in, root, &scene->explicit_stepper);
  } else {
    for (const char* key : {"model", "friction_directions", "restitution_velocity", "soft"}) {
      if (root.contains(key)) {
        in.Fail(key, "is an explicit stepper's key (\"stepper\": \"explicit\")");
      }
    }
    ReadImplicitOptions(in, root, &scene->implicit);
  }
  ReadImplicitBodies(in, root, scene);
  std::vector<char> movable;
  for (const Body& body : scene->bodies) movable.push_back(body.fixed ? 0 : 1);
  CheckInitialOverlap(in, root, scene->bodies, movable, &scene->bodies);
  if (root.contains("contact")) {
    in.OnlyKeys(root.at("contact"), "contact",
                {"mu", "e_t", "e_o", "e_r", "torsion", "compliance", "restitution"});
    ReadLawFields(in, root.at("contact"), "contact", scene->stepper, &scene->laws.default_law);
  }
  ReadPairs(in, root, scene);
  ReadImpulses(in, root, scene);
  std::string why;
  const bool valid = scene->stepper == StepperKind::Explicit ? scene->explicit_stepper.IsValid(&why)
                                                             : scene->implicit.IsValid(&why);
  if (!valid) in.Fail("scene", why);
}

// ---------------------------------------------------------------------------------------------
// Quasistatic scenes

void ReadQuasistaticOptions(const Reader& in, const Json& root, QuasistaticOptions* o) {
  const Json& q = in.Required(root, "scene", "quasistatic");
  in.OnlyKeys(q, "quasistatic",
              {"model", "solver", "h", "gravity", "tolerance", "max_iterations", "warm_start",
               "contact_threshold", "friction_directions", "regularization", "plane_normal"});
  if (q.contains("model")) {
    const std::string model = in.String(q.at("model"), "quasistatic.model");
    if (!ParseQuasistaticModel(model, &o->model)) {
      in.Fail("quasistatic.model", "unknown model '" + model + "' (expected dqc, dlc, qp, qp-lcp)");
    }
  }
  ReadSettings(in, q, "quasistatic", "quasistatic.", /*h_required=*/false, 0, o);
  o->contact_threshold = in.Number(q, "quasistatic", "contact_threshold", o->contact_threshold);
  o->friction_directions = static_cast<int>(in.Integer(
      q, "quasistatic", "friction_directions", o->friction_directions, 3, kMaxFrictionDirections));
  o->regularization = in.Number(q, "quasistatic", "regularization", o->regularization);
  o->plane_normal = in.Vector3(q, "quasistatic", "plane_normal", o->plane_normal);
  std::string why;
  if (!o->IsValid(&why)) in.Fail("quasistatic", why);
}

void ReadDofs(const Reader& in, const Json& object, const std::string& path, Body* body) {
  if (!object.contains("dofs")) return;
  const Json& dofs = object.at("dofs");
  if (!dofs.is_array()) in.Fail(path + ".dofs", "expected an array of x, y, z, rx, ry, rz");
  body->free_dofs.fill(false);
  for (size_t k = 0; k < dofs.size(); ++k) {
    const std::string name = in.String(dofs[k], path + ".dofs[" + std::to_string(k) + "]");
    int found = -1;
    for (int j = 0; j < 6; ++j) {
      if (name == kDofs[j]) found = j;
    }
    if (found < 0) {
      in.Fail(path + ".dofs[" + std::to_string(k) + "]",
              "unknown degree of freedom '" + name + "' (expected x, y, z, rx, ry, rz)");
    }
    body->free_dofs[found] = true;
  }
}

Body ReadQuasistaticBody(const Reader& in, const Json& object, const std::string& path) {
  in.OnlyKeys(object, path,
              {"name", "shape", "size", "mass", "position", "orientation", "fixed", "dofs"});
  Body body;
  body.name = in.String(in.Required(object, path, "name"), path + ".name");
  if (object.contains("shape") && object.at("shape") == "point") {
    body.shape.kind = ShapeKind::Sphere;
    body.shape.size.setZero();
  } else {
    body.shape = ReadShape(in, object, path);
  }
  body.fixed = in.Bool(object, path, "fixed", body.shape.kind == ShapeKind::HalfSpace);
  body.state.position = in.Vector3(object, path, "position", Eigen::Vector3d::Zero());
  body.state.orientation = ReadOrientation(in, object, path);
  const double mass = in.Number(object, path, "mass", 0.0);
  if (mass < 0.0) in.Fail(path + ".mass", "must be >= 0, got " + Reader::Format(mass));
  body.mass = SolidMassProperties(body.shape, mass);
  ReadDofs(in, object, path, &body);
  return body;
}

ActuatorCommand ReadCommand(const Reader& in, const Json& value, const std::string& path) {
  ActuatorCommand command;
  if (value.is_array()) {
    if (value.empty()) in.Fail(path, "needs at least one waypoint [t, q]");
    for (size_t k = 0; k < value.size(); ++k) {
      const std::string p = path + "[" + std::to_string(k) + "]";
      const Json& w = value[k];
      if (!w.is_array() || w.size() != 2) in.Fail(p, "expected a waypoint [t, q]");
      // NaN is not JSON; a null (what writers emit for NaN) or a string is reported here.
      command.waypoints.push_back({in.Number(w[0], p + "[0]"), in.Number(w[1], p + "[1]")});
    }
  } else if (value.is_object()) {
    in.OnlyKeys(value, path, {"offset", "rate", "amplitude", "omega", "phase"});
    command.offset = in.Number(value, path, "offset", 0.0);
    command.rate = in.Number(value, path, "rate", 0.0);
    command.amplitude = in.Number(value, path, "amplitude", 0.0);
    command.omega = in.Number(value, path, "omega", 0.0);
    command.phase = in.Number(value, path, "phase", 0.0);
  } else {
    in.Fail(path, "expected waypoints [[t, q], ...] or {offset, rate, amplitude, omega, phase}");
  }
  std::string why;
  if (!command.IsValid(&why)) in.Fail(path, why);
  return command;
}

Actuator ReadActuator(const Reader& in, const Scene& scene, const Json& a,
                      const std::string& path) {
  in.OnlyKeys(a, path, {"name", "kind", "axis", "pivot", "bodies", "stiffness", "prescribed"});
  Actuator act;
  act.name = in.String(in.Required(a, path, "name"), path + ".name");
  const std::string kind =
      a.contains("kind") ? in.String(a.at("kind"), path + ".kind") : "prismatic";
  if (kind == "prismatic") {
    act.kind = ActuatorKind::Prismatic;
  } else if (kind == "revolute") {
    act.kind = ActuatorKind::Revolute;
  } else {
    in.Fail(path + ".kind", "unknown actuator kind '" + kind + "' (prismatic, revolute)");
  }
  act.axis = Eigen::Vector3d(in.Vector(in.Required(a, path, "axis"), path + ".axis", 3));
  act.pivot = in.Vector3(a, path, "pivot", act.pivot);
  act.prescribed = in.Bool(a, path, "prescribed", false);
  if (!act.prescribed) {
    act.stiffness = in.Number(in.Required(a, path, "stiffness"), path + ".stiffness");
    if (!(act.stiffness > 0.0)) {
      in.Fail(path + ".stiffness", "must be positive, got " + Reader::Format(act.stiffness));
    }
  }
  const Json& moved = in.Required(a, path, "bodies");
  if (!moved.is_array() || moved.empty()) in.Fail(path + ".bodies", "expected body names");
  for (size_t j = 0; j < moved.size(); ++j) {
    act.bodies.push_back(
        BodyIndex(in, scene, moved[j], path + ".bodies[" + std::to_string(j) + "]"));
  }
  return act;
}

void ReadActuators(const Reader& in, const Json& root, Scene* scene) {
  if (root.contains("actuators")) {
    const Json& list = root.at("actuators");
    if (!list.is_array()) in.Fail("actuators", "expected an array");
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string path = "actuators[" + std::to_string(k) + "]";
      Actuator act = ReadActuator(in, *scene, list[k], path);
      try {
        ValidateActuator(scene->bodies, scene->actuators, &act);
      } catch (const InputError& e) {
        in.Fail(path, e.what());
      }
      scene->actuators.push_back(act);
    }
  }
  if (root.contains("commands")) {
    const Json& commands = root.at("commands");
    if (!commands.is_object()) in.Fail("commands", "expected an object {actuator: command}");
    for (const auto& item : commands.items()) {
      const std::string path = "commands." + item.key();
      if (scene->FindActuator(item.key()) < 0) {
        in.Fail(path, "unknown actuator '" + item.key() + "'");
      }
      scene->SetCommand(item.key(), ReadCommand(in, item.value(), path));
    }
  }
  for (const Actuator& a : scene->actuators) {
    if (!root.contains("commands") || !root.at("commands").contains(a.name)) {
      in.Fail("commands", "no command for actuator '" + a.name + "'");
    }
  }
}

void ReadQuasistaticScene(const Reader& in, const Json& root, const std::string& source,
                          Scene* scene) {
  in.OnlyKeys(root, "scene",
              {"name", "description", "duration", "quasistatic", "friction", "pairs", "bodies",
               "actuators", "commands", "initial_overlap"});
  scene->stepper = StepperKind::Quasistatic;
  ReadHeader(in, root, source, scene);
  ReadQuasistaticOptions(in, root, &scene->quasistatic);
  scene->laws.default_law.mu = in.Number(root, "scene", "friction", scene->laws.default_law.mu);
  if (!(scene->laws.default_law.mu >= 0.0)) {
    in.Fail("quasistatic",
            "friction must be >= 0, got " + Reader::Format(scene->laws.default_law.mu));
  }
  const Json& bodies = in.Required(root, "scene", "bodies");
  if (!bodies.is_array() || bodies.empty()) in.Fail("bodies", "expected a non-empty array");
  std::unordered_set<std::string> names;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const std::string path = "bodies[" + std::to_string(k) + "]";
    AddBody(in, path, ReadQuasistaticBody(in, bodies[k], path), scene, &names);
  }
  ReadActuators(in, root, scene);
  ReadPairs(in, root, scene);
  // Building the stepper checks what only the whole system shows (unsupported pairs, qp-lcp
  // without regularization) and poses the actuated bodies where their commands start them.
  std::unique_ptr<Stepper> check;
  try {
    check = MakeStepper(*scene);
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind(source, 0) == 0) throw;
    throw InputError(source, 0, "", e.what());
  }
  const std::vector<char> actuated =
      ActuatedBodies(static_cast<int>(scene->bodies.size()), scene->actuators);
  std::vector<char> movable;
  for (size_t i = 0; i < scene->bodies.size(); ++i) {
    movable.push_back(!scene->bodies[i].fixed && !actuated[i] ? 1 : 0);
  }
  CheckInitialOverlap(in, root, check->bodies(), movable, &scene->bodies);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scene

const char* ToString(StepperKind kind) { return internal::NameIn(kStepperKindNames, kind); }

const StepperSettings& Scene::settings() const {
  switch (stepper) {
    case StepperKind::Implicit:
      return implicit;
    case StepperKind::Quasistatic:
      return quasistatic;
    case StepperKind::Explicit:
      return explicit_stepper;
  }
  return implicit;
}

StepperSettings& Scene::mutable_settings() {
  return const_cast<StepperSettings&>(static_cast<const Scene&>(*this).settings());
}

std::string Scene::variant() const {
  if (stepper == StepperKind::Explicit) {
    if (explicit_stepper.model == ExplicitModel::Soft) return "soft";
    return SolverVariant{ToString(explicit_stepper.model), explicit_stepper.solver,
                         !explicit_stepper.warm_start}
        .ToString();
  }
  if (stepper == StepperKind::Implicit) {
    return SolverVariant{"", implicit.solver, !implicit.warm_start}.ToString();
  }
  return SolverVariant{ToString(quasistatic.model), quasistatic.solver, !quasistatic.warm_start}
      .ToString();
}

bool Scene::TakesVariant(const std::string& variant) const {
  if (stepper == StepperKind::Explicit) return IsExplicitVariant(variant);
  return stepper == StepperKind::Implicit ? IsSolverVariant(variant)
                                          : IsQuasistaticVariant(variant);
}

void Scene::ApplyVariant(const std::string& variant) {
  if (stepper == StepperKind::Explicit) {
    ApplyExplicitVariant(variant, &explicit_stepper);
  } else if (stepper == StepperKind::Implicit) {
    ApplySolverVariant(variant, &implicit);
  } else {
    ApplyQuasistaticVariant(variant, &quasistatic);
  }
}

int Scene::FindActuator(const std::string& name) const {
  return ncpkit::FindActuator(actuators, name);
}

void Scene::SetCommand(const std::string& actuator, const ActuatorCommand& command) {
  const int k = FindActuator(actuator);
  if (k < 0) throw InputError("command for unknown actuator '" + actuator + "'");
  std::string why;
  if (!command.IsValid(&why)) throw InputError("actuator '" + actuator + "': " + why);
  actuators[k].command = command;
}

Scene ParseScene(const std::string& text, const std::string& source) {
  const Reader in(source);
  const Json root = ParseJson(text, source);
  Scene scene;
  if (root.is_object() && root.contains("quasistatic")) {
    ReadQuasistaticScene(in, root, source, &scene);
  } else {
    ReadImplicitScene(in, root, source, &scene);
  }
  return scene;
}

Scene LoadScene(const std::string& path) { return ParseScene(internal::ReadTextFile(path), path); }

std::unique_ptr<Stepper> MakeStepper(const Scene& scene) {
  if (scene.stepper == StepperKind::Explicit) {
    return std::make_unique<ExplicitStepper>(scene.bodies, scene.laws, scene.explicit_stepper);
  }
  if (scene.stepper == StepperKind::Implicit) {
    return std::make_unique<ImplicitStepper>(scene.bodies, scene.laws, scene.implicit);
  }
  return std::make_unique<QuasistaticStepper>(scene.bodies, scene.laws, scene.actuators,
                                              scene.quasistatic);
}

namespace {

// "<prefix><solver>" for every registry solver compared by default on `kind`, leaving out those
// that need a positive diagonal when the model's problem has rows with a zero one.
void AppendCompared(const std::string& prefix, ProblemKind kind, bool zero_diagonal_rows,
                    std::vector<std::string>* variants) {
  for (const SolverEntry& e : SolverRegistry()) {
    if (!e.Takes(kind) || !e.Compared(kind)) continue;
    if (zero_diagonal_rows && e.needs_positive_diagonal) continue;
    variants->push_back(prefix + e.name);
  }
}

// Every registry solver of the kind compared by default; the implicit stepper adds its first
// one cold (no warm start), the quasistatic ones take the solvers their model's problem fits.
std::vector<std::string> CollectDefaultVariants(StepperKind kind) {
  std::vector<std::string> variants;
  if (kind == StepperKind::Explicit) {
    // The pyramid's gamma rows have a zero diagonal; the relaxed cone's LCP takes every solver.
    AppendCompared("cone/", ProblemKind::GlobalFriction, false, &variants);
    AppendCompared("pyramid/", ProblemKind::Linear, true, &variants);
    AppendCompared("relaxed/", ProblemKind::Linear, false, &variants);
  } else if (kind == StepperKind::Implicit) {
    AppendCompared("", ProblemKind::Mixed, false, &variants);
    if (!variants.empty()) variants.push_back(variants.front() + "-cold");
  } else {
    // dlc and qp have free rows with a zero diagonal.
    for (QuasistaticModel model : {QuasistaticModel::Dqc, QuasistaticModel::Dlc,
                                   QuasistaticModel::Qp, QuasistaticModel::QpLcp}) {
      AppendCompared(std::string(ToString(model)) + "/",
                     model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear,
                     model == QuasistaticModel::Dlc || model == QuasistaticModel::Qp, &variants);
    }
  }
  return variants;
}

}  // namespace

// Collected on each call: solvers registered at run time join the comparisons.
std::vector<std::string> DefaultVariants(StepperKind kind) { return CollectDefaultVariants(kind); }

// ---------------------------------------------------------------------------------------------
// Variants: each grammar is read by one function that fills the options or says why the text is
// not one of its variants; the Is* tests and the Apply* setters both call it.

namespace {

std::string ReadImplicitVariant(const std::string& variant, ImplicitStepperOptions* options) {
  SolverVariant parsed;
  std::string why;
  if (!SplitSolverVariant(variant, &parsed, &why) || !parsed.model.empty() ||
      !IsSolverName(parsed.solver, ProblemKind::Mixed)) {
    return "unknown solver '" + variant + "' (expected one of " +
           SolverNameList(ProblemKind::Mixed) + ", or any of them with -cold: no warm start)";
  }
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

std::string ReadExplicitVariant(const std::string& variant, ExplicitStepperOptions* options) {
  if (variant == "soft") {
    options->model = ExplicitModel::Soft;
    return "";
  }
  SolverVariant parsed;
  std::string why;
  ExplicitModel model = ExplicitModel::Cone;
  const bool known = SplitSolverVariant(variant, &parsed, &why) &&
                     ParseExplicitModel(parsed.model, &model) && model != ExplicitModel::Soft;
  const ProblemKind kind =
      known && model == ExplicitModel::Cone ? ProblemKind::GlobalFriction : ProblemKind::Linear;
  if (!known || !IsSolverName(parsed.solver, kind)) {
    return "unknown explicit variant '" + variant +
           "' (expected cone/<solver>[-cold] with one of " +
           SolverNameList(ProblemKind::GlobalFriction) +
           ", pyramid/<solver> or relaxed/<solver> with one of " +
           SolverNameList(ProblemKind::Linear) + ", or soft; e.g. cone/nsgs)";
  }
  if (model == ExplicitModel::Pyramid && FindSolver(parsed.solver)->needs_positive_diagonal) {
    return "explicit variant '" + variant + "': " + parsed.solver +
           " cannot take the pyramid model's LCP (its gamma rows have a zero diagonal); use "
           "relaxed/" +
           parsed.solver;
  }
  options->model = model;
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

std::string ReadQuasistaticVariant(const std::string& variant, QuasistaticOptions* options) {
  SolverVariant parsed;
  std::string why;
  QuasistaticModel model = QuasistaticModel::Dqc;
  if (!SplitSolverVariant(variant, &parsed, &why) || parsed.model.empty() ||
      !ParseQuasistaticModel(parsed.model, &model)) {
    return "unknown quasistatic variant '" + variant +
           "' (expected <model>/<solver>[-cold], model dqc, dlc, qp or qp-lcp, e.g. "
           "qp-lcp/lemke)";
  }
  const ProblemKind kind =
      model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear;
  if (!IsSolverName(parsed.solver, kind)) {
    return "unknown solver '" + parsed.solver + "' for the " + ToString(model) +
           " model in variant '" + variant + "'";
  }
  options->model = model;
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

template <class Options>
void ApplyOrThrow(std::string (*read)(const std::string&, Options*), const std::string& variant,
                  Options* options) {
  Options changed = *options;
  const std::string why = read(variant, &changed);
  if (!why.empty()) throw InputError(why);
  *options = changed;
}

template <class Options>
bool Reads(std::string (*read)(const std::string&, Options*), const std::string& variant) {
  Options scratch;
  return read(variant, &scratch).empty();
}

}  // namespace

bool IsSolverVariant(const std::string& variant) { return Reads(&ReadImplicitVariant, variant); }

void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options) {
  ApplyOrThrow(&ReadImplicitVariant, variant, options);
}

bool IsExplicitVariant(const std::string& variant) { return Reads(&ReadExplicitVariant, variant); }

void ApplyExplicitVariant(const std::string& variant, ExplicitStepperOptions* options) {
  ApplyOrThrow(&ReadExplicitVariant, variant, options);
}

bool IsQuasistaticVariant(const std::string& variant) {
  return Reads(&ReadQuasistaticVariant, variant);
}

void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options) {
  ApplyOrThrow(&ReadQuasistaticVariant, variant, options);
}

void RequireKnownVariant(const std::string& variant) {
  if (IsSolverVariant(variant) || IsQuasistaticVariant(variant) || IsExplicitVariant(variant)) {
    return;
  }
  throw InputError("unknown solver '" + variant + "' (expected <solver>[-cold] with one of " +
                   SolverNameList(ProblemKind::Mixed) +
                   ", or <model>/<solver>[-cold] with model dqc, dlc, qp or qp-lcp, cone "
                   "(explicit scenes) with one of " +
                   SolverNameList(ProblemKind::GlobalFriction) +
                   ", pyramid or relaxed (explicit scenes) with one of " +
                   SolverNameList(ProblemKind::Linear) + ", or soft)");
}

}  // namespace ncpkit
