#include "integrators/quasistatic_scene.h"

#include "contact/overlap.h"
#include "integrators/json_reader.h"
#include "integrators/limits.h"
#include "solvers/solver_registry.h"
#include "readers/text_scanner.h"

namespace ncpkit {
namespace {

using internal::ApplyInitialOverlapPolicy;
using internal::Json;
using internal::Reader;
using internal::ReadOrientation;
using internal::ReadShape;

const char* const kDofs[] = {"x", "y", "z", "rx", "ry", "rz"};

QuasistaticBody ReadBody(const Reader& in, const Json& object, const std::string& path) {
  in.OnlyKeys(object, path,
              {"name", "shape", "size", "mass", "position", "orientation", "fixed", "dofs"});
  QuasistaticBody body;
  body.name = in.String(in.Required(object, path, "name"), path + ".name");
  if (object.contains("shape") && object.at("shape") == "point") {
    body.shape.kind = ShapeKind::Sphere;
    body.shape.size.setZero();
  } else {
    body.shape = ReadShape(in, object, path);
  }
  body.fixed = in.Bool(object, path, "fixed", body.shape.kind == ShapeKind::HalfSpace);
  body.position = in.Vector3(object, path, "position", Eigen::Vector3d::Zero());
  body.orientation = ReadOrientation(in, object, path);
  const double mass = in.Number(object, path, "mass", 0.0);
  if (mass < 0.0) in.Fail(path + ".mass", "must be >= 0, got " + Reader::Format(mass));
  if (mass > 0.0) {
    const Shape& s = body.shape;
    body.mass = s.kind == ShapeKind::Box
                    ? MassProperties::Box(mass, s.size)
                    : MassProperties::Ellipsoid(
                          mass, Eigen::Vector3d::Constant(s.size[0] > 0.0 ? s.size[0] : 1e-3));
  } else {
    body.mass.mass = 0.0;
  }
  if (object.contains("dofs")) {
    const Json& dofs = object.at("dofs");
    if (!dofs.is_array()) in.Fail(path + ".dofs", "expected an array of x, y, z, rx, ry, rz");
    body.free_dofs.fill(false);
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
      body.free_dofs[found] = true;
    }
  }
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

// As for the implicit scenes: bodies overlapping at the start, with actuated bodies where their
// commands put them at t = 0, are refused unless the scene asks to separate them; only the
// unactuated ones move. Pairs of fixed or actuated bodies are not checked (the steppers do not
// model them either).
void CheckInitialOverlap(const Reader& in, const Json& root,
                         const std::vector<QuasistaticBody>& posed, QuasistaticSystem* system) {
  std::vector<PlacedShape> placed;
  for (const QuasistaticBody& b : posed) {
    PlacedShape p;
    p.name = b.name;
    p.shape = b.shape;
    p.pose.position = b.position;
    p.pose.rotation = b.orientation.toRotationMatrix();
    p.inverse_mass = b.fixed || b.actuated ? 0.0 : 1.0 / b.mass.mass;
    placed.push_back(p);
  }
  ApplyInitialOverlapPolicy(in, root, &placed);
  for (size_t i = 0; i < placed.size(); ++i) {
    QuasistaticBody& body = system->mutable_bodies()[i];
    if (!body.fixed && !body.actuated) body.position = placed[i].pose.position;
  }
}

}  // namespace

bool IsQuasistaticSceneText(const std::string& text) {
  try {
    const Json root = Json::parse(text);
    return root.is_object() && root.contains("quasistatic");
  } catch (const Json::exception&) {
    return false;
  }
}

QuasistaticScene ParseQuasistaticScene(const std::string& text, const std::string& source) {
  const Reader in(source);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    throw std::invalid_argument(source + ": not valid JSON: " + e.what());
  }
  in.OnlyKeys(root, "scene",
              {"name", "description", "duration", "quasistatic", "friction", "pairs", "bodies",
               "actuators", "commands", "initial_overlap"});
  QuasistaticScene scene;
  scene.name = root.contains("name") ? in.String(root.at("name"), "name") : source;
  if (root.contains("description")) {
    scene.description = in.String(root.at("description"), "description");
  }
  scene.duration = in.Positive(root, "scene", "duration");

