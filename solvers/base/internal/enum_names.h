// Names of enum values: one table per enum gives both directions (ToString and Parse), so that a
// new value is one new line and a name cannot be spelled one way when printed and another when
// read.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_ENUM_NAMES_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_ENUM_NAMES_H_

#include <cstddef>
#include <string>

namespace ncpkit::internal {

template <class Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// The name of `value` in the table, or "?" for a value it lacks.
template <class Enum, size_t N>
const char* NameIn(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// The value named `name` in the table: true and *value set, or false.
template <class Enum, size_t N>
bool ValueIn(const EnumName<Enum> (&table)[N], const std::string& name, Enum* value) {
  for (const EnumName<Enum>& entry : table) {
    if (name == entry.name) {
      *value = entry.value;
      return true;
    }
  }
  return false;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_ENUM_NAMES_H_
