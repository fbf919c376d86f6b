// A Gauss-Seidel sweep over contacts split among threads without changing a bit of its result.
//
// Solving a contact reads the velocities of its (at most two) bodies and adds its change to
// them. Two contacts that share no moving body read and write different velocities, so any
// order that keeps every pair of contacts sharing a body in the sweep's order gives the sweep's
// result to the bit. Each part here is solved by one thread in the sweep's order; before
// solving contact a in sweep s, its thread waits until every contact of another part that
// shares a body with a and comes before it has been solved in sweep s, and every one that
// comes after it has been solved in sweep s - 1. Since each part goes in order, it is enough to
// wait for the last such contact of each other part, before and after a.
//
// The parts are runs of the sweep's order (a manifold, solved as one block, kept in one run):
// the contacts of a run and its bodies' velocities stay in its thread's cache, and consecutive
// sweeps overlap, the first part starting a sweep while the last ends the one before, wherever
// the error is not checked between them. Parts cut across an island instead (by distance through
// shared bodies) let a single sweep run in parallel, but their contacts alternate along the
// order, and the threads' writes to the same cache lines cost more than the parallel sweep
// gains (docs/benchmarks.md, "Two threads").
#ifndef NCPKIT_SOLVERS_FRICTION_INTERNAL_SWEEP_PARTS_H_
#define NCPKIT_SOLVERS_FRICTION_INTERNAL_SWEEP_PARTS_H_

#include <atomic>
#include <memory>
#include <vector>

namespace ncpkit::internal {

class SweepParts {
 public:
  // Parts contacts 0 .. num_contacts - 1 into `parts` (>= 2) runs. Contact a touches the
  // bodies body[2a] and body[2a + 1] (-1: none, a fixed body); `unit_end[a]` > a + 1 where
  // contacts a .. unit_end[a] - 1 must share a part (a manifold), else a + 1 or less.
  void Build(int num_contacts, const std::vector<int>& body, const std::vector<int>& unit_end,
             int parts);
  int parts() const { return static_cast<int>(first_.size()) - 1; }
  // Part p's contacts: [first(p), first(p + 1)).
  int first(int part) const { return first_[part]; }
  // Every contact counted as solved through sweep `sweep` (before a run of sweeps from
  // sweep + 1).
  void Reset(int sweep);
  // Blocks until contact a may be solved in `sweep`.
  void Wait(int a, int sweep) const {
    for (int k = wait_first_[a]; k < wait_first_[a + 1]; ++k) {
      const Waiting& w = waits_[k];
      if (done_[w.contact].load(std::memory_order_acquire) < sweep - w.previous) {
        WaitFor(w.contact, sweep - w.previous);
      }
    }
  }
  // Contact a is solved in `sweep` (its impulse and its bodies' velocities written).
  void Done(int a, int sweep) {
    if (watched_[a]) done_[a].store(sweep, std::memory_order_release);
  }
  // Whether a wait since Reset lasted over kStalledWait: a thread it waited for was not
  // running (more runnable threads than cores).
  bool stalled() const { return stalled_.load(std::memory_order_relaxed); }
  static constexpr double kStalledWait = 2e-4;  // s, some ten sweeps of a thousand contacts

 private:
  struct Waiting {
    int contact;
    int previous;  // 1: for its solve in the sweep before
  };
  void WaitFor(int contact, int sweep) const;
  void IndexBodies(int num_contacts, const std::vector<int>& body);
  void FindWaits(int num_contacts, const std::vector<int>& body);
  // Whether contact a's k-th body (body[2a + k]) is one, and not its first again.
  static bool Counts(const std::vector<int>& body, int a, int k) {
    return body[2 * a + k] >= 0 && (k == 0 || body[2 * a + 1] != body[2 * a]);
  }

  std::vector<int> first_;  // per part, then the end
  std::vector<int> wait_first_;
  std::vector<Waiting> waits_;  // per contact, at [wait_first_[a], wait_first_[a + 1])
  std::vector<char> watched_;   // per contact: some contact waits for it
  std::unique_ptr<std::atomic<int>[]> done_;  // per watched contact: the last sweep solved
  int done_size_ = 0;
  mutable std::atomic<bool> stalled_{false};
  // Build's scratch: each body's contacts; per part, the last contact before and after.
  std::vector<int> body_first_, body_contacts_, cursor_, before_, after_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_FRICTION_INTERNAL_SWEEP_PARTS_H_
