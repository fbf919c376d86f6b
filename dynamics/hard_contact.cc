#include "dynamics/hard_contact.h"

#include <sstream>
#include <string>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

[[noreturn]] void Fail(const std::string& what) { throw InputError("hard contact: " + what); }

void RequireFinite(const Eigen::MatrixXd& A, const char* name) {
  if (!A.allFinite()) Fail(std::string(name) + " has a non-finite entry");
}

// M = L L^T and the contact inertia's factorization, checked: the pieces every formula needs.
struct ContactInertia {
  Eigen::LLT<Eigen::MatrixXd> M;
  Eigen::MatrixXd Minv_Jt;           // M^-1 J^T
  Eigen::LDLT<Eigen::MatrixXd> JMJ;  // J M^-1 J^T
};

ContactInertia Factorize(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J) {
  std::ostringstream os;
  if (M.rows() != M.cols() || M.rows() == 0) {
    os << "M is " << M.rows() << " x " << M.cols() << ", it must be square and not empty";
    Fail(os.str());
  }
  if (J.cols() != M.rows() || J.rows() == 0 || J.rows() > J.cols()) {
    os << "J is " << J.rows() << " x " << J.cols() << " for M of size " << M.rows()
       << " (expected k x n with 1 <= k <= n)";
    Fail(os.str());
  }
  RequireFinite(M, "M");
  RequireFinite(J, "J");
  if ((M - M.transpose()).norm() > 1e-12 * M.norm()) Fail("M is not symmetric");
  ContactInertia c;
  c.M.compute(M);
  if (c.M.info() != Eigen::Success) Fail("M is not positive definite");
  c.Minv_Jt = c.M.solve(J.transpose());
  const Eigen::MatrixXd JMJ = J * c.Minv_Jt;
  Eigen::FullPivLU<Eigen::MatrixXd> rank(JMJ);
  rank.setThreshold(1e-12);
  if (rank.rank() < J.rows()) {
    os << "J has rank " << rank.rank() << " < " << J.rows()
       << " rows: the contact constraints are redundant";
    Fail(os.str());
  }
  c.JMJ.compute(JMJ);
  return c;
}

void RequireSize(const Eigen::VectorXd& v, Eigen::Index size, const char* name) {
  if (v.size() != size) {
    std::ostringstream os;
    os << name << " has " << v.size() << " entries, expected " << size;
    Fail(os.str());
  }
  RequireFinite(v, name);
}

}  // namespace

Eigen::VectorXd HardContactForce(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                 const Eigen::VectorXd& generalized_force,
                                 const Eigen::VectorXd& jdot_qdot) {
  const ContactInertia c = Factorize(M, J);
  RequireSize(generalized_force, M.rows(), "generalized force");
  RequireSize(jdot_qdot, J.rows(), "J_dot q_dot");
  return c.JMJ.solve(J * c.M.solve(generalized_force) + jdot_qdot);
}

Eigen::MatrixXd SupportNullSpaceProjector(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J) {
  const ContactInertia c = Factorize(M, J);
  return Eigen::MatrixXd::Identity(M.rows(), M.cols()) - c.Minv_Jt * c.JMJ.solve(J);
}

InelasticImpact InelasticImpactMap(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                   const Eigen::VectorXd& velocity_before) {
  const ContactInertia c = Factorize(M, J);
  RequireSize(velocity_before, M.rows(), "velocity before the impact");
  InelasticImpact impact;
  impact.impulse = c.JMJ.solve(J * velocity_before);
  // M (q_dot+ - q_dot-) + J^T impulse = 0.
  const Eigen::VectorXd change = -c.Minv_Jt * impact.impulse;
  impact.velocity_after = velocity_before + change;
  impact.energy_loss = 0.5 * change.dot(M * change);
  return impact;
}

Eigen::VectorXd MomentumProjection(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                   const Eigen::VectorXd& momentum_before) {
  const ContactInertia c = Factorize(M, J);
  RequireSize(momentum_before, M.rows(), "momentum before the impact");
  // G_c^T M^-1 p- = J M^-1 p-; G_c = J^T.
  return momentum_before - J.transpose() * c.JMJ.solve(c.Minv_Jt.transpose() * momentum_before);
}

double ImpactEnergyLossFromMomentum(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J,
                                    const Eigen::VectorXd& momentum_before) {
  const ContactInertia c = Factorize(M, J);
  RequireSize(momentum_before, M.rows(), "momentum before the impact");
  const Eigen::VectorXd projected = c.Minv_Jt.transpose() * momentum_before;  // J M^-1 p-
  return 0.5 * projected.dot(c.JMJ.solve(projected));
}

}  // namespace ncpkit
