#include "integrators/worker_pool.h"

namespace ncpkit::internal {
namespace {

// A helper waits this many polls of the generation before it sleeps on the condition variable:
// islands come in bursts a step apart, and waking a sleeping thread costs tens of microseconds,
// as much as a small step.
constexpr int kSpinPolls = 4000;

}  // namespace

WorkerPool::WorkerPool(int threads) {
  for (int worker = 1; worker < threads; ++worker) {
    helpers_.emplace_back([this, worker] { HelperLoop(worker); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void WorkerPool::Work(int worker) {
  const auto call = [&](int item) {
    try {
      call_(fn_, item, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  };
  if (striped_) {
    for (int item = worker; item < count_; item += size()) call(item);
    return;
  }
  for (int item = next_.fetch_add(1, std::memory_order_relaxed); item < count_;
       item = next_.fetch_add(1, std::memory_order_relaxed)) {
    call(item);
  }
}

void WorkerPool::HelperLoop(int worker) {
  unsigned seen = 0;
  for (;;) {
    for (int poll = 0; poll < kSpinPolls && generation_.load(std::memory_order_acquire) == seen;
         ++poll) {
      std::this_thread::yield();
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      seen = generation_.load(std::memory_order_acquire);
      if (stop_) return;
    }
    Work(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
    }
  }
}

void WorkerPool::RunErased(int count, Erased call, void* fn, bool striped) {
  if (count <= 0) return;
  // With one item (or no helper) the helpers are not woken.
  const int helpers = count > 1 ? static_cast<int>(helpers_.size()) : 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    call_ = call;
    fn_ = fn;
    count_ = count;
    striped_ = striped;
    error_ = nullptr;
    next_.store(0, std::memory_order_relaxed);
    busy_.store(helpers, std::memory_order_relaxed);
    if (helpers > 0) generation_.fetch_add(1, std::memory_order_release);
  }
  if (helpers > 0) wake_.notify_all();
  Work(0);
  // The helpers' last items end about when this thread's do: poll before sleeping, since a
  // wake-up costs more than the wait.
  for (int poll = 0; poll < kSpinPolls && busy_.load(std::memory_order_acquire) > 0; ++poll) {
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_.load(std::memory_order_acquire) == 0; });
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
}

}  // namespace ncpkit::internal
