// The explicit stepper's contact models as strategies (integrators/explicit_stepper.h): each
// turns an island's contacts, with their rows and frame velocities in the workspace, into contact
// impulses, posing and solving its own problem. A new model is one file pair deriving from
// ExplicitContactModel, a value of ExplicitModel and a case in MakeExplicitContactModel().
//
// The stepper keeps one model per worker thread and hands each island to whichever worker is
// free: a model reads and writes only its island's contacts and bodies, and keeps nothing from
// one island to the next that could change a result.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_MODEL_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "dynamics/body.h"
#include "integrators/explicit/workspace.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {

struct ExplicitStepperOptions;

namespace internal {

// What a model sees of the step: the bodies at the start of the step, the options, and the
// workspace its stages filled.
struct ExplicitStepContext {
  const std::vector<Body>& bodies;
  const ExplicitStepperOptions& options;
  ExplicitWorkspace& workspace;
};

// The derivative of the impulses r a model found (3 per contact, in the contacts' frames) with
// respect to the local form's q = H^T M^-1 f + w (the contacts' velocities without impulses) and
// the contacts' friction coefficients, at the step's solution: the one piece of a step's
// derivative that depends on the model (integrators/explicit/step_derivative.h chains it with
// the rest; docs/derivatives.md "Steps").
class ExplicitImpulseSensitivity {
 public:
  virtual ~ExplicitImpulseSensitivity() = default;
  // dr for the changes dq (3 per contact), dmu (one per contact) and, where the model reads
  // them (reads_delassus_blocks), dW of each contact's own Delassus block W_cc (9 per contact,
  // column-major); an empty vector is zero.
  virtual Eigen::VectorXd Jvp(const Eigen::VectorXd& dq, const Eigen::VectorXd& dmu,
                              const Eigen::VectorXd& dW) const = 0;
  // Jvp() of each column of dq, dmu and dW (a matrix without rows is zero), solved together where
  // the model can (by default one Jvp a column).
  virtual Eigen::MatrixXd JvpColumns(const Eigen::MatrixXd& dq, const Eigen::MatrixXd& dmu,
                                     const Eigen::MatrixXd& dW) const;
  // The gradients of <g, r> with respect to q, mu and (where read) the blocks W_cc.
  virtual void Vjp(const Eigen::VectorXd& g, Eigen::VectorXd* q, Eigen::VectorXd* mu,
                   Eigen::VectorXd* W) const = 0;

  // Per contact its mode (StepDerivative::contact_modes()'s letters).
  std::string modes;
  std::vector<int> degenerate;  // the contacts where the derivative is one-sided
  bool determined = true;       // StepDerivative::determined()
  // Whether r depends on the blocks W_cc beyond u = W r + q (the convex model's compliances
  // scale with them).
  bool reads_delassus_blocks = false;
};

// What an island's solve reports.
struct ExplicitIslandResult {
  SolverSummary summary;
  int problem_size = 0;  // the island problem's unknowns
  int attempts = 1;      // starts the solve needed
};

class ExplicitContactModel {
 public:
  virtual ~ExplicitContactModel() = default;
  // Sets the impulse of every contact of the island (island.links index `contacts`; it has at
  // least one) and the result. An island whose problem is not solved keeps the best impulses
  // found and says so in the summary.
  virtual void Solve(const ExplicitStepContext& step, const IslandView& island,
                     std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) = 0;
  // nu = nu_f + M^-1 J^T r into workspace.velocity for the island's bodies: the impulses summed
  // per body first.
  virtual void ApplyImpulses(const ExplicitStepContext& step, const IslandView& island,
                             const std::vector<ExplicitContact>& contacts);
  // The solver the model hands its problems to.
  virtual const ComplementaritySolver& solver() const = 0;
  // Threads the solver may use in the next solves (ComplementaritySolver::SetParallelRunner;
  // null: none).
  virtual void SetParallelRunner(const ParallelRunner* runner) { (void)runner; }
  virtual bool UsesParallelRunner() const { return false; }
  // Its name, as ExplicitModel's ToString() spells it.
  virtual const char* name() const = 0;
  // The latest island's global frictional contact problem and the impulses solved for it (*r),
  // for a model that poses one (cone, convex); else null.
  virtual const GlobalFrictionContactProblem* LastGlobalProblem(const Eigen::VectorXd** r) const {
    *r = nullptr;
    return nullptr;
  }
  // The derivative of the impulses `r` the model found for the step's contact problem, posed
  // over all its islands as `problem` (its local form is what the model solved); `workspace`
  // holds what the model kept of its solution. Throws InputError for a model without one, or if
  // the sensitivity is refused (its reason).
  virtual std::unique_ptr<ExplicitImpulseSensitivity> Sensitivity(
      const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
      const ExplicitWorkspace& workspace) const;
  // The entries per contact of workspace.model_unknowns the model fills (0: none).
  virtual int unknowns_per_contact() const { return 0; }
  // Whether the impulses hold the end-of-step velocities to the contacts (then a body they sped
  // up has its pairs searched again); false for forces from the start of the step.
  virtual bool ConstrainsEndVelocities() const { return true; }

 private:
  std::vector<Vector6d> body_impulse_;
};

// A model's summary of a step without contacts: converged, residual 0, "no contact".
SolverSummary NoContactSummary(const std::string& solver);

// The model `options.model` names, with the registry solver `options.solver` (InputError if it
// does not take the model's problem).
std::unique_ptr<ExplicitContactModel> MakeExplicitContactModel(
    const ExplicitStepperOptions& options);

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_MODEL_H_
