#include "dynamics/body.h"

#include <cmath>
#include <string>
#include <unordered_set>

#include "dynamics/shape_registry.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

MassProperties SolidMassProperties(const Shape& shape, double mass) {
  MassProperties properties;
  properties.mass = mass;
  if (mass == 0.0) return properties;
  const ShapeType* type = FindShapeType(shape.kind);
  if (type == nullptr) throw InputError("SolidMassProperties: " + shape.Name());
  return type->solid_mass(shape, mass);
}

int FindBody(const std::vector<Body>& bodies, const std::string& name) {
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void ValidateBody(const Body& body, bool dynamic) {
  // The body's label is built only for an error (a scene of thousands of bodies is checked
  // body by body when read and when its stepper is built).
  const auto fail = [&body](const std::string& why) {
    throw InputError("", 0, "body '" + body.name + "'", why);
  };
  std::string why;
  if (!(!dynamic && body.IsPoint()) && !body.shape.IsValid(&why)) fail(why);
  if (!body.fixed && dynamic && !body.mass.IsValid(&why)) fail(why);
  if (!body.fixed && dynamic && body.shape.kind == ShapeKind::HalfSpace) {
    fail("a plane must be fixed");
  }
  const RigidBodyState& s = body.state;
  if (!s.position.allFinite() || !s.orientation.coeffs().allFinite() ||
      !s.linear_velocity.allFinite() || !s.angular_velocity.allFinite()) {
    fail("initial state has a non-finite value");
  }
  if (std::abs(s.orientation.norm() - 1.0) > 1e-6) fail("orientation is not a unit quaternion");
}

void ValidateBodies(const std::vector<Body>& bodies, bool dynamic) {
  std::unordered_set<std::string> names;
  names.reserve(bodies.size());
  for (const Body& body : bodies) {
    if (!names.insert(body.name).second) {
      throw InputError("the body name '" + body.name + "' is used twice");
    }
    ValidateBody(body, dynamic);
  }
}

double StateQuantity(const RigidBodyState& state, int quantity) {
  if (quantity < 3) return state.position[quantity];
  if (quantity < 6) return state.linear_velocity[quantity - 3];
  return state.angular_velocity[quantity - 6];
}

}  // namespace ncpkit
