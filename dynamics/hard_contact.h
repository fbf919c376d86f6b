// Hard contact as a kinematic constraint, and inelastic impact maps (contact modelling notes, "Hard
// Contact Model", "Contact Consistent Dynamics", "Impact Models", "Energy loss").
//
// Conventions are the seed's: generalized coordinates with mass matrix M (n x n, symmetric
// positive definite), a contact Jacobian J (k x n, full row rank: r_c_dot = J q_dot), and the
// equations of motion
//   M q_ddot + C q_dot + g + J^T F_c = G^T u,
// so F_c is the force the system applies at its contacts and -F_c the environment's reaction.
// Every function validates its input and throws InputError naming what is wrong (sizes,
// non-finite entries, an M that is not positive definite, a J without full row rank).
#ifndef NCPKIT_DYNAMICS_HARD_CONTACT_H_
#define NCPKIT_DYNAMICS_HARD_CONTACT_H_

#include <Eigen/Dense>

namespace ncpkit {

// The contact force that keeps the contacts fixed (J q_ddot + J_dot q_dot = 0):
//   F_c = (J M^-1 J^T)^-1 (J M^-1 (G^T u - C q_dot - g) + J_dot q_dot).
// `generalized_force` is G^T u - C q_dot - g, `jdot_qdot` is J_dot q_dot (k entries).
Eigen::VectorXd HardContactForce(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                 const Eigen::VectorXd& generalized_force,
                                 const Eigen::VectorXd& jdot_qdot);

// The dynamically consistent support null-space projector N_c = I - M^-1 J^T (J M^-1 J^T)^-1 J:
// J N_c = 0, N_c^2 = N_c, and M N_c = N_c^T M.
Eigen::MatrixXd SupportNullSpaceProjector(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J);

// A perfectly inelastic impact of the contacts J (all come to rest, J q_dot+ = 0).
struct InelasticImpact {
  Eigen::VectorXd impulse;         // the integral of F_c: (J M^-1 J^T)^-1 J q_dot-
  Eigen::VectorXd velocity_after;  // q_dot+ = N_c q_dot- (Lagrangian form)
  double energy_loss = 0.0;        // T- - T+ = 1/2 dq^T M dq, dq = q_dot+ - q_dot- (>= 0)
};
InelasticImpact InelasticImpactMap(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                   const Eigen::VectorXd& velocity_before);

// The Hamiltonian form: p+ = (I - G_c (G_c^T M^-1 G_c)^-1 G_c^T M^-1) p-, G_c = J^T.
Eigen::VectorXd MomentumProjection(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                   const Eigen::VectorXd& momentum_before);
// The energy loss in the Hamiltonian form, 1/2 p-^T M^-1 G_c (G_c^T M^-1 G_c)^-1 G_c^T M^-1 p-.
double ImpactEnergyLossFromMomentum(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                    const Eigen::VectorXd& momentum_before);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_HARD_CONTACT_H_
