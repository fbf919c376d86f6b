// Threads a caller lends to a solve. A solver that can split its work into parts that run at
// once (VelocityGaussSeidel's sweeps) takes a runner through
// ComplementaritySolver::SetParallelRunner; every other solver ignores it. Results do not depend
// on it, to the bit.
#ifndef NCPKIT_SOLVERS_BASE_PARALLEL_RUNNER_H_
#define NCPKIT_SOLVERS_BASE_PARALLEL_RUNNER_H_

#include <functional>

namespace ncpkit {

class ParallelRunner {
 public:
  virtual ~ParallelRunner() = default;
  // The number of tasks Run starts, at least 1.
  virtual int parts() const = 0;
  // Calls task(0), ..., task(parts() - 1), each on its own thread and all of them at the same
  // time (a task may wait for another's progress), and returns when every one has returned.
  // The tasks must not throw.
  virtual void Run(const std::function<void(int part)>& task) const = 0;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_BASE_PARALLEL_RUNNER_H_
