// A pool of threads for a stepper's independent pieces of work (the islands of a step): the
// calling thread and `threads - 1` kept helpers take items from a shared counter until none are
// left. The standard library's threads, so that ncpkit needs no threading library; a stepper
// keeps one pool for its life, since starting threads every step would cost more than a small
// island's solve.
//
// Which thread runs an item is not fixed (Run) or fixed by its index (RunStriped); either way
// the work of an item must depend on nothing but the item: each worker has its own solver and
// scratch (the `worker` argument), and a solver's result depends only on the problem and the
// start it is given, never on the problems it solved before. Then a step's result is bitwise the
// same for any number of threads.
#ifndef NCPKIT_INTEGRATORS_WORKER_POOL_H_
#define NCPKIT_INTEGRATORS_WORKER_POOL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "solvers/base/parallel_runner.h"

namespace ncpkit::internal {

class WorkerPool {
 public:
  // `threads` >= 1 (1: everything runs on the calling thread, no helper is started).
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  // Calls fn(item, worker) for every item in [0, count), worker in [0, size()), and returns
  // when every call has returned. The first exception a call throws is rethrown here (the
  // remaining items are still taken, and skipped). Allocates nothing.
  template <class Function>
  void Run(int count, Function& fn) {
    RunErased(count, &Call<Function>, &fn, /*striped=*/false);
  }
  // The same with item i on worker i mod size(): a worker takes the same items every time, so
  // scratch that grows to the largest item it has taken stops growing once the items stop
  // changing (a step's islands at rest), where the shared counter may hand a worker a larger
  // item for the first time at any call.
  template <class Function>
  void RunStriped(int count, Function& fn) {
    RunErased(count, &Call<Function>, &fn, /*striped=*/true);
  }

 private:
  using Erased = void (*)(void* fn, int item, int worker);
  template <class Function>
  static void Call(void* fn, int item, int worker) {
    (*static_cast<Function*>(fn))(item, worker);
  }
  void RunErased(int count, Erased call, void* fn, bool striped);
  void HelperLoop(int worker);
  void Work(int worker);

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // The current batch: set under the mutex before the generation is bumped.
  Erased call_ = nullptr;
  void* fn_ = nullptr;
  int count_ = 0;
  bool striped_ = false;
  std::atomic<int> next_{0};
  std::atomic<unsigned> generation_{0};
  std::atomic<int> busy_{0};  // helpers still in the current batch (changed under the mutex)
  bool stop_ = false;
  std::exception_ptr error_;
};

// The pool's threads lent to one solve (solvers/base/parallel_runner.h): task i on worker i,
// all at once. At most as many tasks as the machine has hardware threads: tasks wait for each
// other's progress, and more of them than cores would wait for threads that are not running.
// Not to be run from inside the pool's own Run.
class PoolRunner : public ParallelRunner {
 public:
  explicit PoolRunner(WorkerPool* pool)
      : pool_(pool),
        parts_(std::max(
            1, std::min(pool->size(), static_cast<int>(std::thread::hardware_concurrency())))) {}
  int parts() const override { return parts_; }
  void Run(const std::function<void(int part)>& task) const override {
    auto call = [&task](int item, int /*worker*/) { task(item); };
    pool_->RunStriped(parts_, call);
  }

 private:
  WorkerPool* pool_;
  int parts_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_WORKER_POOL_H_
