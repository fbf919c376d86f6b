#include "solvers/friction/internal/sweep_parts.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace ncpkit::internal {
namespace {

// Polls this often with a pause between (a contact of another part takes some 50 ns) before
// yielding the core, which a host with fewer cores than threads needs.
constexpr int kPausedPolls = 256;

inline void Pause() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#endif
}

}  // namespace

void SweepParts::Build(int num_contacts, const std::vector<int>& body,
                       const std::vector<int>& unit_end, int parts) {
  // Runs of equal counts, each cut at the first contact from its even place that no unit
  // (manifold) begun before it reaches past.
  first_.assign(parts + 1, num_contacts);
  first_[0] = 0;
  int reach = 0;  // the end of the furthest unit begun so far
  for (int a = 0, p = 1; a < num_contacts && p < parts; ++a) {
    while (p < parts && a >= reach &&
           a >= static_cast<int>(static_cast<int64_t>(num_contacts) * p / parts)) {
      first_[p++] = a;
    }
    reach = std::max(reach, unit_end[a]);
  }
  IndexBodies(num_contacts, body);
  FindWaits(num_contacts, body);
  if (done_size_ < num_contacts) {
    done_ = std::make_unique<std::atomic<int>[]>(num_contacts);
    done_size_ = num_contacts;
  }
}

// Each body's contacts, in the sweep's order (a counting sort by body), a contact's second body
// counted only if it is not its first.
void SweepParts::IndexBodies(int num_contacts, const std::vector<int>& body) {
  int num_bodies = 0;
  for (int k = 0; k < 2 * num_contacts; ++k) num_bodies = std::max(num_bodies, body[k] + 1);
  body_first_.assign(num_bodies + 1, 0);
  for (int a = 0; a < num_contacts; ++a) {
    for (int k = 0; k < 2; ++k) {
      if (Counts(body, a, k)) ++body_first_[body[2 * a + k] + 1];
    }
  }
  for (int b = 0; b < num_bodies; ++b) body_first_[b + 1] += body_first_[b];
  body_contacts_.resize(body_first_[num_bodies]);
  cursor_.assign(body_first_.begin(), body_first_.end() - 1);
  for (int a = 0; a < num_contacts; ++a) {
    for (int k = 0; k < 2; ++k) {
      if (Counts(body, a, k)) body_contacts_[cursor_[body[2 * a + k]]++] = a;
    }
  }
}

// Per contact and other part, the last contact sharing a body before it and after it.
void SweepParts::FindWaits(int num_contacts, const std::vector<int>& body) {
  const int parts = this->parts();
  const auto part_of = [&](int a) {
    return static_cast<int>(std::upper_bound(first_.begin(), first_.end(), a) - first_.begin()) - 1;
  };
  wait_first_.assign(num_contacts + 1, 0);
  waits_.clear();
  // At most one wait before and one after in each other part: reserved whole, so that a
  // problem's waits never grow the list past what its size reserved (after solves that swept
  // on one thread, the next parallel solve's contacts may need more waits than any before).
  waits_.reserve(2 * static_cast<size_t>(parts - 1) * static_cast<size_t>(num_contacts));
  watched_.assign(num_contacts, 0);
  for (int a = 0; a < num_contacts; ++a) {
    const int own = part_of(a);
    before_.assign(parts, -1);
    after_.assign(parts, -1);
    for (int k = 0; k < 2; ++k) {
      if (!Counts(body, a, k)) continue;
      const int b = body[2 * a + k];
      for (int j = body_first_[b]; j < body_first_[b + 1]; ++j) {
        const int c = body_contacts_[j];
        const int q = part_of(c);
        if (q == own) continue;
        int& last = c < a ? before_[q] : after_[q];
        last = std::max(last, c);
      }
    }
    for (int q = 0; q < parts; ++q) {
      if (before_[q] >= 0) waits_.push_back({before_[q], 0});
      if (after_[q] >= 0) waits_.push_back({after_[q], 1});
    }
    wait_first_[a + 1] = static_cast<int>(waits_.size());
  }
  for (const Waiting& w : waits_) watched_[w.contact] = 1;
}

void SweepParts::Reset(int sweep) {
  stalled_.store(false, std::memory_order_relaxed);
  const int n = static_cast<int>(watched_.size());
  for (int a = 0; a < n; ++a) done_[a].store(sweep, std::memory_order_relaxed);
}

void SweepParts::WaitFor(int contact, int sweep) const {
  std::chrono::steady_clock::time_point yielding;
  for (int polls = 0; done_[contact].load(std::memory_order_acquire) < sweep; ++polls) {
    if (polls < kPausedPolls) {
      Pause();
      continue;
    }
    if (polls == kPausedPolls) yielding = std::chrono::steady_clock::now();
    std::this_thread::yield();
    if (polls % kPausedPolls == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - yielding).count() >
            kStalledWait) {
      stalled_.store(true, std::memory_order_relaxed);
    }
  }
}

}  // namespace ncpkit::internal