  const Json& q = in.Required(root, "scene", "quasistatic");
  in.OnlyKeys(q, "quasistatic",
              {"model", "solver", "h", "gravity", "tolerance", "max_iterations", "warm_start",
               "contact_threshold", "friction_directions", "regularization", "plane_normal"});
  QuasistaticOptions& o = scene.options;
  if (q.contains("model")) {
    const std::string model = in.String(q.at("model"), "quasistatic.model");
    if (!ParseQuasistaticModel(model, &o.model)) {
      in.Fail("quasistatic.model", "unknown model '" + model + "' (expected dqc, dlc, qp, qp-lcp)");
    }
  }
  if (q.contains("solver")) o.solver = in.String(q.at("solver"), "quasistatic.solver");
  o.h = in.Number(q, "quasistatic", "h", o.h);
  o.gravity = in.Vector3(q, "quasistatic", "gravity", o.gravity);
  o.tolerance = in.Number(q, "quasistatic", "tolerance", o.tolerance);
  o.max_iterations = static_cast<int>(
      in.Integer(q, "quasistatic", "max_iterations", o.max_iterations, 0, kMaxSolverIterations));
  o.warm_start = in.Bool(q, "quasistatic", "warm_start", o.warm_start);
  o.contact_threshold = in.Number(q, "quasistatic", "contact_threshold", o.contact_threshold);
  o.friction_directions = static_cast<int>(in.Integer(
      q, "quasistatic", "friction_directions", o.friction_directions, 3, kMaxFrictionDirections));
  o.regularization = in.Number(q, "quasistatic", "regularization", o.regularization);
  o.plane_normal = in.Vector3(q, "quasistatic", "plane_normal", o.plane_normal);
  o.default_friction = in.Number(root, "scene", "friction", o.default_friction);
  std::string why;
  if (!o.IsValid(&why)) in.Fail("quasistatic", why);

  const Json& bodies = in.Required(root, "scene", "bodies");
  if (!bodies.is_array() || bodies.empty()) in.Fail("bodies", "expected a non-empty array");
  for (size_t k = 0; k < bodies.size(); ++k) {
    const std::string path = "bodies[" + std::to_string(k) + "]";
    try {
      scene.system.AddBody(ReadBody(in, bodies[k], path));
    } catch (const std::invalid_argument& e) {
      if (std::string(e.what()).rfind(source, 0) == 0) throw;
      in.Fail(path, e.what());
    }
  }
  const auto body_index = [&](const Json& value, const std::string& path) {
    const std::string name = in.String(value, path);
    const int b = scene.system.FindBody(name);
    if (b < 0) in.Fail(path, "unknown body '" + name + "'");
    return b;
  };
  if (root.contains("actuators")) {
    const Json& list = root.at("actuators");
    if (!list.is_array()) in.Fail("actuators", "expected an array");
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string path = "actuators[" + std::to_string(k) + "]";
      const Json& a = list[k];
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
        act.bodies.push_back(body_index(moved[j], path + ".bodies[" + std::to_string(j) + "]"));
      }
      try {
        scene.system.AddActuator(act);
      } catch (const std::invalid_argument& e) {
        in.Fail(path, e.what());
      }
    }
  }
  if (root.contains("commands")) {
    const Json& commands = root.at("commands");
    if (!commands.is_object()) in.Fail("commands", "expected an object {actuator: command}");
    for (const auto& item : commands.items()) {
      const std::string path = "commands." + item.key();
      if (scene.system.FindActuator(item.key()) < 0) {
        in.Fail(path, "unknown actuator '" + item.key() + "'");
      }
      scene.system.SetCommand(item.key(), ReadCommand(in, item.value(), path));
    }
  }
  for (const Actuator& a : scene.system.actuators()) {
    if (!root.contains("commands") || !root.at("commands").contains(a.name)) {
      in.Fail("commands", "no command for actuator '" + a.name + "'");
    }
  }
  if (root.contains("pairs")) {
    const Json& pairs = root.at("pairs");
    if (!pairs.is_array()) in.Fail("pairs", "expected an array");
    for (size_t k = 0; k < pairs.size(); ++k) {
      const std::string path = "pairs[" + std::to_string(k) + "]";
      in.OnlyKeys(pairs[k], path, {"bodies", "mu"});
      const Json& names = in.Required(pairs[k], path, "bodies");
      if (!names.is_array() || names.size() != 2) in.Fail(path + ".bodies", "expected two names");
      const int a = body_index(names[0], path + ".bodies[0]");
      const int b = body_index(names[1], path + ".bodies[1]");
      const double mu = in.Number(in.Required(pairs[k], path, "mu"), path + ".mu");
      if (mu < 0.0) in.Fail(path + ".mu", "must be >= 0");
      scene.system.SetFriction(a, b, mu);
    }
  }
  // Constructing a stepper checks what only the whole system shows (unsupported pairs,
  // qp-lcp without regularization).
  try {
    QuasistaticStepper check(scene.system, scene.options);
    CheckInitialOverlap(in, root, check.bodies(), &scene.system);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).rfind(source, 0) == 0) throw;
    throw std::invalid_argument(source + ": " + e.what());
  }
  return scene;
}

