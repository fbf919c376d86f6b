// Generated test problems shared by tests, benchmarks and the demo.
#ifndef NCPKIT_SOLVERS_PROBLEM_GENERATORS_H_
#define NCPKIT_SOLVERS_PROBLEM_GENERATORS_H_

#include <cstdint>

#include "solvers/linear_problem.h"

namespace ncpkit {

// Dense symmetric positive definite LCP: M = A^T A / n + 0.1 I with A uniform in [-1, 1],
// q uniform in [-1, 1]. Unique solution.
LinearComplementarityProblem RandomSpdLcp(int n, uint64_t seed);

// Sparse contact-like LCP M = J A^{-1} J^T + 1e-6 I: `rows` contact rows, each coupling two
// of rows / 2 rigid bodies (6 dof each, random SPD inverse inertia blocks A^{-1}); the two
// bodies of a row are near each other in numbering, as in a pile. q uniform in [-1, 1].
LinearComplementarityProblem ContactLikeLcp(int rows, uint64_t seed);

// Murty's exponential example for Lemke (Murty 1988, ch. 6): M upper triangular with 1 on
// the diagonal and 2 above, q_i = -(2^(n+1) - 2^i), i = 1..n. Lemke needs 2^n pivots.
LinearComplementarityProblem MurtyLcp(int n);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_PROBLEM_GENERATORS_H_
