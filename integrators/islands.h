// Simulation islands: the moving bodies joined, directly or through other moving bodies, by the
// links of a step (contacts, or pairs close enough to be in the step's problem). Fixed bodies
// join nothing: two stacks on the same ground are two islands. Each island's problem is
// independent of every other's, so a stepper poses and solves one problem per island, and can
// solve them on several threads (integrators/worker_pool.h).
#ifndef NCPKIT_INTEGRATORS_ISLANDS_H_
#define NCPKIT_INTEGRATORS_ISLANDS_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "solvers/base/status.h"

namespace ncpkit::internal {

// One island as a view into an IslandFinder's lists: its links and its moving bodies, each in
// increasing order.
struct IslandView {
  const int* links = nullptr;
  int num_links = 0;
  const int* bodies = nullptr;
  int num_bodies = 0;
};

// Finds the islands of a step by union-find. The islands with at least one link are numbered
// in the order of their first link, so that the numbering depends only on the links' order,
// never on how the islands are later solved. Keeps its lists: a step with as many bodies and
// links as the last allocates nothing.
class IslandFinder {
 public:
  // `fixed[i]`: body i is fixed (it joins nothing). `links[k]`: the bodies (a, b) of link k; a
  // link between two fixed bodies belongs to no island (local_index -1). `one_island`: every
  // linked moving body in one island (a whole-scene problem). `lone_bodies`: a moving body
  // without a link is an island of its own (numbered after those with links, in body order; with
  // `one_island`, in the one island), for steppers that solve for every body's motion.
  void Find(const std::vector<char>& fixed, const std::vector<std::pair<int, int>>& links,
            bool one_island = false, bool lone_bodies = false);

  // The islands: those with a link, then (lone_bodies) those without.
  int num_islands() const { return static_cast<int>(link_start_.size()) - 1; }
  IslandView island(int k) const;
  // The island of link k and its position in that island's list (-1 for a link between fixed
  // bodies).
  int island_of_link(int k) const { return island_of_link_[k]; }
  int local_index(int k) const { return local_index_[k]; }

 private:
  int Root(int i);
  void Join(int a, int b);  // the larger root under the smaller
  void NumberIslands(const std::vector<char>& fixed, const std::vector<std::pair<int, int>>& links,
                     bool lone_bodies);

  std::vector<int> parent_;          // per body: union-find parent (-1 for fixed bodies)
  std::vector<int> island_of_root_;  // per body: the island a root's set was given, or -1
  std::vector<int> island_of_link_, local_index_;
  std::vector<int> link_start_, links_;   // the islands' links, island by island
  std::vector<int> body_start_, bodies_;  // the islands' moving bodies, island by island
  std::vector<int> cursor_;
};

// A step's summary from its islands' summaries, summary(k) for island k of `num_islands` (>= 1):
// the first unsolved island's status and message (after "island k of N: " when there are
// several), else the first island's; the largest iteration count and natural residual (NaN if
// one is NaN); wall times and factorizations summed. Returns the number of unsolved islands.
template <class SummaryOf>
int CombineIslandSummaries(int num_islands, const SummaryOf& summary, SolverSummary* step) {
  int failed = 0, first_failed = 0;
  for (int k = 0; k < num_islands; ++k) {
    if (summary(k).IsSolved()) continue;
    if (failed++ == 0) first_failed = k;
  }
  const SolverSummary& base = summary(first_failed);
  step->solver = base.solver;
  step->status = base.status;
  step->message = base.message;
  step->tolerance = base.tolerance;
  step->iterations = 0;
  step->natural_residual = 0.0;
  step->wall_time_seconds = 0.0;
  step->factorizations = 0;
  for (int k = 0; k < num_islands; ++k) {
    const SolverSummary& s = summary(k);
    step->iterations = std::max(step->iterations, s.iterations);
    step->natural_residual = s.natural_residual != s.natural_residual
                                 ? s.natural_residual
                                 : std::max(step->natural_residual, s.natural_residual);
    step->wall_time_seconds += s.wall_time_seconds;
    step->factorizations += s.factorizations;
  }
  if (failed > 0 && num_islands > 1) {
    step->message = "island " + std::to_string(first_failed + 1) + " of " +
                    std::to_string(num_islands) + ": " + step->message;
  }
  return failed;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_ISLANDS_H_
