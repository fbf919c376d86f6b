#include "integrators/scene.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "contact/overlap.h"
#include "integrators/json_reader.h"
#include "integrators/mjcf.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using internal::ApplyInitialOverlapPolicy;
using internal::Json;
using internal::Reader;
using internal::ReadOrientation;
using internal::ReadShape;

const char* const kQuantities[] = {"x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"};
const char* const kDofs[] = {"x", "y", "z", "rx", "ry", "rz"};
// Every contact-law field a scene file may set; each stepper reads those of its row's law_keys.
const char* const kLawKeys[] = {"mu", "e_t", "e_o", "e_r", "torsion", "compliance", "restitution"};

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
void AddBody(const Reader& in, const std::string& path, Body body, bool velocities, Scene* scene,
             std::unordered_set<std::string>* names) {
  if (!names->insert(body.name).second) {
    in.Fail(path, "the body name '" + body.name + "' is used twice");
  }
  try {
    ValidateBody(body, velocities);
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

bool Contains(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// ---------------------------------------------------------------------------------------------
// The stepper and the scene's keys

// The stepper's row: "stepper" (default implicit); a file with a "quasistatic" object gives the
// quasistatic stepper's settings there.
const StepperEntry& ReadStepperRow(const Reader& in, const Json& root, bool settings_object) {
  std::string name = settings_object ? "quasistatic" : "implicit";
  if (root.contains("stepper")) name = in.String(root.at("stepper"), "stepper");
  const StepperEntry* row = FindStepper(name);
  if (row == nullptr) {
    in.Fail("stepper",
            "unknown stepper '" + name + "' (expected one of " + StepperNameList() + ")");
  }
  if (settings_object && row->name != "quasistatic") {
    in.Fail("quasistatic",
            "a \"quasistatic\" object holds the quasistatic stepper's settings; "
            "the " +
                row->name + " stepper reads its own at the top level");
  }
  return *row;
}

std::vector<std::string> SceneKeys(const StepperEntry& row, const StepperConfig& config,
                                   bool settings_object) {
  std::vector<std::string> keys = {"name",  "description", "duration", "stepper",        "bodies",
                                   "fixed", "contact",     "pairs",    "initial_overlap"};
  if (settings_object) {
    keys.insert(keys.end(), {"quasistatic", "friction"});
  } else {
    keys.insert(keys.end(), std::begin(kSharedSettingKeys), std::end(kSharedSettingKeys));
    for (const std::string& key : config.OwnKeys()) keys.push_back(key);
  }
  if (row.actuators) keys.insert(keys.end(), {"actuators", "commands"});
  if (row.velocities) keys.emplace_back("impulses");
  return keys;
}

// The steppers, other than `row`, whose scenes take `key` ("quasistatic or explicit"), or "".
std::string StepperTakingKey(const StepperEntry& row, const std::string& key) {
  std::string takers;
  for (const StepperEntry& other : StepperRegistry()) {
    if (other.name == row.name) continue;
    const std::unique_ptr<StepperConfig> config = other.make_config();
    if (Contains(SceneKeys(other, *config, false), key)) {
      takers += (takers.empty() ? "" : " or ") + other.name;
    }
  }
  return takers;
}

// Unknown top-level keys fail; a key another stepper reads says which.
void CheckSceneKeys(const Reader& in, const Json& root, const StepperEntry& row,
                    const StepperConfig& config, bool settings_object) {
  if (!root.is_object()) in.Fail("scene", "expected an object");
  const std::vector<std::string> keys = SceneKeys(row, config, settings_object);
  for (const auto& item : root.items()) {
    if (Contains(keys, item.key())) continue;
    const std::string takers = StepperTakingKey(row, item.key());
    if (!takers.empty()) {
      in.Fail(item.key(), "is not a key of the " + row.name + " stepper's scenes (the " + takers +
                              " stepper's: \"stepper\": \"" + takers.substr(0, takers.find(' ')) +
                              "\")");
    }
  }
  in.OnlyKeys(root, "scene", keys);
}

// The stepper's settings: at the top level, or in an older file's "quasistatic" object.
void ReadStepperSettings(const Reader& in, const Json& root, bool settings_object,
                         StepperConfig* config) {
  if (!settings_object) {
    config->Read(in, root, "scene", "");
    return;
  }
  const Json& object = root.at("quasistatic");
  std::vector<std::string> keys(std::begin(kSharedSettingKeys), std::end(kSharedSettingKeys));
  for (const std::string& key : config->OwnKeys()) keys.push_back(key);
  in.OnlyKeys(object, "quasistatic", keys);
  config->Read(in, object, "quasistatic", "quasistatic.");
}

// ---------------------------------------------------------------------------------------------
// Bodies

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

// A plane's pose: "normal" (and "point", default the origin), or "position" and
// "orientation" (the plane z = 0 of its frame; defaults: the origin, identity).
void ReadPlanePose(const Reader& in, const Json& b, const std::string& path, Body* body) {
  if (b.contains("normal")) {
    if (b.contains("position") || b.contains("orientation")) {
      in.Fail(path,
              "give a plane's \"normal\" and \"point\", or its \"position\" and "
              "\"orientation\", not both");
    }
    const Eigen::Vector3d normal = in.Vector(b.at("normal"), path + ".normal", 3);
    if (normal.norm() < 1e-12) in.Fail(path + ".normal", "must not be zero");
    body->state.orientation =
        Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), normal.normalized());
    body->state.position = in.Vector3(b, path, "point", Eigen::Vector3d::Zero());
    return;
  }
  if (b.contains("point")) in.Fail(path + ".point", "a plane's \"point\" goes with its \"normal\"");
  body->state.position = in.Vector3(b, path, "position", Eigen::Vector3d::Zero());
  body->state.orientation = ReadOrientation(in, b, path);
}

// The keys a body entry takes: listed under "fixed" or not, fixed or moving, with the row's
// kind of bodies.
std::vector<std::string> BodyKeys(const StepperEntry& row, bool listed_fixed, bool fixed,
                                  bool plane, bool convex) {
  std::vector<std::string> keys = {"name", "shape", "position", "orientation"};
  if (convex) {
    keys.insert(keys.end(), {"vertices", "mesh", "scale"});
  } else {
    keys.emplace_back("size");
  }
  if (!listed_fixed) keys.emplace_back("fixed");
  if (plane) keys.insert(keys.end(), {"normal", "point"});
  if (!row.velocities) {
    keys.insert(keys.end(), {"mass", "dofs"});
  } else if (!fixed) {
    keys.insert(keys.end(), {"mass", "inertia", "velocity", "angular_velocity"});
  }
  return keys;
}

// Mass, inertia and velocities: required mass > 0 for a moving body with velocities; mass >= 0
// (default 0) and free dofs for a posed one; none for a fixed body with velocities.
void ReadMass(const Reader& in, const Json& b, const std::string& path, const StepperEntry& row,
              Body* body) {
  if (!row.velocities) {
    const double mass = in.Number(b, path, "mass", 0.0);
    if (mass < 0.0) in.Fail(path + ".mass", "must be >= 0, got " + Reader::Format(mass));
    body->mass = SolidMassProperties(body->shape, mass);
    ReadDofs(in, b, path, body);
    return;
  }
  if (body->fixed) return;
  const double mass = in.Number(in.Required(b, path, "mass"), path + ".mass");
  if (!(mass > 0.0)) in.Fail(path + ".mass", "must be positive, got " + Reader::Format(mass));
  body->mass = SolidMassProperties(body->shape, mass);
  ReadInertia(in, b, path, body);
  std::string why;
  if (!body->mass.IsValid(&why)) in.Fail(path, why);
  body->state.linear_velocity = in.Vector3(b, path, "velocity", Eigen::Vector3d::Zero());
  body->state.angular_velocity = in.Vector3(b, path, "angular_velocity", Eigen::Vector3d::Zero());
}

// A body of "bodies" (`listed_fixed` false: "fixed" says, default true for a plane) or of the
// "fixed" array.
Body ReadBody(const Reader& in, const Json& b, const std::string& path, const StepperEntry& row,
              bool listed_fixed) {
  if (!b.is_object()) in.Fail(path, "expected an object");
  Body body;
  body.name = in.String(in.Required(b, path, "name"), path + ".name");
  if (body.name.empty()) in.Fail(path + ".name", "must not be empty");
  if (!row.velocities && b.contains("shape") && b.at("shape") == "point") {
    body.shape.kind = ShapeKind::Sphere;
    body.shape.size.setZero();
  } else {
    body.shape = ReadShape(in, b, path);
  }
  const bool plane = body.shape.kind == ShapeKind::HalfSpace;
  body.fixed = listed_fixed || in.Bool(b, path, "fixed", plane);
  if (plane && !body.fixed && row.velocities) {
    in.Fail(path + ".shape", "a plane cannot move: list it under \"fixed\"");
  }
  in.OnlyKeys(
      b, path,
      BodyKeys(row, listed_fixed, body.fixed, plane, body.shape.kind == ShapeKind::Polyhedron));
  if (plane) {
    ReadPlanePose(in, b, path, &body);
  } else {
    const bool required = row.velocities;
    body.state.position =
        required
            ? Eigen::Vector3d(in.Vector(in.Required(b, path, "position"), path + ".position", 3))
            : in.Vector3(b, path, "position", Eigen::Vector3d::Zero());
    body.state.orientation = ReadOrientation(in, b, path);
  }
  ReadMass(in, b, path, row, &body);
  return body;
}

// The entries of a list that can be bodies: objects with a name, which every body has. The
// lists are sized by these once (a scene of 10^5 bodies would otherwise copy them some 17 times
// as they grow), and not by the lists' lengths, so that a malformed list of millions of numbers
// reserves nothing before its first entry fails.
size_t NamedObjects(const Json& root, const char* key) {
  const auto it = root.find(key);
  if (it == root.end() || !it->is_array()) return 0;
  size_t count = 0;
  for (const Json& entry : *it) count += entry.is_object() && entry.contains("name") ? 1 : 0;
  return count;
}

// "bodies" (moving, or fixed by their "fixed" flag), then "fixed".
void ReadBodies(const Reader& in, const Json& root, const StepperEntry& row, Scene* scene) {
  const Json& bodies = in.Required(root, "scene", "bodies");
  if (!bodies.is_array() || bodies.empty()) in.Fail("bodies", "expected a non-empty array");
  const size_t named = NamedObjects(root, "bodies") + NamedObjects(root, "fixed");
  scene->bodies.reserve(scene->bodies.size() + named);
  std::unordered_set<std::string> names;
  names.reserve(named);
  for (size_t k = 0; k < bodies.size(); ++k) {
    const std::string path = "bodies[" + std::to_string(k) + "]";
    AddBody(in, path, ReadBody(in, bodies[k], path, row, false), row.velocities, scene, &names);
  }
  if (!root.contains("fixed")) return;
  const Json& fixed = root.at("fixed");
  if (!fixed.is_array()) in.Fail("fixed", "expected an array");
  for (size_t k = 0; k < fixed.size(); ++k) {
    const std::string path = "fixed[" + std::to_string(k) + "]";
    AddBody(in, path, ReadBody(in, fixed[k], path, row, true), row.velocities, scene, &names);
  }
}

// ---------------------------------------------------------------------------------------------
// Contact laws

// The steppers, other than `row`, that read the law field `key` ("implicit or explicit"), or
// "".
std::string StepperTakingLaw(const StepperEntry& row, const std::string& key) {
  std::string takers;
  for (const StepperEntry& other : StepperRegistry()) {
    if (other.name != row.name && Contains(other.law_keys, key)) {
      takers += (takers.empty() ? "" : " or ") + other.name;
    }
  }
  return takers;
}

// The law fields of `object` (besides `extra` keys) that the row's stepper reads; a field only
// another stepper reads says so.
void ReadLawFields(const Reader& in, const Json& object, const std::string& path,
                   const StepperEntry& row, std::vector<std::string> extra, ContactLaw* law) {
  for (const char* key : kLawKeys) {
    if (object.is_object() && object.contains(key) && !Contains(row.law_keys, key)) {
      const std::string takers = StepperTakingLaw(row, key);
      in.Fail(path + "." + key, std::string("the ") + row.name + " stepper reads no " + key +
                                    (takers.empty() ? "" : " (the " + takers + " stepper does)"));
    }
  }
  extra.insert(extra.end(), row.law_keys.begin(), row.law_keys.end());
  in.OnlyKeys(object, path, extra);
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

// "contact": the default law (an older quasistatic file gives its mu as "friction").
void ReadDefaultLaw(const Reader& in, const Json& root, const StepperEntry& row, Scene* scene) {
  ContactLaw& law = scene->laws.default_law;
  if (root.contains("contact")) ReadLawFields(in, root.at("contact"), "contact", row, {}, &law);
  if (!root.contains("friction")) return;
  if (root.contains("contact")) in.Fail("friction", "give the friction as \"contact\": {\"mu\"}");
  law.mu = in.Number(root.at("friction"), "friction");
  if (!(law.mu >= 0.0)) in.Fail("friction", "must be >= 0, got " + Reader::Format(law.mu));
}

// "pairs": per-pair laws over the default one.
void ReadPairs(const Reader& in, const Json& root, const StepperEntry& row, Scene* scene) {
  if (!root.contains("pairs")) return;
  const Json& pairs = root.at("pairs");
  if (!pairs.is_array()) in.Fail("pairs", "expected an array");
  for (size_t k = 0; k < pairs.size(); ++k) {
    const std::string path = "pairs[" + std::to_string(k) + "]";
    const Json& p = pairs[k];
    ContactLaw law = scene->laws.default_law;
    ReadLawFields(in, p, path, row, {"bodies"}, &law);
    const Json& two = in.Required(p, path, "bodies");
    if (!two.is_array() || two.size() != 2) in.Fail(path + ".bodies", "expected two names");
    const int a = BodyIndex(in, *scene, two[0], path + ".bodies[0]");
    const int b = BodyIndex(in, *scene, two[1], path + ".bodies[1]");
    if (a == b) in.Fail(path + ".bodies", "a body cannot touch itself");
    scene->laws.Set(scene->bodies[a].name, scene->bodies[b].name, law);
  }
}

// ---------------------------------------------------------------------------------------------
// Impulses and actuators

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

// ---------------------------------------------------------------------------------------------
// The whole scene

// Bodies overlapping at the start would be pushed apart in the first step at any speed (a cube
// 0.5 m into the ground leaves at 50 m/s): see ApplyInitialOverlapPolicy(). `posed`: the
// bodies where the stepper starts them (actuated ones where their commands put them);
// `movable`: which of them "separate" may move.
void CheckInitialOverlap(const Reader& in, const Json& root, const std::vector<Body>& posed,
                         const std::vector<char>& movable, std::vector<Body>* bodies) {
  std::vector<PlacedShape> placed;
  placed.reserve(posed.size());
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

// Building the stepper checks what only the whole system shows (unsupported pairs, qp-lcp
// without regularization) and poses actuated bodies where their commands start them; the
// initial-overlap policy then sees the bodies where the first step does.
void CheckStepper(const Reader& in, const Json& root, const std::string& source, Scene* scene) {
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
  movable.reserve(scene->bodies.size());
  for (size_t i = 0; i < scene->bodies.size(); ++i) {
    movable.push_back(!scene->bodies[i].fixed && !actuated[i] ? 1 : 0);
  }
  CheckInitialOverlap(in, root, check->bodies(), movable, &scene->bodies);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scene

Scene::Scene() { SetStepper("implicit"); }

void Scene::SetStepper(const std::string& name) {
  const StepperEntry* row = FindStepper(name);
  if (row == nullptr) {
    throw InputError("unknown stepper '" + name + "' (expected one of " + StepperNameList() + ")");
  }
  config_ = ConfigHolder(row->make_config());
  stepper_ = row->name;
}

void Scene::ThrowOtherOptions() const {
  throw InputError("scene '" + name + "' is stepped by the " + stepper_ +
                   " stepper, whose options are of another type");
}

bool Scene::TakesVariant(const std::string& variant) const {
  return config_.get()->Clone()->SetVariant(variant).empty();
}

void Scene::ApplyVariant(const std::string& variant) {
  const std::string why = config_.get()->SetVariant(variant);
  if (!why.empty()) throw InputError(why);
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
  if (LooksLikeXml(text)) return ParseMjcfScene(text, source);
  const Reader in(source);
  const Json root = ParseJson(text, source);
  if (!root.is_object()) in.Fail("scene", "expected an object");
  const bool settings_object = root.contains("quasistatic");
  const StepperEntry& row = ReadStepperRow(in, root, settings_object);
  Scene scene;
  scene.SetStepper(row.name);
  CheckSceneKeys(in, root, row, scene.config(), settings_object);
  ReadHeader(in, root, source, &scene);
  ReadStepperSettings(in, root, settings_object, &scene.mutable_config());
  ReadDefaultLaw(in, root, row, &scene);
  ReadBodies(in, root, row, &scene);
  if (row.actuators) ReadActuators(in, root, &scene);
  ReadPairs(in, root, row, &scene);
  if (row.velocities) ReadImpulses(in, root, &scene);
  CheckStepper(in, root, source, &scene);
  return scene;
}

Scene LoadScene(const std::string& path) {
  if (IsMjcfPath(path)) return LoadMjcfScene(path);
  return ParseScene(internal::ReadTextFile(path), path);
}

std::unique_ptr<Stepper> MakeStepper(const Scene& scene) {
  return scene.config().MakeStepper(scene.bodies, scene.laws, scene.actuators);
}

// Collected on each call: solvers registered at run time join the comparisons.
std::vector<std::string> DefaultVariants(const std::string& stepper) {
  const StepperEntry* row = FindStepper(stepper);
  if (row == nullptr) {
    throw InputError("unknown stepper '" + stepper + "' (expected one of " + StepperNameList() +
                     ")");
  }
  return row->make_config()->DefaultVariants();
}

void RequireKnownVariant(const std::string& variant) {
  std::string grammars;
  for (const StepperEntry& row : StepperRegistry()) {
    const std::unique_ptr<StepperConfig> config = row.make_config();
    if (config->SetVariant(variant).empty()) return;
    grammars += (grammars.empty() ? "" : "; ") + row.name + " scenes: " + config->VariantGrammar();
  }
  throw InputError("unknown solver '" + variant + "' (expected, for " + grammars + ")");
}

}  // namespace ncpkit
