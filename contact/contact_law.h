// Contact laws: friction and compliance of a pair of bodies, and the table that gives every
// pair of a scene its law.
#ifndef NCPKIT_CONTACT_CONTACT_LAW_H_
#define NCPKIT_CONTACT_CONTACT_LAW_H_

#include <map>
#include <string>
#include <utility>

namespace ncpkit {

// The contact law of one pair of bodies.
struct ContactLaw {
  double mu = 0.5;
  double e_t = 1.0, e_o = 1.0;  // friction ellipsoid, dimensionless
  double e_r = 1.0;             // torsion semi-axis (m)
  bool torsion = true;          // false: point-contact Coulomb, no torsional friction
  // Quasi-rigid layer (seed 004), used when thickness > 0.
  double thickness = 0.0;             // delta_max (m)
  double stiffness = 0.0;             // k (N/m)
  double damping = 0.0;               // c (N s/m)
  double tangential_stiffness = 0.0;  // k_t (N/m); 0: friction by eq. 9
  double tangential_damping = 0.0;    // c_t (N s/m)
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

 private:
  std::map<std::pair<std::string, std::string>, ContactLaw> overrides_;
};

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_CONTACT_LAW_H_
