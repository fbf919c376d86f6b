// The explicit stepper's pyramid model (Stewart & Trinkle 1996): Coulomb's cone linearized by
// n_d edge directions, per contact z = [lambda_n, beta_1..beta_nd, gamma] and r = [lambda_n,
// sum beta_k d_k], with the rows mu lambda_n - sum beta >= 0 _|_ gamma >= 0 and gamma's columns
// in the beta rows: 2 + n_d unknowns per contact, for Lemke and the Newton methods (the gamma
// rows have a zero diagonal, which PGS cannot take).
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_PYRAMID_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_PYRAMID_H_

#include <vector>

#include "integrators/explicit/linearized.h"

namespace ncpkit::internal {

class PyramidModel : public LinearizedConeModel {
 public:
  // InputError for a solver that needs a positive diagonal.
  explicit PyramidModel(const ExplicitStepperOptions& options);
  const char* name() const override { return "pyramid"; }

 private:
  void BuildGenerator(double mu, Generator* G) const override;
  void BuildGeneratorDerivative(Generator* dG) const override;
  void AddCouplings(int base, double mu, std::vector<Eigen::Triplet<double>>* triplets,
                    Eigen::VectorXd* q) const override;
  void AddCouplingDerivatives(int base,
                              std::vector<Eigen::Triplet<double>>* triplets) const override;
  void WarmStart(const Eigen::Vector3d& r, double mu, Eigen::Ref<Eigen::VectorXd> z) const override;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_PYRAMID_H_
