// What the explicit stepper's pyramid and relaxed models share: impulses r_c = G_c z_c from a
// generator per contact and the LCP G^T W G z + G^T (J nu_f + b) >= 0 _|_ z >= 0 in the z, with
// W = J M^-1 J^T formed block by block for contacts sharing a moving body; solved by a registry
// solver under proximal-point iterations (solvers/registry/proximal_point.h), once more from a
// cold start if the warm-started attempt fails.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_LINEARIZED_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_LINEARIZED_H_

#include <Eigen/SparseCore>
#include <memory>
#include <vector>

#include "integrators/explicit/model.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/linalg/internal/sparse_assembly.h"
#include "solvers/registry/proximal_point.h"

namespace ncpkit::internal {

using Generator = Eigen::Matrix<double, 3, Eigen::Dynamic>;

// Pyramid edge k of n in the tangent coordinates (t1, t2).
Eigen::Vector2d PyramidEdge(int k, int n);

// The two edges of an n-sided pyramid around the angle of t and t's coefficients on them,
// t = a d_k + b d_k+1 (clamped at zero): returns k, sets `ab`.
int SplitOverEdges(const Eigen::Vector2d& t, int n, Eigen::Vector2d* ab);

class LinearizedConeModel : public ExplicitContactModel {
 public:
  void Solve(const ExplicitStepContext& step, const IslandView& island,
             std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) override;
  const ComplementaritySolver& solver() const override { return *solver_; }
  // The LCP's sensitivity (solvers/sensitivity/linear_sensitivity.h) at the step's z, kept in
  // workspace.model_unknowns, chained through r = G z: docs/derivatives.md "Steps".
  std::unique_ptr<ExplicitImpulseSensitivity> Sensitivity(
      const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
      const ExplicitWorkspace& workspace) const override;
  int unknowns_per_contact() const override { return unknowns_; }

 protected:
  // `unknowns`: z's entries per contact; `impulse_columns`: those G maps to the impulse (the
  // first ones); `problem_name`: the LCP's name in solver messages.
  LinearizedConeModel(const ExplicitStepperOptions& options, int unknowns, int impulse_columns,
                      const char* problem_name);
  // The contact's generator (3 x impulse_columns) for friction coefficient mu.
  virtual void BuildGenerator(double mu, Generator* G) const = 0;
  // Its derivative with respect to mu.
  virtual void BuildGeneratorDerivative(Generator* dG) const = 0;
  // Rows and columns of a contact's unknowns beyond G^T W G (from `base`, its first unknown):
  // none unless a model adds some; and their derivatives with respect to mu (q's are zero).
  virtual void AddCouplings(int /*base*/, double /*mu*/,
                            std::vector<Eigen::Triplet<double>>* /*triplets*/,
                            Eigen::VectorXd* /*q*/) const {}
  virtual void AddCouplingDerivatives(int /*base*/,
                                      std::vector<Eigen::Triplet<double>>* /*triplets*/) const {}
  // A contact's start z (its `unknowns` entries, zero on entry) from its previous impulse r in
  // this step's frame (r_N > 0).
  virtual void WarmStart(const Eigen::Vector3d& r, double mu,
                         Eigen::Ref<Eigen::VectorXd> z) const = 0;

  const int directions_;

 private:
  // W_ij = J_i M^-1 J_j^T (3 x 3, contact frames) of contacts sharing a moving body, by their
  // places in the island.
  struct Block {
    int row, col;
    Eigen::Matrix3d value;
  };
  void ComputeDelassusBlocks(const ExplicitStepContext& step, const IslandView& island);
  // The LCP over all a step's contacts, for Sensitivity(): its generators G (block diagonal),
  // couplings C and their offsets, and per contact dG_c z_c (a, 3 each) and dG_c^T u_c + dC_c z_c
  // (k, unknowns_ each), the derivatives by mu_c at the solution z with contact velocities u.
  struct StepLcp {
    Eigen::SparseMatrix<double> G, C;
    Eigen::VectorXd offsets, a, k;
  };
  void AssembleStepLcp(const Eigen::VectorXd& mu, const Eigen::VectorXd& z,
                       const Eigen::VectorXd& u, StepLcp* out) const;
  // M = G^T W G block by block, q = G^T u_free, and the model's couplings.
  void Assemble(const ExplicitStepContext& step, const IslandView& island);
  // The previous impulses matched to the island's contacts into z_ (empty for a cold start).
  void StartFromPrevious(const ExplicitStepContext& step, const IslandView& island,
                         const std::vector<ExplicitContact>& contacts);

  const int unknowns_, impulse_columns_;
  const char* const problem_name_;
  const bool warm_start_;
  std::unique_ptr<ComplementaritySolver> solver_;
  std::unique_ptr<ProximalPointSolver> proximal_;
  std::vector<Generator> generators_;
  std::vector<Block> blocks_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> matrix_;
  TripletAssembly<Eigen::SparseMatrix<double>> assembly_;
  LinearComplementarityProblem lcp_;
  Eigen::VectorXd z_, q_;
  // A block's W G and G^T W G, kept so that a step with as many columns allocates nothing.
  Generator half_;
  Eigen::MatrixXd block_value_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_LINEARIZED_H_
