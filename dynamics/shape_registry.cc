#include "dynamics/shape_registry.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "dynamics/shapes/box.h"
#include "dynamics/shapes/capsule.h"
#include "dynamics/shapes/cylinder.h"
#include "dynamics/shapes/ellipsoid.h"
#include "dynamics/shapes/half_space.h"
#include "dynamics/shapes/polyhedron.h"
#include "dynamics/shapes/sphere.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// Rows by kind: the built-in kinds in ShapeKind's order, then the registered ones. A removed
// kind leaves its slot empty, so that every other kind keeps its number.
struct Registry {
  std::vector<std::unique_ptr<ShapeType>> rows;
  Registry() {
    for (ShapeType (*row)() :
         {&HalfSpaceShapeType, &BoxShapeType, &SphereShapeType, &EllipsoidShapeType,
          &CylinderShapeType, &CapsuleShapeType, &PolyhedronShapeType}) {
      rows.push_back(std::make_unique<ShapeType>(row()));
    }
  }
};

constexpr int kBuiltInKinds = 7;

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

bool WellFormedName(const std::string& name) {
  return !name.empty() && std::islower(static_cast<unsigned char>(name[0])) != 0 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::islower(static_cast<unsigned char>(c)) != 0 ||
                  std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
         });
}

}  // namespace

bool ShapeType::IsValid(std::string* why) const {
  std::string problem;
  if (!WellFormedName(name)) {
    problem = "a shape's name is [a-z][a-z0-9-]*";
  } else if (support == nullptr || bounding_radius == nullptr || bounding_half_extents == nullptr ||
             solid_mass == nullptr) {
    problem = "it needs a support function, both bounds and its mass properties";
  } else if (size_count < 0 || size_count > 3) {
    problem = "its size has 0 to 3 numbers";
  }
  if (why != nullptr) *why = problem;
  return problem.empty();
}

ShapeKind RegisterShape(const ShapeType& type) {
  std::string why;
  if (!type.IsValid(&why)) throw InputError("cannot register shape '" + type.name + "': " + why);
  if (FindShapeType(type.name) != nullptr) {
    throw InputError("cannot register shape '" + type.name + "': the name is taken");
  }
  std::vector<std::unique_ptr<ShapeType>>& rows = TheRegistry().rows;
  rows.push_back(std::make_unique<ShapeType>(type));
  return static_cast<ShapeKind>(rows.size() - 1);
}

bool UnregisterShape(const std::string& name) {
  std::vector<std::unique_ptr<ShapeType>>& rows = TheRegistry().rows;
  for (size_t k = kBuiltInKinds; k < rows.size(); ++k) {
    if (rows[k] != nullptr && rows[k]->name == name) {
      rows[k].reset();
      return true;
    }
  }
  return false;
}

const ShapeType* FindShapeType(ShapeKind kind) {
  const std::vector<std::unique_ptr<ShapeType>>& rows = TheRegistry().rows;
  const auto k = static_cast<size_t>(kind);
  return k < rows.size() ? rows[k].get() : nullptr;
}

const ShapeType* FindShapeType(const std::string& name) {
  for (const std::unique_ptr<ShapeType>& row : TheRegistry().rows) {
    if (row != nullptr && row->name == name) return row.get();
  }
  return nullptr;
}

bool ParseShapeKind(const std::string& name, ShapeKind* kind) {
  const std::vector<std::unique_ptr<ShapeType>>& rows = TheRegistry().rows;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] != nullptr && rows[k]->name == name) {
      *kind = static_cast<ShapeKind>(k);
      return true;
    }
  }
  return false;
}

std::vector<std::string> ShapeNames() {
  std::vector<std::string> names;
  for (const std::unique_ptr<ShapeType>& row : TheRegistry().rows) {
    if (row != nullptr) names.push_back(row->name);
  }
  return names;
}

}  // namespace ncpkit
