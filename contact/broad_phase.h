// Broad phase: the pairs of bodies whose bounding spheres overlap, found by sorting and
// sweeping instead of testing every pair, so a scene of many bodies costs O(n log n + k) per
// query (k: pairs whose intervals overlap along the sweep axis) instead of O(n^2). A single
// sweep axis makes k grow as n^(3/2) on a wide layer (each body meets a whole column of the
// others along the axis), so from kStripBodies bodies on the space is also cut into strips
// across a second axis, one and a half typical bodies wide, and each strip is swept alone: a
// body lies in one strip or two, and the few too wide for that (walls, a floor slab: at most
// kMaxWide) are tested against all.
#ifndef NCPKIT_CONTACT_BROAD_PHASE_H_
#define NCPKIT_CONTACT_BROAD_PHASE_H_

#include <Eigen/Core>
#include <cstdint>
#include <utility>
#include <vector>

namespace ncpkit {

// A body as the broad phase sees it: a sphere, and optionally an axis-aligned box, about one
// centre, each containing the body; a pair must overlap in both.
struct BoundingSphere {
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  // >= 0; +infinity for an unbounded shape (a half-space), which is paired with every body.
  double radius = 0.0;
  // Half side lengths of the box along the world axes (>= 0); infinite (the default): no box,
  // the sphere's cube (half side r). Boxes are tight where spheres are loose (a box's sphere
  // reaches 0.87 of its side beyond a face), so rows of boxes side by side are not all paired.
  // Where a box reaches beyond the sphere's cube, the cube bounds it: both contain the body.
  Eigen::Vector3d half_extents = Eigen::Vector3d::Constant(INFINITY);
  bool fixed = false;  // pairs of two fixed bodies are never reported
};

// Keeps its workspace, so that repeated queries on scenes of the same size allocate nothing.
class BroadPhase {
 public:
  // The pairs (i, j), i < j, of spheres whose centres are at most r_i + r_j apart and whose
  // boxes overlap (|c_i - c_j| <= min(e_i, r_i) + min(e_j, r_j) on every axis) (radii and
  // extents inflated by a relative 1e-12, so this is a superset of a caller's exact test of the
  // same inequalities) and that are not both fixed, sorted by (i, j) — the order of a double loop
  // over the bodies. The sweep runs along the coordinate axis of the centres' largest spread. A NaN
  // centre or radius pairs the body with every other (a broad phase must not hide a pair; the
  // narrow phase then sees the NaN).
  void Find(const std::vector<BoundingSphere>& spheres, std::vector<std::pair<int, int>>* pairs);
  // After a Find() whose spheres have since only grown where `grown` is nonzero: adds to *pairs
  // the pairs of a grown sphere that Find() would now report, keeping the order. Costs the
  // grown spheres times all, not a new sweep.
  void FindAround(const std::vector<BoundingSphere>& spheres, const std::vector<char>& grown,
                  std::vector<std::pair<int, int>>* pairs);
  // After a Find() whose spheres have since only grown where `grown` is nonzero: the pairs with a
  // grown sphere that Find() would now report, sorted by (i, j), into *pairs (replaced). Returns
  // false, *pairs empty, where testing the grown spheres against all would cost more than a new
  // sweep (then FindAround() sweeps).
  bool FindGrown(const std::vector<BoundingSphere>& spheres, const std::vector<char>& grown,
                 std::vector<std::pair<int, int>>* pairs);
  // The pairs the last Find() examined (its cost; each reported pair is one of them).
  int64_t last_candidates() const { return last_candidates_; }

 private:
  std::vector<int> finite_;     // bodies with a finite radius, sorted by interval start
  std::vector<int> unbounded_;  // the others
  std::vector<char> is_unbounded_;
  std::vector<double> radius_;            // slightly inflated (see Find)
  std::vector<Eigen::Vector3d> extents_;  // the same
  std::vector<double> low_;               // interval start along the sweep axis
  // Strips pay from this many finite bodies; at most this many too wide for them.
  static constexpr int kStripBodies = 256;
  static constexpr int kMaxWide = 64;
  // The finite bodies in sweep order, packed: within a strip, by interval start; strip and first
  // strip are 0 for a single sweep.
  struct Packed {
    Eigen::Vector3d centre, extents;
    double radius, low, high;
    int64_t strip, first_strip;
    int index;
    bool fixed;
  };
  std::vector<Packed> packed_;
  std::vector<Packed> wide_;  // bodies in no strip, tested against all
  struct StripKey {
    int64_t strip;
    double low;
    int index, slot;  // the body, and its place in unsorted_
  };
  std::vector<Packed> unsorted_;
  std::vector<StripKey> keys_;
  std::vector<double> reach_;  // per finite body, its half-width across the strips
  std::vector<double> reach_sorted_;
  std::vector<int> first_count_;
  int64_t last_candidates_ = 0;  // pairs the last sweep examined
  std::vector<std::pair<int, int>> sorted_;
  std::vector<std::pair<int, int>> grown_pairs_;  // FindAround's added pairs
  // Fills finite_, unbounded_ and is_unbounded_; returns the axes of the centres' largest and
  // second largest spread.
  std::pair<int, int> Classify(const std::vector<BoundingSphere>& spheres);
  void Inflate(const BoundingSphere& s, int i);  // radius_[i] and extents_[i]
  // Whether Find() pairs g and k, by the inflated bounds (both filled).
  bool Near(const std::vector<BoundingSphere>& spheres, int g, int k) const;
  Packed PackOne(const std::vector<BoundingSphere>& spheres, int i, int axis) const;
  void Pack(const std::vector<BoundingSphere>& spheres, int axis);
  // Packs the bodies by strips across strip_axis, or returns false where strips do not pay
  // (few bodies, few strips, too many wide bodies).
  bool PackInStrips(const std::vector<BoundingSphere>& spheres, int axis, int strip_axis);
  void Sweep(std::vector<std::pair<int, int>>* pairs);      // the packed bodies' pairs, appended
  void SweepWide(std::vector<std::pair<int, int>>* pairs);  // the wide bodies' pairs, appended
  void SortPairs(int n, std::vector<std::pair<int, int>>* pairs);
};

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_BROAD_PHASE_H_
