// Derivatives of one time step (docs/derivatives.md "Steps"): the step as a map
//   s+ = Phi(s, p, u)
// from the state at its start s, the scene's named parameters p and the step's commands u to the
// state at its end, linearized at the step just taken. A stepper hands one out after a step
// (Stepper::LastStepDerivative()); it keeps what it needs, so later steps leave it valid, and a
// trajectory's reverse pass (integrators/trajectory_gradient.h) chains them.
//
// The state is laid out per moving body, in the stepper's body order (fixed bodies have none):
// position (3), rotation (3), then for steppers with velocities linear (3) and angular (3)
// velocity, all in the world frame, then the stepper's own entries (extra_state_names(): the
// quasistatic stepper's actuator positions). A rotation's entries are the small world-frame turn
// theta of R' = exp([theta]x) R, so its derivatives are in radians about the world axes.
#ifndef NCPKIT_INTEGRATORS_STEP_DERIVATIVE_H_
#define NCPKIT_INTEGRATORS_STEP_DERIVATIVE_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace ncpkit {

class StepDerivative {
 public:
  virtual ~StepDerivative() = default;

  // Entries per moving body of the state (12 with velocities, 6 without) and the bodies, by
  // their index in the stepper's list.
  int entries_per_body() const { return entries_per_body_; }
  const std::vector<int>& moving_bodies() const { return moving_bodies_; }
  int state_size() const {
    return entries_per_body_ * static_cast<int>(moving_bodies_.size()) +
           static_cast<int>(extra_state_names_.size());
  }
  // The state's entries after the bodies': "<actuator>.q" for the quasistatic stepper (an
  // actuator's position, m or rad), none for the dynamic steppers.
  const std::vector<std::string>& extra_state_names() const { return extra_state_names_; }
  // What a step carries to the next beyond the state, in a layout that changes from step to step:
  // the explicit soft model's anchor offsets, "<contact>.anchor_x", "_y", "_z" per contact of the
  // step (world frame, m; contacts named as degenerate_contacts() names them). A step reads the
  // entries the step before left (carried_in_names(): that step's carried_out_names()) and leaves
  // its own. They follow the state in Jvp's and Vjp's vectors: a step's input has input_size()
  // entries, its output output_size(). None for every other stepper and model.
  const std::vector<std::string>& carried_in_names() const { return carried_in_names_; }
  const std::vector<std::string>& carried_out_names() const { return carried_out_names_; }
  int input_size() const { return state_size() + static_cast<int>(carried_in_names_.size()); }
  int output_size() const { return state_size() + static_cast<int>(carried_out_names_.size()); }
  // The named parameters, in the order of p: "h", "mu" and "restitution" (the default contact
  // law's), "mu(a,b)" and "restitution(a,b)" (a pair's own law), "<body>.mass", and the
  // stepper's own (docs/derivatives.md lists them per stepper).
  const std::vector<std::string>& parameter_names() const { return parameter_names_; }
  int parameter_size() const { return static_cast<int>(parameter_names_.size()); }
  // Commands of the step: the stepper's inputs that a controller sets (per moving body an
  // applied impulse [N s, N m s] for the dynamic steppers; for the quasistatic one each
  // actuator's commanded position at the step's end, q_cmd(t + h), in the actuators' order).
  int command_size() const { return command_size_; }

