#include "contact/contact_law.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ncpkit {

bool ContactLaw::IsValid(std::string* why) const {
  std::ostringstream os;
  auto positive = [&](const char* name, double value) {
    if (os.str().empty() && !(std::isfinite(value) && value > 0.0)) {
      os << name << " = " << value << " must be positive and finite";
    }
  };
  auto non_negative = [&](const char* name, double value) {
    if (os.str().empty() && !(std::isfinite(value) && value >= 0.0)) {
      os << name << " = " << value << " must be >= 0 and finite";
    }
  };
  non_negative("mu", mu);
  positive("e_t", e_t);
  positive("e_o", e_o);
  positive("e_r", e_r);
  non_negative("thickness", thickness);
  non_negative("stiffness", stiffness);
  non_negative("damping", damping);
  non_negative("tangential_stiffness", tangential_stiffness);
  non_negative("tangential_damping", tangential_damping);
  if (os.str().empty() && !(restitution >= 0.0 && restitution <= 1.0)) {
    os << "restitution = " << restitution << " must be in [0, 1]";
  }
  if (os.str().empty() && thickness > 0.0 && stiffness <= 0.0) {
    os << "a compliant layer (thickness " << thickness << ") needs stiffness > 0";
  }
  if (why) *why = os.str();
  return os.str().empty();
}

void ContactLawTable::Set(const std::string& a, const std::string& b, const ContactLaw& law) {
  overrides_[std::minmax(a, b)] = law;
}

const ContactLaw& ContactLawTable::Get(const std::string& a, const std::string& b) const {
  if (overrides_.empty()) return default_law;
  auto it = overrides_.find(std::minmax(a, b));
  return it == overrides_.end() ? default_law : it->second;
}

bool ContactLawTable::IsValid(std::string* why) const {
  std::string reason;
  if (!default_law.IsValid(&reason)) {
    if (why) *why = "contact: " + reason;
    return false;
  }
  for (const auto& [names, law] : overrides_) {
    if (!law.IsValid(&reason)) {
      if (why) *why = "contact " + names.first + "-" + names.second + ": " + reason;
      return false;
    }
  }
  return true;
}

double ContactLawTable::MaxThickness() const {
  double thickest = default_law.thickness;
  for (const auto& entry : overrides_) thickest = std::max(thickest, entry.second.thickness);
  return thickest;
}

ContactLawsByIndex::ContactLawsByIndex(const ContactLawTable& table,
                                       const std::vector<std::string>& names)
    : default_law_(table.default_law), overrides_(names.size()) {
  if (table.overrides_.empty()) return;
  std::map<std::string, std::vector<int>> indices;
  for (size_t i = 0; i < names.size(); ++i) indices[names[i]].push_back(static_cast<int>(i));
  for (const auto& [pair, law] : table.overrides_) {
    const auto a = indices.find(pair.first), b = indices.find(pair.second);
    if (a == indices.end() || b == indices.end()) continue;
    for (const int i : a->second) {
      for (const int j : b->second) {
        if (i != j) overrides_[std::min(i, j)].emplace_back(std::max(i, j), law);
      }
    }
  }
  for (auto& list : overrides_) {
    std::sort(list.begin(), list.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
  }
}

const ContactLaw& ContactLawsByIndex::Get(int i, int j) const {
  const auto& list = overrides_[std::min(i, j)];
  if (list.empty()) return default_law_;
  const int other = std::max(i, j);
  const auto it =
      std::lower_bound(list.begin(), list.end(), other,
                       [](const auto& entry, int index) { return entry.first < index; });
  return it != list.end() && it->first == other ? it->second : default_law_;
}

}  // namespace ncpkit
