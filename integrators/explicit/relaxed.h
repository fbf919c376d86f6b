// The explicit stepper's relaxed model (Anitescu 2006): the KKT conditions of a convex QP in the
// velocities, posed as an LCP in the pyramid's edge impulses beta (n_d per contact, r = sum
// beta_k [1, mu d_k]) with the symmetric positive semidefinite matrix G^T J M^-1 J^T G; for
// Lemke, PGS and the Newton methods. Sliding contacts separate at mu |v_T| (the relaxation's
// known artefact); the end-of-step velocities are unique.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_RELAXED_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_RELAXED_H_

#include "integrators/explicit/linearized.h"

namespace ncpkit::internal {

class RelaxedModel : public LinearizedConeModel {
 public:
  explicit RelaxedModel(const ExplicitStepperOptions& options);
  const char* name() const override { return "relaxed"; }

 private:
  void BuildGenerator(double mu, Generator* G) const override;
  void BuildGeneratorDerivative(Generator* dG) const override;
  void WarmStart(const Eigen::Vector3d& r, double mu, Eigen::Ref<Eigen::VectorXd> z) const override;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_RELAXED_H_
