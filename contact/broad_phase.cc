#include "contact/broad_phase.h"

#include <algorithm>
#include <cmath>

namespace ncpkit {

void BroadPhase::FindAround(const std::vector<BoundingSphere>& spheres,
                            const std::vector<char>& grown,
                            std::vector<std::pair<int, int>>* pairs) {
  const int n = static_cast<int>(spheres.size());
  int num_grown = 0;
  for (int i = 0; i < n; ++i) num_grown += grown[i] ? 1 : 0;
  if (num_grown == 0) return;
  if (16 * num_grown > n) {  // a new sweep costs less than testing so many against all
    Find(spheres, pairs);
    return;
  }
  // The inflated radii and extents of Find(), then each grown sphere against all.
  radius_.assign(n, 0.0);
  extents_.resize(n);
  is_unbounded_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const BoundingSphere& s = spheres[i];
    if (!(std::isfinite(s.radius) && s.centre.allFinite())) {
      is_unbounded_[i] = 1;
      continue;
    }
    const double slack = 1e-12 * (std::abs(s.radius) + s.centre.cwiseAbs().maxCoeff());
    radius_[i] = s.radius + slack;
    for (int k = 0; k < 3; ++k) {
      const double e = s.half_extents[k];
      extents_[i][k] = e >= 0.0 ? e + 1e-12 * (e + std::abs(s.centre[k])) + slack : INFINITY;
    }
  }
  const size_t before = pairs->size();
  for (int g = 0; g < n; ++g) {
    if (!grown[g]) continue;
    for (int k = 0; k < n; ++k) {
      if (k == g || (grown[k] && k < g)) continue;  // a pair of grown spheres once
      if (spheres[g].fixed && spheres[k].fixed) continue;
      if (!is_unbounded_[g] && !is_unbounded_[k]) {
        const Eigen::Vector3d apart = (spheres[g].centre - spheres[k].centre).cwiseAbs();
        if (!(apart.array() <= (extents_[g] + extents_[k]).array()).all()) continue;
        if (apart.norm() > radius_[g] + radius_[k]) continue;
      }
      pairs->emplace_back(std::min(g, k), std::max(g, k));
    }
  }
  if (pairs->size() == before) return;
  std::sort(pairs->begin(), pairs->end());
  pairs->erase(std::unique(pairs->begin(), pairs->end()), pairs->end());
}

void BroadPhase::Find(const std::vector<BoundingSphere>& spheres,
                      std::vector<std::pair<int, int>>* pairs) {
  pairs->clear();
  const int n = static_cast<int>(spheres.size());
  finite_.clear();
  unbounded_.clear();
  is_unbounded_.assign(n, 0);
  Eigen::Vector3d lowest = Eigen::Vector3d::Constant(INFINITY);
  Eigen::Vector3d highest = Eigen::Vector3d::Constant(-INFINITY);
  for (int i = 0; i < n; ++i) {
    const BoundingSphere& s = spheres[i];
    if (std::isfinite(s.radius) && s.centre.allFinite()) {
      finite_.push_back(i);
      lowest = lowest.cwiseMin(s.centre);
      highest = highest.cwiseMax(s.centre);
    } else {
      unbounded_.push_back(i);
      is_unbounded_[i] = 1;
    }
  }
  int axis = 0;
  if (!finite_.empty()) (highest - lowest).maxCoeff(&axis);
  // Radii inflated by a relative 1e-12 (of the radius and of the centre's size), so that the
  // reported pairs are a superset of what a caller's own test of the same inequality, summed
  // in another order, accepts: the caller's test decides.
  radius_.assign(n, 0.0);
  extents_.resize(n);
  low_.assign(n, 0.0);
  for (int i : finite_) {
    const BoundingSphere& s = spheres[i];
    const double slack = 1e-12 * (std::abs(s.radius) + s.centre.cwiseAbs().maxCoeff());
    radius_[i] = s.radius + slack;
    // NaN extents count as none (the sphere decides); so do negative ones.
    for (int k = 0; k < 3; ++k) {
      const double e = s.half_extents[k];
      extents_[i][k] = e >= 0.0 ? e + 1e-12 * (e + std::abs(s.centre[k])) + slack : INFINITY;
    }
    low_[i] = s.centre[axis] - std::min(radius_[i], extents_[i][axis]);
  }
  std::sort(finite_.begin(), finite_.end(),
            [&](int a, int b) { return low_[a] < low_[b] || (low_[a] == low_[b] && a < b); });
  const int num_finite = static_cast<int>(finite_.size());
  for (int a = 0; a < num_finite; ++a) {
    const int i = finite_[a];
    const BoundingSphere& si = spheres[i];
    const double high = si.centre[axis] + std::min(radius_[i], extents_[i][axis]);
    for (int b = a + 1; b < num_finite && low_[finite_[b]] <= high; ++b) {
      const int j = finite_[b];
      const BoundingSphere& sj = spheres[j];
      if (si.fixed && sj.fixed) continue;
      const Eigen::Vector3d apart = (si.centre - sj.centre).cwiseAbs();
      if (!(apart.array() <= (extents_[i] + extents_[j]).array()).all()) continue;
      if ((si.centre - sj.centre).norm() <= radius_[i] + radius_[j]) {
        pairs->emplace_back(std::min(i, j), std::max(i, j));
      }
    }
  }
  for (int u : unbounded_) {
    for (int k = 0; k < n; ++k) {
      if (k == u || (is_unbounded_[k] && k < u)) continue;  // (each unbounded pair once)
      if (spheres[u].fixed && spheres[k].fixed) continue;
      pairs->emplace_back(std::min(u, k), std::max(u, k));
    }
  }
  std::sort(pairs->begin(), pairs->end());
}

}  // namespace ncpkit
