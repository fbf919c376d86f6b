#include "bench/siconos_peer.h"

#include <FrictionContactProblem.h>
#include <Friction_cst.h>
#include <LCP_Solvers.h>
#include <LinearComplementarityProblem.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <SolverOptions.h>
#include <SparseBlockMatrix.h>
#include <lcp_cst.h>

#include <vector>

namespace ncpkit::bench {

SiconosResult SiconosSolveLcp(SiconosLcpSolver solver, const Eigen::MatrixXd& M,
                              const Eigen::VectorXd& q, double tolerance, int max_iterations,
                              Eigen::VectorXd* z) {
  const int n = static_cast<int>(q.size());
  std::vector<double> m_data(M.data(), M.data() + M.size());  // column-major, as Siconos wants
  std::vector<double> q_data(q.data(), q.data() + n), w(n, 0.0);
  z->setZero(n);
  NumericsMatrix* matrix = NM_create_from_data(NM_DENSE, n, n, m_data.data());
  ::LinearComplementarityProblem problem;
  problem.size = n;
  problem.M = matrix;
  problem.q = q_data.data();
  int id = SICONOS_LCP_LEMKE;
  if (solver == SiconosLcpSolver::Pgs) id = SICONOS_LCP_PGS;
  if (solver == SiconosLcpSolver::NewtonFB) id = SICONOS_LCP_NEWTON_FB_FBLSA;
  SolverOptions* options = solver_options_create(id);
  options->iparam[SICONOS_IPARAM_MAX_ITER] = max_iterations;
  options->dparam[SICONOS_DPARAM_TOL] = tolerance;
  SiconosResult result;
  switch (solver) {
    case SiconosLcpSolver::LexicoLemke:
      lcp_lexicolemke(&problem, z->data(), w.data(), &result.info, options);
      break;
    case SiconosLcpSolver::Pgs:
      lcp_pgs(&problem, z->data(), w.data(), &result.info, options);
      break;
    case SiconosLcpSolver::NewtonFB:
      lcp_newton_FB(&problem, z->data(), w.data(), &result.info, options);
      break;
  }
  result.iterations = options->iparam[SICONOS_IPARAM_ITER_DONE];
  solver_options_delete(options);
  NM_clear_not_dense(matrix);  // the dense data belongs to m_data
  matrix->matrix0 = nullptr;
  NM_free(matrix);
  return result;
}

SiconosResult SiconosSolveFrictionContact(SiconosFrictionSolver solver,
                                          const Eigen::SparseMatrix<double>& W,
                                          const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                                          double tolerance, int max_iterations, Eigen::VectorXd* r,
                                          Eigen::VectorXd* u) {
  const int m = static_cast<int>(q.size());
  NumericsMatrix* triplets = NM_create(NM_SPARSE, m, m);
  NM_triplet_alloc(triplets, W.nonZeros());
  for (int j = 0; j < W.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
      NM_entry(triplets, static_cast<int>(it.row()), j, it.value());
    }
  }
  SparseBlockStructuredMatrix* blocks = SBM_new();
  SBM_from_csparse(3, NM_csc(triplets), blocks);
  NumericsMatrix* matrix = NM_new_SBM(m, m, blocks);
  std::vector<double> q_data(q.data(), q.data() + m), mu_data(mu.data(), mu.data() + mu.size());
  ::FrictionContactProblem problem;
  problem.dimension = 3;
  problem.numberOfContacts = m / 3;
  problem.M = matrix;
  problem.q = q_data.data();
  problem.mu = mu_data.data();
  int id = SICONOS_FRICTION_3D_NSGS;
  if (solver == SiconosFrictionSolver::NewtonAlartCurnier) id = SICONOS_FRICTION_3D_NSN_AC;
  if (solver == SiconosFrictionSolver::Proximal) id = SICONOS_FRICTION_3D_PROX;
  SolverOptions* options = solver_options_create(id);
  options->iparam[SICONOS_IPARAM_MAX_ITER] = max_iterations;
  options->dparam[SICONOS_DPARAM_TOL] = tolerance;
  r->setZero(m);
  u->setZero(m);
  SiconosResult result;
  result.info = fc3d_driver(&problem, r->data(), u->data(), options);
  result.iterations = options->iparam[SICONOS_IPARAM_ITER_DONE];
  solver_options_delete(options);
  NM_free(matrix);  // frees the block structure too
  NM_free(triplets);
  return result;
}

}  // namespace ncpkit::bench
