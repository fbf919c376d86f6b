// The derivative of one implicit step (integrators/step_derivative.h): the geometrically implicit
// stepper of Xie & Chakraborty (2016) (docs/derivatives.md "Steps"). Each island's step is an MCP
//   F(z; s, p, u) = 0 (free)  or  complementary to its bounds,
// z = (end-of-step twist nu+ per body; per pair its contact points and multipliers, impulses and
// slip) whose residuals read the start state s (the Newton-Euler rows its twists and turn, the
// contact rows both bodies' poses through the end poses p + h v+, exp(h [w+]x) R), the named
// parameters p (h, mu, the compliant layer's stiffness and damping, the masses) and the applied
// impulses u. Its derivative is the MCP's sensitivity (solvers/sensitivity/box_sensitivity.h) for
// the change dF = (dF/dx) dx at fixed z, dF/dx from Jets over the start state and the
// parameters (the residual functors in the scalar of the data: contact/implicit_contact.h
// PairNumbers), chained with the exact pose update x+ = x + h v+, R+ = exp(h [w+]x) R.
//
// A pair without normal impulse (apart, or touching without pressing) keeps all its unknowns but
// p_n as they are (dz = 0 there; p_n at its bound follows the degenerate rule): its wrench on the
// bodies is zero to first order whatever they do, and they are ill-posed there — the friction
// rows e^2 mu p_n v + p sigma vanish identically, and a flat face apart from a plane has a whole
// face of nearest points, which a tilt moves to a corner.
#ifndef NCPKIT_INTEGRATORS_IMPLICIT_DERIVATIVE_H_
#define NCPKIT_INTEGRATORS_IMPLICIT_DERIVATIVE_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_law.h"
#include "contact/implicit_contact.h"
#include "dynamics/body.h"
#include "dynamics/rigid_body.h"
#include "integrators/step_derivative.h"
#include "solvers/mcp/problem_builder.h"
#include "solvers/sensitivity/box_sensitivity.h"

namespace ncpkit::internal {

// The compliant layers' state that a step carries into the next, in the state after the bodies':
// per pair of bodies whose law has damping or Kelvin-Voigt friction (the state is read only
// then), "<F>-<G>.deflection" (m) and "<F>-<G>.elastic_t", "_o", "_r" (the elastic tangential
// displacement in the pair's contact frame, m, and its torsion, rad), F and G as the stepper
// orders the pair (F the first moving body). Four entries per such pair of bodies, so a scene of
// n bodies under such a default law has 2 n (n - 1) of them.
struct ImplicitMemoryLayout {
  ImplicitMemoryLayout(const std::vector<Body>& bodies, const ContactLawTable& table,
                       const ContactLawsByIndex& laws);
  // The pair's index (its entries are 4 from there on), or -1.
  int Find(int f, int g) const;
  std::vector<std::string> names;

 private:
  std::vector<std::pair<std::pair<int, int>, int>> index_;  // ((F, G), pair), sorted
};

// One island of the step as the implicit stepper solved it (its members, by pointer for the
// time of the construction).
struct ImplicitIslandData {
  const ProblemBuilder* builder = nullptr;
  const Eigen::VectorXd* z = nullptr;  // the solution
  std::vector<int> bodies;             // its moving bodies, by index in the stepper's list
  std::vector<int> nu_block;           // per body
  std::vector<const NewtonEulerStep*> body_steps;
  std::vector<std::pair<int, int>> pairs;  // (F, G) per pair
  std::vector<int> pair_index;             // per pair: its index among the step's pairs
  std::vector<int> geometry_block, force_block;
  std::vector<const ContactPairStep*> pair_steps;
  // Per pair: its entries in ImplicitMemoryLayout (-1: none), and whether the step read the
  // layer's state from the step before (else it started from none).
  std::vector<int> memory_slot;
  std::vector<char> reads_memory;
};

struct ImplicitStepData {
  const std::vector<Body>& bodies;  // names, masses, fixed flags
  const ContactLawTable& law_table;
  double h;
  Eigen::Vector3d gravity;
  const ImplicitMemoryLayout* memory;
  std::vector<ImplicitIslandData> islands;
};

class ImplicitStepDerivative : public StepDerivative {
 public:
  // Throws InputError for a sensitivity refused (its reason).
  explicit ImplicitStepDerivative(const ImplicitStepData& step);
  ~ImplicitStepDerivative() override;

