// Siconos numerics as a peer library for the benchmarks (optional, see CMakeLists.txt).
#ifndef NCPKIT_BENCH_SICONOS_PEER_H_
#define NCPKIT_BENCH_SICONOS_PEER_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>

namespace ncpkit::bench {

enum class SiconosLcpSolver { LexicoLemke, Pgs, NewtonFB };

struct SiconosResult {
  int info = -1;       // Siconos' termination code (0 = success)
  int iterations = 0;  // iparam[SICONOS_IPARAM_ITER_DONE]
};

// Solves the LCP (M, q) with Siconos; `tolerance` is Siconos' own error measure.
SiconosResult SiconosSolveLcp(SiconosLcpSolver solver, const Eigen::MatrixXd& M,
                              const Eigen::VectorXd& q, double tolerance, int max_iterations,
                              Eigen::VectorXd* z);

enum class SiconosFrictionSolver { Nsgs, NewtonAlartCurnier, Proximal };

// Solves the frictional contact problem (W, q, mu) with Siconos' fc3d_driver, W in Siconos'
// sparse-block storage (3 x 3 blocks, as its own FCLib reader stores it); `tolerance` is
// Siconos' own error measure. *r and *u receive its reaction and velocity.
SiconosResult SiconosSolveFrictionContact(SiconosFrictionSolver solver,
                                          const Eigen::SparseMatrix<double>& W,
                                          const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                                          double tolerance, int max_iterations, Eigen::VectorXd* r,
                                          Eigen::VectorXd* u);

}  // namespace ncpkit::bench

#endif  // NCPKIT_BENCH_SICONOS_PEER_H_
