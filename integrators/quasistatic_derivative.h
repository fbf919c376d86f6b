// The derivative of one quasistatic step (integrators/step_derivative.h) for the linear models:
// the convex QP of Pang & Tedrake (2021) — qp and qp-lcp, which solve the same problem — and
// Trinkle, Berard & Pang's (2005) Model-DLC (docs/derivatives.md "Steps"). The step's solution
// z = (delta, multipliers) solves a mixed LCP
//   F_delta = K~(s) delta - A(s)^T lambda - r(s, u) = 0          (delta free)
//   F_rows  = A(s) delta + c(s, u) (+ the DLC's slack)  >= 0 _|_ lambda >= 0
// with the stiffness K~ (actuators' impedances, eps/h^2 M for unactuated bodies), the force r
// (gravity, K (q_cmd - q)), the contact rows A, u . (displacement of B's point - A's), from each
// contact's features at the bodies' poses (contact/contact_feature.h) and its friction frame, and
// c their distances plus the prescribed actuators' motion. Its derivative is the linear
// sensitivity of that mixed LCP (solvers/sensitivity/linear_sensitivity.h) for the change dF of F
// at fixed z, chained with the pose update: x+ = x + delta_x, R+ = exp([delta_theta]x) R,
// q+ = q + delta_q (q+ = q_cmd for a prescribed actuator).
//
// The state: per unactuated body its position and rotation (6), then every actuator's position;
// the commands: every actuator's q_cmd(t + h); the parameters: "mu", "mu(a,b)" and every moving
// body's "<body>.mass". With eps > 0 the QP is strictly convex in delta, so delta's derivative is
// determined even where the contact forces are not; the DLC's may not be (determined()).
#ifndef NCPKIT_INTEGRATORS_QUASISTATIC_DERIVATIVE_H_
#define NCPKIT_INTEGRATORS_QUASISTATIC_DERIVATIVE_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <memory>
#include <vector>

#include "contact/contact_law.h"
#include "contact/linearized_contact.h"
#include "dynamics/actuators.h"
#include "dynamics/body.h"
#include "dynamics/quasistatic_balance.h"
#include "integrators/step_derivative.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

class LinearSensitivity;
struct QuasistaticOptions;

namespace internal {

// One contact row of the step's mixed LCP: u . (displacement of B's point - A's) (+ the distance
// for normal and relaxed rows) with u the normal n ('n'), Anitescu's n + mu d_j ('r') or the
// pyramid's d_j ('p'), at `index` in z and F (its multiplier's place).
struct QuasistaticRow {
  int contact = 0;
  char kind = 'n';
  int j = 0;
  int index = 0;
};

// What a linear-model step leaves behind that its derivative reads (the quasistatic stepper's
// members, by reference for the time of the construction). The problem is the step's mixed LCP
// in z = (delta, multipliers): for qp and qp-lcp the QP's KKT system (delta, beta); for dlc
// (delta, c_n, c_f, sigma) with the slack rows mu c_n - sum_j c_f,j (`slacks`: per frictional
// contact its sigma's index, and the index of its normal force).
struct QuasistaticStepData {
  const std::vector<Body>& bodies;           // names, shapes, masses, fixed flags
  const std::vector<RigidBodyState>& start;  // each body's pose at the start of the step
  const std::vector<Actuator>& actuators;
  const std::vector<double>& q_start;  // the actuators' positions at the start
  double t1;                           // the step's end: its commands are q_cmd(t1)
  const std::vector<char>& actuated;
  const QuasistaticBalance& balance;  // assembled at the start of the step
  const std::vector<LinearizedContact>& contacts;
  const LinearComplementarityProblem& problem;
  const Eigen::VectorXd& z;
  const std::vector<QuasistaticRow>& rows;
  const std::vector<std::array<int, 3>>& slacks;  // (contact, sigma's index, c_n's index)
  const ContactLawTable& law_table;
  const QuasistaticOptions& options;
};

class QuasistaticStepDerivative : public StepDerivative {
 public:
  // Throws InputError for a contact whose features are not described
  // (contact/contact_feature.h), or a refused sensitivity (its reason).
  explicit QuasistaticStepDerivative(const QuasistaticStepData& step);
  ~QuasistaticStepDerivative() override;

  Eigen::VectorXd Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                      const Eigen::VectorXd& du) const override;
  Gradient Vjp(const Eigen::VectorXd& g) const override;

 private:
  // Per entry of an input of the local derivatives, the global inputs it moves: (index into
  // [s, p, u], coefficient).
  using InputMap = std::vector<std::vector<std::pair<int, double>>>;
  void AddNames(const QuasistaticStepData& step);
  InputMap PoseMap(const QuasistaticStepData& step, int body) const;
  InputMap DriftMap(const QuasistaticStepData& step, int body) const;
  // A contact's local inputs (both poses, mu, both prescribed motions) in [s, p, u].
  InputMap ContactMap(const QuasistaticStepData& step, int i) const;
  void LinearizeBodies(const QuasistaticStepData& step);
  void LinearizeActuators(const QuasistaticStepData& step);
  // A revolute actuator's twist on one of its bodies, [axis x (p - pivot); axis], turns with the
  // revolute actuators that move the body (a prismatic one moves the pivot with it): per body
  // the twists that turn, and how each moves with those actuators' positions.
  struct TurningTwist {
    int column = -1;          // the actuator's in delta (-1: prescribed)
    double prescribed = 0.0;  // prescribed: its motion in the step, q_cmd(t1) - q
    std::vector<int> inputs;  // the entries of [s, p, u] of the positions that turn it
    std::vector<Eigen::Vector3d> by_input;  // d(twist's linear part) per unit of each
  };
  std::vector<TurningTwist> TurningTwists(const QuasistaticStepData& step, int body) const;
  void LinearizeContacts(const QuasistaticStepData& step);
  void LinearizeContact(const QuasistaticStepData& step, int i, const std::vector<int>& rows);
  // The terms of contact i's rows through the turning twists of its actuated bodies, each row's
  // direction u given.
  void AddTurningTwists(const QuasistaticStepData& step, int i, const std::vector<int>& rows,
                        const std::vector<Eigen::Vector3d>& directions);
  void LinearizeSlacks(const QuasistaticStepData& step);
  void Solve(const QuasistaticStepData& step);
  void ReadModes(const QuasistaticStepData& step);
  // Adds d(row)/d(local input k) * map[k] to G.
  void AddRow(int row, const Eigen::VectorXd& local, const InputMap& map);

  int n_ = 0;                      // delta's size
  int inputs_ = 0;                 // size of [s, p, u]
  std::vector<int> slot_of_body_;  // moving body index -> its slot, -1 otherwise
  std::vector<int> mass_slot_;     // per body: its "<body>.mass" parameter, -1 for fixed ones
  std::vector<int> mu_slot_;       // per contact: its friction coefficient's parameter
  // dF/d[s, p, u] at the solution, and the entries before assembly.
  Eigen::SparseMatrix<double> G_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::VectorXd z_;
  std::unique_ptr<LinearSensitivity> sensitivity_;
  // Per moving body: its delta columns (-1: not a coordinate) and the rotation update's
  // exp([delta_theta]x) and left Jacobian; per actuator its column (-1: prescribed).
  std::vector<std::array<int, 6>> columns_;
  std::vector<Eigen::Matrix3d> turn_, left_jacobian_;
  std::vector<int> actuator_columns_;
};

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_QUASISTATIC_DERIVATIVE_H_