  Eigen::VectorXd Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                      const Eigen::VectorXd& du) const override;
  Gradient Vjp(const Eigen::VectorXd& g) const override;

 private:
  // Per body: the Newton-Euler rows' Jets over [theta, v, omega, m, h, u] (17); per pair: its
  // rows' over [x_f, theta_f, x_g, theta_g, h, mu, k, c, k_t, c_t, d_prev, u_prev] (22).
  static constexpr int kBodyInputs = 17, kPairInputs = 22;
  // A pair's next layer state on Jets over its unknowns (at most 6 + 6 + 18 + 7) and inputs.
  static constexpr int kMemoryJet = 64;
  using BodyTerms = PoseUpdateTerms;  // each body's pose update at its end-of-step twist
  struct Island {
    std::unique_ptr<BoxSensitivity> sensitivity;
    // dF/dx for x = [ds, dp, du] (rows: the island's z).
    Eigen::SparseMatrix<double> data_jacobian;
    std::vector<std::pair<int, int>> nu;  // per body: (its moving slot, its twist's offset in z)
    int size = 0;
    // Per pair carrying a layer's state: the next step's, d+ = z[deflection] and u+ (its
    // derivatives with respect to z at `z_index` and to x at `x_column`).
    struct Memory {
      int entry = 0;  // its first entry in the state
      int deflection = 0;
      std::vector<int> z_index, x_column;
      Eigen::MatrixXd by_z, by_x;  // 3 rows (none without Kelvin-Voigt friction or force)
    };
    std::vector<Memory> memory;
  };
  struct Slots {
    int mu = 1;
    int layer = -1;  // first of stiffness, damping, tangential_stiffness, tangential_damping
  };

  void AddParameters(const ImplicitStepData& step);
  Slots PairSlots(const ImplicitStepData& step, int f, int g) const;
  void AddIsland(const ImplicitStepData& step, const ImplicitIslandData& data);
  void NameDegenerate(const ImplicitStepData& step, const ImplicitIslandData& data,
                      const std::vector<int>& degenerate, const std::vector<char>& structural);
  void ClassifyPair(const ImplicitIslandData& data, int j, double tolerance,
                    std::vector<char>* held, std::vector<char>* structural);
  void AddBodyRows(const ImplicitStepData& step, const ImplicitIslandData& data, int k,
                   std::vector<Eigen::Triplet<double>>* entries);
  // Adds pair j's rows to `entries` (except the rows in `held`) and records its mode.
  void AddPairRows(const ImplicitStepData& step, const ImplicitIslandData& data, int j,
                   const std::vector<char>& held, std::vector<Eigen::Triplet<double>>* entries);
  // The pair's inputs' columns in x (-1: constant).
  void PairColumns(const ImplicitStepData& step, const ImplicitIslandData& data, int j,
                   int* column) const;
  Island::Memory PairMemory(const ImplicitStepData& step, const ImplicitIslandData& data, int j);
  std::string PairName(const ImplicitStepData& step, const ImplicitIslandData& data, int j) const;
  Eigen::VectorXd Inputs(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                         const Eigen::VectorXd& du) const;

  double h_ = 0.0;
  std::vector<int> slot_of_body_;  // per body of the stepper: its moving slot, or -1
  std::vector<BodyTerms> bodies_;  // per moving slot
  std::vector<Island> islands_;
  std::vector<int> mass_slot_;  // per moving slot: its "<body>.mass" in p
  int layer_default_ = -1;      // the default law's layer parameters in p, or -1
  std::vector<std::pair<std::pair<std::string, std::string>, Slots>> override_slots_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_IMPLICIT_DERIVATIVE_H_
