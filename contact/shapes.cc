#include "contact/shapes.h"

#include <cmath>
#include <sstream>

namespace ncpkit {

int Shape::NumInequalities() const {
  switch (kind) {
    case ShapeKind::HalfSpace:
    case ShapeKind::Sphere:
    case ShapeKind::Ellipsoid:
      return 1;
    case ShapeKind::Box:
      return 6;
    case ShapeKind::Cylinder:
      return 3;
  }
  return 0;
}

bool Shape::IsValid(std::string* why) const {
  int used = 0;
  switch (kind) {
    case ShapeKind::HalfSpace:
      used = 0;
      break;
    case ShapeKind::Sphere:
      used = 1;
      break;
    case ShapeKind::Cylinder:
      used = 2;
      break;
    case ShapeKind::Box:
    case ShapeKind::Ellipsoid:
      used = 3;
      break;
  }
  std::ostringstream os;
  for (int k = 0; k < used && os.str().empty(); ++k) {
    if (!(std::isfinite(size[k]) && size[k] > 0.0)) {
      os << "size[" << k << "] = " << size[k] << " must be positive and finite";
    }
  }
  if (why) *why = os.str();
  return os.str().empty();
}

}  // namespace ncpkit
