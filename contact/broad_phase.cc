#include "contact/broad_phase.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

namespace ncpkit {

namespace {

bool Bounded(const BoundingSphere& s) { return std::isfinite(s.radius) && s.centre.allFinite(); }

// Whether the packed bodies' boxes and spheres overlap (not both fixed).
template <class P>
bool BoundsMeet(const P& a, const P& b) {
  if (a.fixed && b.fixed) return false;
  const Eigen::Vector3d apart = (a.centre - b.centre).cwiseAbs();
  if (!(apart.array() <= (a.extents + b.extents).array()).all()) return false;
  return apart.squaredNorm() <= (a.radius + b.radius) * (a.radius + b.radius);
}

}  // namespace

// Radius and extents inflated by a relative 1e-12 (of the radius and of the centre's size), so
// that the reported pairs are a superset of what a caller's own test of the same inequality,
// summed in another order, accepts: the caller's test decides. NaN or negative extents count
// as none; extents beyond the radius as the radius (the sphere's cube).
void BroadPhase::Inflate(const BoundingSphere& s, int i) {
  const double slack = 1e-12 * (std::abs(s.radius) + s.centre.cwiseAbs().maxCoeff());
  radius_[i] = s.radius + slack;
  for (int k = 0; k < 3; ++k) {
    const double e = s.half_extents[k];
    extents_[i][k] =
        std::min(e >= 0.0 ? e + 1e-12 * (e + std::abs(s.centre[k])) + slack : INFINITY, radius_[i]);
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
  if (!FindGrown(spheres, grown, &grown_pairs_)) {
    Find(spheres, pairs);
    return;
  }
  if (grown_pairs_.empty()) return;
  // Both lists are sorted: merged, the pairs found before dropped from the added ones.
  sorted_.clear();
  std::merge(pairs->begin(), pairs->end(), grown_pairs_.begin(), grown_pairs_.end(),
             std::back_inserter(sorted_));
  sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
  pairs->swap(sorted_);
}

bool BroadPhase::FindGrown(const std::vector<BoundingSphere>& spheres,
                           const std::vector<char>& grown,
                           std::vector<std::pair<int, int>>* pairs) {
  pairs->clear();
  const int n = static_cast<int>(spheres.size());
  const int num_grown = static_cast<int>(
      std::count_if(grown.begin(), grown.begin() + n, [](char g) { return g != 0; }));
  if (num_grown == 0) return true;
  // Testing the grown against all costs num_grown * n tests; a new sweep about as many as the
  // last one examined.
  if (static_cast<int64_t>(num_grown) * n > last_candidates_ + n) return false;
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
  for (int g = 0; g < n; ++g) {
    if (!grown[g]) continue;
    for (int k = 0; k < n; ++k) {
      if (k == g || (grown[k] && k < g)) continue;  // a pair of grown spheres once
      if (Near(spheres, g, k)) pairs->emplace_back(std::min(g, k), std::max(g, k));
    }
  }
  std::sort(pairs->begin(), pairs->end());
  return true;
}

std::pair<int, int> BroadPhase::Classify(const std::vector<BoundingSphere>& spheres) {
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
  if (finite_.empty()) return {0, 1};
  const Eigen::Vector3d spread = highest - lowest;
  int axis = 0;
  spread.maxCoeff(&axis);
  const int other = (axis + 1) % 3, last = (axis + 2) % 3;
  return {axis, spread[other] >= spread[last] ? other : last};
}

BroadPhase::Packed BroadPhase::PackOne(const std::vector<BoundingSphere>& spheres, int i,
                                       int axis) const {
  Packed p;
  p.centre = spheres[i].centre;
  p.extents = extents_[i];
  p.radius = radius_[i];
  p.low = low_[i];
  p.high = spheres[i].centre[axis] + std::min(radius_[i], extents_[i][axis]);
  p.strip = p.first_strip = 0;
  p.index = i;
  p.fixed = spheres[i].fixed;
  return p;
}

// The sweep reads the bodies in sweep order from one packed array (a dense pile has each body
// overlap a third of the others along any axis: the inner loop is the broad phase's cost).
void BroadPhase::Pack(const std::vector<BoundingSphere>& spheres, int axis) {
  std::sort(finite_.begin(), finite_.end(),
            [&](int a, int b) { return low_[a] < low_[b] || (low_[a] == low_[b] && a < b); });
  const int num_finite = static_cast<int>(finite_.size());
  packed_.resize(num_finite);
  for (int a = 0; a < num_finite; ++a) packed_[a] = PackOne(spheres, finite_[a], axis);
  wide_.clear();
}

// Strips of width w across strip_axis, w three times the half-width that all but 2 % of the
// bodies keep within: a body up to w / 2 wide lies in one strip or two neighbours, and is packed
// once in each; a pair is reported from the first strip holding both. The wider bodies go to
// wide_.
bool BroadPhase::PackInStrips(const std::vector<BoundingSphere>& spheres, int axis,
                              int strip_axis) {
  const int num_finite = static_cast<int>(finite_.size());
  if (num_finite < kStripBodies) return false;
  reach_.resize(num_finite);
  double lowest = INFINITY, highest = -INFINITY;
  for (int a = 0; a < num_finite; ++a) {
    const int i = finite_[a];
    reach_[a] = std::min(radius_[i], extents_[i][strip_axis]);
    lowest = std::min(lowest, spheres[i].centre[strip_axis]);
    highest = std::max(highest, spheres[i].centre[strip_axis]);
  }
  reach_sorted_.assign(reach_.begin(), reach_.end());
  const auto typical = reach_sorted_.begin() + (num_finite - 1) * 49 / 50;
  std::nth_element(reach_sorted_.begin(), typical, reach_sorted_.end());
  const double width = 3.0 * *typical;
  // Fewer than four strips gain little; more than 2^40 would lose the strip numbers' precision.
  if (!(width > 0.0) || !((highest - lowest) / width >= 3.0) ||
      !((highest - lowest) / width < 1e12)) {
    return false;
  }
  const double origin = lowest - width;
  // One packed body each, then (strip, start, index) keys for it in one strip or two, sorted
  // (small keys move faster than packed bodies) and gathered into packed_.
  unsorted_.clear();
  keys_.clear();
  wide_.clear();
  for (int a = 0; a < num_finite; ++a) {
    const int i = finite_[a];
    Packed p = PackOne(spheres, i, axis);
    if (reach_[a] > 0.5 * width) {
      if (static_cast<int>(wide_.size()) == kMaxWide) return false;
      wide_.push_back(p);
      continue;
    }
    const double c = spheres[i].centre[strip_axis];
    p.first_strip = static_cast<int64_t>(std::floor((c - reach_[a] - origin) / width));
    const auto last = static_cast<int64_t>(std::floor((c + reach_[a] - origin) / width));
    const int slot = static_cast<int>(unsorted_.size());
    unsorted_.push_back(p);
    keys_.push_back({p.first_strip, p.low, i, slot});
    if (last != p.first_strip) keys_.push_back({last, p.low, i, slot});
  }
  std::sort(keys_.begin(), keys_.end(), [](const StripKey& a, const StripKey& b) {
    if (a.strip != b.strip) return a.strip < b.strip;
    return a.low < b.low || (a.low == b.low && a.index < b.index);
  });
  packed_.resize(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) {
    packed_[k] = unsorted_[keys_[k].slot];
    packed_[k].strip = keys_[k].strip;
  }
  return true;
}

void BroadPhase::Sweep(std::vector<std::pair<int, int>>* pairs) {
  const int num_packed = static_cast<int>(packed_.size());
  last_candidates_ = 0;
  for (int a = 0; a < num_packed; ++a) {
    const Packed& pa = packed_[a];
    int b = a + 1;
    for (; b < num_packed && packed_[b].strip == pa.strip && packed_[b].low <= pa.high; ++b) {
      const Packed& pb = packed_[b];
      // Both are in this strip: reported from the first strip they share.
      if (std::max(pa.first_strip, pb.first_strip) != pa.strip) continue;
      if (BoundsMeet(pa, pb)) {
        pairs->emplace_back(std::min(pa.index, pb.index), std::max(pa.index, pb.index));
      }
    }
    last_candidates_ += b - a - 1;
  }
}

// Each wide body against every other finite one (a body of two strips in its first only).
void BroadPhase::SweepWide(std::vector<std::pair<int, int>>* pairs) {
  const int num_wide = static_cast<int>(wide_.size());
  for (int g = 0; g < num_wide; ++g) {
    const Packed& pg = wide_[g];
    for (const Packed& pk : packed_) {
      if (pk.strip == pk.first_strip && BoundsMeet(pg, pk)) {
        pairs->emplace_back(std::min(pg.index, pk.index), std::max(pg.index, pk.index));
      }
    }
    for (int k = g + 1; k < num_wide; ++k) {
      if (BoundsMeet(pg, wide_[k])) {
        pairs->emplace_back(std::min(pg.index, wide_[k].index), std::max(pg.index, wide_[k].index));
      }
    }
    last_candidates_ += static_cast<int64_t>(packed_.size()) + num_wide;
  }
}

void BroadPhase::Find(const std::vector<BoundingSphere>& spheres,
                      std::vector<std::pair<int, int>>* pairs) {
  pairs->clear();
  const int n = static_cast<int>(spheres.size());
  const auto [axis, strip_axis] = Classify(spheres);
  radius_.assign(n, 0.0);
  extents_.resize(n);
  low_.assign(n, 0.0);
  for (int i : finite_) {
    Inflate(spheres[i], i);
    low_[i] = spheres[i].centre[axis] - std::min(radius_[i], extents_[i][axis]);
  }
  if (!PackInStrips(spheres, axis, strip_axis)) Pack(spheres, axis);
  Sweep(pairs);
  SweepWide(pairs);
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