namespace {
bool ReadFile(const std::string& path, std::string* text) {
  try {
    *text = internal::ReadTextFile(path);
  } catch (const InputError&) {
    return false;
  }
  return true;
}
}  // namespace

QuasistaticScene LoadQuasistaticScene(const std::string& path) {
  // ReadTextFile's InputError is an std::invalid_argument, as scene errors are.
  return ParseQuasistaticScene(internal::ReadTextFile(path), path);
}

bool IsQuasistaticSceneFile(const std::string& path) {
  std::string text;
  return ReadFile(path, &text) && IsQuasistaticSceneText(text);
}

bool IsQuasistaticVariant(const std::string& variant) {
  QuasistaticOptions options;
  try {
    ApplyQuasistaticVariant(variant, &options);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options) {
  SolverVariant parsed;
  QuasistaticModel model;
  try {
    parsed = ParseSolverVariant(variant);
  } catch (const InputError&) {
    parsed = SolverVariant();
  }
  if (parsed.model.empty() || !ParseQuasistaticModel(parsed.model, &model)) {
    throw InputError("unknown quasistatic variant '" + variant +
                     "' (expected <model>/<solver>[-cold], model dqc, dlc, qp or "
                     "qp-lcp, e.g. qp-lcp/lemke)");
  }
  const ProblemKind kind =
      model == QuasistaticModel::Dqc ? ProblemKind::Mixed : ProblemKind::Linear;
  if (!IsSolverName(parsed.solver, kind)) {
    throw InputError("unknown solver '" + parsed.solver + "' for the " + ToString(model) +
                     " model in variant '" + variant + "'");
  }
  options->model = model;
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
}

std::string QuasistaticVariantName(const QuasistaticOptions& options) {
  return SolverVariant{ToString(options.model), options.solver, !options.warm_start}.ToString();
}

const std::vector<std::string>& DefaultQuasistaticVariants() {
  static const std::vector<std::string> kVariants = {
      "dqc/fb-newton", "dlc/lemke",    "dlc/fb-newton", "qp/lemke",
      "qp/fb-newton",  "qp-lcp/lemke", "qp-lcp/pgs",    "qp-lcp/fb-newton"};
  return kVariants;
}

}  // namespace ncpkit
