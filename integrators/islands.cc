#include "integrators/islands.h"

namespace ncpkit::internal {

// With path halving; roots are the smallest body of their set (Find joins to the smaller).
int IslandFinder::Root(int i) {
  while (parent_[i] != i) {
    parent_[i] = parent_[parent_[i]];
    i = parent_[i];
  }
  return i;
}

void IslandFinder::Join(int a, int b) {
  const int ra = Root(a), rb = Root(b);
  if (ra < rb) parent_[rb] = ra;
  if (rb < ra) parent_[ra] = rb;
}

void IslandFinder::Find(const std::vector<char>& fixed,
                        const std::vector<std::pair<int, int>>& links, bool one_island,
                        bool lone_bodies) {
  const int n = static_cast<int>(fixed.size());
  const int num_links = static_cast<int>(links.size());
  parent_.resize(n);
  for (int i = 0; i < n; ++i) parent_[i] = fixed[i] ? -1 : i;
  int first = -1;  // with one_island: the first linked moving body, joined to every other
  for (const auto& [a, b] : links) {
    if (!fixed[a] && !fixed[b]) Join(a, b);
    const int body = fixed[a] ? b : a;
    if (!one_island || fixed[body]) continue;
    if (first < 0) {
      first = body;
    } else {
      Join(first, body);
    }
  }
  for (int i = 0; i < n && one_island && lone_bodies; ++i) {
    if (fixed[i]) continue;
    if (first < 0) first = i;
    Join(first, i);
  }
  NumberIslands(fixed, links, lone_bodies);
  // The links of each island, placed in link order.
  const int num_islands = static_cast<int>(link_start_.size()) - 1;
  for (int k = 0; k < num_islands; ++k) link_start_[k + 1] += link_start_[k];
  links_.resize(link_start_.back());
  for (int k = 0; k < num_links; ++k) {
    if (island_of_link_[k] >= 0) links_[link_start_[island_of_link_[k]] + local_index_[k]] = k;
  }
  // The moving bodies of each island, counted then placed in body order.
  body_start_.assign(num_islands + 1, 0);
  for (int i = 0; i < n; ++i) {
    if (!fixed[i] && island_of_root_[Root(i)] >= 0) ++body_start_[island_of_root_[Root(i)] + 1];
  }
  for (int k = 0; k < num_islands; ++k) body_start_[k + 1] += body_start_[k];
  bodies_.resize(body_start_.back());
  cursor_.assign(body_start_.begin(), body_start_.end() - 1);
  for (int i = 0; i < n; ++i) {
    if (fixed[i]) continue;
    const int island = island_of_root_[Root(i)];
    if (island >= 0) bodies_[cursor_[island]++] = i;
  }
}

// Islands numbered by their first link, then (lone_bodies) the sets without a link by their
// first body; link_start_[k + 1] counts island k's links.
void IslandFinder::NumberIslands(const std::vector<char>& fixed,
                                 const std::vector<std::pair<int, int>>& links, bool lone_bodies) {
  const int n = static_cast<int>(fixed.size());
  const int num_links = static_cast<int>(links.size());
  island_of_root_.assign(n, -1);
  island_of_link_.resize(num_links);
  local_index_.resize(num_links);
  link_start_.assign(1, 0);
  for (int k = 0; k < num_links; ++k) {
    const auto [a, b] = links[k];
    const int body = fixed[a] ? b : a;
    if (fixed[body]) {
      island_of_link_[k] = local_index_[k] = -1;
      continue;
    }
    int& island = island_of_root_[Root(body)];
    if (island < 0) {
      island = static_cast<int>(link_start_.size()) - 1;
      link_start_.push_back(0);
    }
    island_of_link_[k] = island;
    local_index_[k] = link_start_[island + 1]++;
  }
  for (int i = 0; i < n && lone_bodies; ++i) {
    if (fixed[i]) continue;
    int& island = island_of_root_[Root(i)];
    if (island >= 0) continue;
    island = static_cast<int>(link_start_.size()) - 1;
    link_start_.push_back(0);
  }
}

IslandView IslandFinder::island(int k) const {
  IslandView view;
  view.links = links_.data() + link_start_[k];
  view.num_links = link_start_[k + 1] - link_start_[k];
  view.bodies = bodies_.data() + body_start_[k];
  view.num_bodies = body_start_[k + 1] - body_start_[k];
  return view;
}

}  // namespace ncpkit::internal