  // ds+ for a change (ds, dp, du); an empty vector is zero. ds has state_size() entries, or
  // input_size() with the carried entries' change; ds+ has output_size().
  virtual Eigen::VectorXd Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                              const Eigen::VectorXd& du) const = 0;
  // The gradient of a scalar L of s+ with respect to s, p and u, from g = dL/ds+ (state_size()
  // entries, or output_size() with the carried entries'); `state` has input_size() entries.
  struct Gradient {
    Eigen::VectorXd state, parameters, commands;
  };
  virtual Gradient Vjp(const Eigen::VectorXd& g) const = 0;

  // Jvp() of each column of ds, dp and du (a matrix without rows is zero); a stepper solves them
  // together where it can (by default one Jvp a column).
  virtual Eigen::MatrixXd JvpColumns(const Eigen::MatrixXd& ds, const Eigen::MatrixXd& dp,
                                     const Eigen::MatrixXd& du) const;

  // Dense Jacobians of s+ (output_size() rows), from JvpColumns(); the state's has input_size()
  // columns.
  Eigen::MatrixXd StateJacobian() const;
  Eigen::MatrixXd ParameterJacobian() const;
  Eigen::MatrixXd CommandJacobian() const;

  // The step's contacts where the derivative is one-sided (docs/derivatives.md: degenerate
  // contacts and the rule that picks their side), as "a-b #k" (the pair's bodies and the
  // contact's index among the step's contacts).
  const std::vector<std::string>& degenerate_contacts() const { return degenerate_contacts_; }
  // Each contact's mode at the step's solution, one letter per contact of the step: 'a' apart
  // (no impulse), 's' sticking, 'l' sliding, 'f' frictionless (mu = 0). A change of data that
  // changes a mode is beyond the derivative, as one that changes the contacts is.
  const std::string& contact_modes() const { return contact_modes_; }
  // False where the step's data do not determine its end state's derivative: the contact
  // problem has a family of solutions through the step's that move the bodies differently (a
  // box on four corners sliding with a turn: how its weight is shared between the corners is not
  // fixed, nor therefore the friction's torque). The derivative is then the least-norm member's
  // (docs/derivatives.md); central differences of the step follow whichever member the solver
  // finds.
  bool determined() const { return determined_; }

 protected:
  int entries_per_body_ = 12;
  std::vector<int> moving_bodies_;
  std::vector<std::string> parameter_names_;
  std::vector<std::string> extra_state_names_;
  std::vector<std::string> carried_in_names_, carried_out_names_;
  int command_size_ = 0;
  std::vector<std::string> degenerate_contacts_;
  bool determined_ = true;
  std::string contact_modes_;
};

namespace internal {
// The number of changes a JvpColumns() call carries: the most columns of its matrices. Throws
// InputError naming `what` if a matrix with rows (one without is zero) has another number.
Eigen::Index ChangeCount(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                         const Eigen::MatrixXd& c, const char* what);
// Change j of such a matrix: its column j, or an empty vector (zero) for a matrix without rows.
Eigen::VectorXd ChangeColumn(const Eigen::MatrixXd& m, Eigen::Index j);
// The same into *out, reusing its storage from one column to the next.
void ChangeColumn(const Eigen::MatrixXd& m, Eigen::Index j, Eigen::VectorXd* out);

// d exp(phi) = J_l(phi) d phi: the left Jacobian of SO(3), for pose updates R+ = exp([phi]x) R.
Eigen::Matrix3d So3LeftJacobian(const Eigen::Vector3d& phi);

// A dynamic stepper's pose update x+ = x + h v+, R+ = exp(h [omega+]x) R of one body, linearized
// at its end-of-step twist: the last link of the implicit and explicit steps' derivatives. The
// body's 12 state entries are [x, theta, v, omega] (StepDerivative).
struct PoseUpdateTerms {
  Eigen::Vector3d v_plus, omega_plus;
  Eigen::Matrix3d turn;           // exp(h [omega+]x)
  Eigen::Matrix3d left_jacobian;  // of exp at h omega+

  // Sets the terms for the end-of-step twist nu_plus and the time step h.
  void Linearize(const Eigen::Matrix<double, 6, 1>& nu_plus, double h);
  // The body's ds+ for a change of its start pose (dx, dtheta), of h and of its end twist dnu+.
  Eigen::Matrix<double, 12, 1> Jvp(const Eigen::Vector3d& dx, const Eigen::Vector3d& dtheta,
                                   double dh, double h,
                                   const Eigen::Matrix<double, 6, 1>& dnu_plus) const;
  // From the gradient g of the body's 12 end entries: the gradients with respect to its start
  // pose (x, theta), to h (added to *h_gradient) and to its end twist.
  struct Adjoint {
    Eigen::Vector3d x, theta;
    Eigen::Matrix<double, 6, 1> nu_plus;
  };
  Adjoint Vjp(const Eigen::Matrix<double, 12, 1>& g, double h, double* h_gradient) const;
};
}  // namespace internal

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_STEP_DERIVATIVE_H_
