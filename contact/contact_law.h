// Contact laws: friction and compliance of a pair of bodies, and the table that gives every
// pair of a scene its law.
#ifndef NCPKIT_CONTACT_CONTACT_LAW_H_
#define NCPKIT_CONTACT_CONTACT_LAW_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ncpkit {

// The contact law of one pair of bodies. Every field: meaning, default, units, range and
// source; IsValid() says which one is out of range.
struct ContactLaw {
  // Friction coefficient mu (dimensionless). Default 0.5; >= 0. Xie & Chakraborty 2016 eq. 9.
  double mu = 0.5;
  // Friction ellipsoid semi-axes e_t, e_o (dimensionless). Default 1; > 0. Xie & Chakraborty 2016
  // eq. 9.
  double e_t = 1.0, e_o = 1.0;
  // Torsion semi-axis e_r (m). Default 1; > 0. Xie & Chakraborty 2016 eq. 9.
  double e_r = 1.0;
  // Torsional friction about the normal; false: point-contact Coulomb (Trinkle, Berard & Pang 2005
  // eqs. 6-8). Default true.
  bool torsion = true;
  // Quasi-rigid layer (Xie & Chakraborty's quasi-rigid paper), used when thickness > 0: thickness
  // delta_max (m), default 0,
  // >= 0; normal stiffness k (N/m), default 0, > 0 with a layer; damping c (N s/m), default 0,
  // >= 0.
  double thickness = 0.0;
  double stiffness = 0.0;
  double damping = 0.0;
  // Kelvin-Voigt tangential stiffness k_t (N/m) and damping c_t (N s/m) of the layer (Xie &
  // Chakraborty, quasi-rigid); default 0, >= 0; k_t = 0: friction by Xie & Chakraborty 2016 eq. 9.
  double tangential_stiffness = 0.0;
  double tangential_damping = 0.0;
  // Newton's coefficient of restitution e (dimensionless): the normal speed after an impact is
  // e times the speed before. Default 0 (inelastic); in [0, 1]. Used by the explicit stepper
  // (integrators/explicit_stepper.h); the implicit and quasistatic steppers refuse e > 0.
  double restitution = 0.0;
  bool compliant() const { return thickness > 0.0; }
  bool elastic_friction() const { return compliant() && tangential_stiffness > 0.0; }
  bool IsValid(std::string* why) const;
};

// Per-pair contact laws: a default and overrides by unordered pair of body names.
class ContactLawTable {
 public:
  ContactLaw default_law;
  void Set(const std::string& a, const std::string& b, const ContactLaw& law);
  const ContactLaw& Get(const std::string& a, const std::string& b) const;
  // The default law and every override valid; else `why` names the law ("contact: ..." or
  // "contact a-b: ..."). Costs the number of overrides, not the number of pairs of bodies.
  bool IsValid(std::string* why) const;
  // The thickest quasi-rigid layer among the default law and the overrides (0 without one).
  double MaxThickness() const;
  // The overrides by (smaller name, larger name).
  const std::map<std::pair<std::string, std::string>, ContactLaw>& overrides() const {
    return overrides_;
  }

 private:
  friend class ContactLawsByIndex;
  std::map<std::pair<std::string, std::string>, ContactLaw> overrides_;
};

// A table's laws for a list of bodies by their indices, resolved from the names once, so that a
// stepper asking per contact per step compares no strings: Get(i, j) is the default law unless
// body min(i, j) has overrides, then a binary search among them. Bodies sharing a name share its
// overrides; overrides naming no body are dropped.
class ContactLawsByIndex {
 public:
  ContactLawsByIndex() = default;
  ContactLawsByIndex(const ContactLawTable& table, const std::vector<std::string>& names);
  const ContactLaw& Get(int i, int j) const;

 private:
  ContactLaw default_law_;
  // Per body: (the other body's larger index, the pair's law), sorted by index.
  std::vector<std::vector<std::pair<int, ContactLaw>>> overrides_;
};

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_CONTACT_LAW_H_
