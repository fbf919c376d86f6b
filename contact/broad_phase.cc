#include "contact/broad_phase.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ncpkit {

namespace {

bool Bounded(const BoundingSphere& s) { return std::isfinite(s.radius) && s.centre.allFinite(); }

}  // namespace

// Radius and extents inflated by a relative 1e-12 (of the radius and of the centre's size), so
// that the reported pairs are a superset of what a caller's own test of the same inequality,
// summed in another order, accepts: the caller's test decides. NaN or negative extents count
// as none (the sphere decides).
void BroadPhase::Inflate(const BoundingSphere& s, int i) {
  const double slack = 1e-12 * (std::abs(s.radius) + s.centre.cwiseAbs().maxCoeff());
  radius_[i] = s.radius + slack;
  for (int k = 0; k < 3; ++k) {
    const double e = s.half_extents[k];
    extents_[i][k] = e >= 0.0 ? e + 1e-12 * (e + std::abs(s.centre[k])) + slack : INFINITY;
  }
}

bool BroadPhase::Near(const std::vector<BoundingSphere>& spheres, int g, int k) const {
  if (spheres[g].fixed && spheres[k].fixed) return false;
  if (is_unbounded_[g] || is_unbounded_[k]) return true;
  const Eigen::Vector3d apart = (spheres[g].centre - spheres[k].centre).cwiseAbs();
  if (!(apart.array() <= (extents_[g] + extents_[k]).array()).all()) return false;
  return !(apart.norm() > radius_[g] + radius_[k]);
}

void BroadPhase::FindAround(const std::vector<BoundingSphere>& spheres,
                            const std::vector<char>& grown,
                            std::vector<std::pair<int, int>>* pairs) {
  const int n = static_cast<int>(spheres.size());
  const int num_grown = static_cast<int>(
      std::count_if(grown.begin(), grown.begin() + n, [](char g) { return g != 0; }));
  if (num_grown == 0) return;
  // Testing the grown against all costs num_grown * n tests; a new sweep about as many as the
  // last one examined.
  if (static_cast<int64_t>(num_grown) * n > last_candidates_ + n) {
    Find(spheres, pairs);
    return;
  }
  // The inflated radii and extents of Find(), then each grown sphere against all.
  radius_.assign(n, 0.0);
  extents_.resize(n);
  is_unbounded_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    if (Bounded(spheres[i])) {
      Inflate(spheres[i], i);
    } else {
      is_unbounded_[i] = 1;
    }
  }
  const size_t before = pairs->size();
  for (int g = 0; g < n; ++g) {
    if (!grown[g]) continue;
    for (int k = 0; k < n; ++k) {
      if (k == g || (grown[k] && k < g)) continue;  // a pair of grown spheres once
      if (Near(spheres, g, k)) pairs->emplace_back(std::min(g, k), std::max(g, k));
    }
  }
  if (pairs->size() == before) return;
  std::sort(pairs->begin(), pairs->end());
  pairs->erase(std::unique(pairs->begin(), pairs->end()), pairs->end());
}

int BroadPhase::Classify(const std::vector<BoundingSphere>& spheres) {
  const int n = static_cast<int>(spheres.size());
  finite_.clear();
  unbounded_.clear();
  is_unbounded_.assign(n, 0);
  Eigen::Vector3d lowest = Eigen::Vector3d::Constant(INFINITY);
  Eigen::Vector3d highest = Eigen::Vector3d::Constant(-INFINITY);
  for (int i = 0; i < n; ++i) {
    const BoundingSphere& s = spheres[i];
    if (Bounded(s)) {
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
  return axis;
}

// The sweep reads the bodies in sweep order from one packed array (a dense pile has each body
// overlap a third of the others along any axis: the inner loop is the broad phase's cost).
void BroadPhase::Pack(const std::vector<BoundingSphere>& spheres, int axis) {
  const int num_finite = static_cast<int>(finite_.size());
  packed_.resize(num_finite);
  for (int a = 0; a < num_finite; ++a) {
    const int i = finite_[a];
    Packed& p = packed_[a];
    p.centre = spheres[i].centre;
    p.extents = extents_[i];
    p.radius = radius_[i];
    p.low = low_[i];
    p.high = spheres[i].centre[axis] + std::min(radius_[i], extents_[i][axis]);
    p.index = i;
    p.fixed = spheres[i].fixed;
  }
}

void BroadPhase::Sweep(std::vector<std::pair<int, int>>* pairs) {
  const int num_finite = static_cast<int>(packed_.size());
  last_candidates_ = 0;
  for (int a = 0; a < num_finite; ++a) {
    const Packed& pa = packed_[a];
    int b = a + 1;
    for (; b < num_finite && packed_[b].low <= pa.high; ++b) {
      const Packed& pb = packed_[b];
      if (pa.fixed && pb.fixed) continue;
      const Eigen::Vector3d apart = (pa.centre - pb.centre).cwiseAbs();
      if (!(apart.array() <= (pa.extents + pb.extents).array()).all()) continue;
      if (apart.squaredNorm() <= (pa.radius + pb.radius) * (pa.radius + pb.radius)) {
        pairs->emplace_back(std::min(pa.index, pb.index), std::max(pa.index, pb.index));
      }
    }
    last_candidates_ += b - a - 1;
  }
}

void BroadPhase::Find(const std::vector<BoundingSphere>& spheres,
                      std::vector<std::pair<int, int>>* pairs) {
  pairs->clear();
  const int n = static_cast<int>(spheres.size());
  const int axis = Classify(spheres);
  radius_.assign(n, 0.0);
  extents_.resize(n);
  low_.assign(n, 0.0);
  for (int i : finite_) {
    Inflate(spheres[i], i);
    low_[i] = spheres[i].centre[axis] - std::min(radius_[i], extents_[i][axis]);
  }
  std::sort(finite_.begin(), finite_.end(),
            [&](int a, int b) { return low_[a] < low_[b] || (low_[a] == low_[b] && a < b); });
  Pack(spheres, axis);
  Sweep(pairs);
  for (int u : unbounded_) {
    for (int k = 0; k < n; ++k) {
      if (k == u || (is_unbounded_[k] && k < u)) continue;  // (each unbounded pair once)
      if (spheres[u].fixed && spheres[k].fixed) continue;
      pairs->emplace_back(std::min(u, k), std::max(u, k));
    }
  }
  SortPairs(n, pairs);
}

// (i, j) order by counting on i, then each i's few partners sorted in place.
void BroadPhase::SortPairs(int n, std::vector<std::pair<int, int>>* pairs) {
  first_count_.assign(static_cast<size_t>(n) + 1, 0);
  for (const auto& [i, j] : *pairs) ++first_count_[i + 1];
  for (int i = 0; i < n; ++i) first_count_[i + 1] += first_count_[i];
  sorted_.resize(pairs->size());
  for (const auto& pair : *pairs) sorted_[first_count_[pair.first]++] = pair;
  for (size_t k = 0, start = 0; k <= sorted_.size(); ++k) {
    if (k == sorted_.size() || sorted_[k].first != sorted_[start].first) {
      std::sort(sorted_.begin() + static_cast<std::ptrdiff_t>(start),
                sorted_.begin() + static_cast<std::ptrdiff_t>(k));
      start = k;
    }
  }
  pairs->swap(sorted_);
}

}  // namespace ncpkit
