// The explicit stepper's Coulomb-cone model: the frictional contact problem in FCLib's global
// form, M nu+ = M nu_f + J^T r, u = J nu+ + [b_N, 0, 0] (one block of M per moving body,
// H = J^T), for nsgs-velocity and, through its local form W = J M^-1 J^T, every friction solver;
// 3 unknowns per contact (Acary, Bremond & Huber 2018).
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_CONE_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_CONE_H_

#include <memory>
#include <utility>
#include <vector>

#include "integrators/explicit/model.h"
#include "solvers/friction/global_friction_problem.h"

namespace ncpkit::internal {

class ConeModel : public ExplicitContactModel {
 public:
  // InputError if the solver does not take ProblemKind::GlobalFriction.
  explicit ConeModel(const ExplicitStepperOptions& options);
  void Solve(const ExplicitStepContext& step, const IslandView& island,
             std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) override;
  const ComplementaritySolver& solver() const override { return *solver_; }
  void SetParallelRunner(const ParallelRunner* runner) override {
    solver_->SetParallelRunner(runner);
  }
  bool UsesParallelRunner() const override { return solver_->UsesParallelRunner(); }
  const char* name() const override { return convex_ ? "convex" : "cone"; }
  // The frictional contact problem's sensitivity (solvers/sensitivity/
  // global_friction_sensitivity.h): Coulomb's for the cone, the convex contact model's (with
  // its compliances, which scale with each contact's Delassus block) for convex.
  std::unique_ptr<ExplicitImpulseSensitivity> Sensitivity(
      const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
      const ExplicitWorkspace& workspace) const override;
  const GlobalFrictionContactProblem* LastGlobalProblem(const Eigen::VectorXd** r) const override {
    *r = &r_;
    return &problem_;
  }

 private:
  // The island's contacts highest first along gravity into order_.
  void Order(const Eigen::Vector3d& gravity, const IslandView& island,
             const std::vector<ExplicitContact>& contacts);
  void Assemble(const ExplicitStepContext& step, const IslandView& island);

  const bool convex_;  // posed for a convex-model solver (ExplicitModel::Convex)
  std::unique_ptr<ComplementaritySolver> solver_;
  GlobalFrictionContactProblem problem_;
  std::vector<int> block_of_body_;  // problem_'s block of each of the island's bodies
  std::vector<int> order_;          // the island's contacts, highest first along gravity
  std::vector<std::pair<double, int>> ranked_;  // (-height against gravity, contact) to sort
  Eigen::VectorXd r_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_CONE_H_
