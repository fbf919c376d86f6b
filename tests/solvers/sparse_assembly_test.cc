#include "solvers/linalg/internal/sparse_assembly.h"

#include <doctest/doctest.h>

#include <random>
#include <tuple>
#include <vector>

namespace ncpkit::internal {
namespace {

// CompressPattern against setFromTriplets and a search of each column, on patterns dense
// enough for its map of positions and sparse enough for its sort, with repeated entries.
TEST_CASE("CompressPattern builds setFromTriplets' pattern and each entry's position") {
  std::mt19937 rng(5);
  for (const auto& size : std::vector<std::tuple<int, int, int>>{
           {1, 1, 1}, {53, 53, 1873}, {40, 30, 2000}, {300, 300, 900}, {5, 200, 60}, {7, 3, 0}}) {
    // (Copies, not structured bindings: doctest's CAPTURE takes them into a lambda.)
    const int rows = std::get<0>(size), cols = std::get<1>(size), count = std::get<2>(size);
    CAPTURE(rows);
    CAPTURE(cols);
    std::uniform_int_distribution<int> row(0, rows - 1), col(0, cols - 1);
    std::vector<int> positions(count, -2);
    std::vector<PatternEntry> entries;
    std::vector<Eigen::Triplet<double>> triplets;
    for (int k = 0; k < count; ++k) {
      const int i = row(rng), j = col(rng);
      entries.push_back({i, j, &positions[k]});
      triplets.emplace_back(i, j, 0.0);
    }
    Eigen::SparseMatrix<double> pattern, expected(rows, cols);
    std::vector<PatternEntry> sorted;
    CompressPattern(rows, cols, entries, &sorted, &pattern);
    expected.setFromTriplets(triplets.begin(), triplets.end());
    expected.makeCompressed();
    REQUIRE(pattern.rows() == rows);
    REQUIRE(pattern.cols() == cols);
    REQUIRE(pattern.isCompressed());
    REQUIRE(pattern.nonZeros() == expected.nonZeros());
    for (int j = 0; j <= cols; ++j)
      CHECK(pattern.outerIndexPtr()[j] == expected.outerIndexPtr()[j]);
    for (Eigen::Index k = 0; k < pattern.nonZeros(); ++k) {
      CHECK(pattern.innerIndexPtr()[k] == expected.innerIndexPtr()[k]);
      CHECK(pattern.valuePtr()[k] == 0.0);
    }
    for (int k = 0; k < count; ++k) {
      const int p = positions[k];
      REQUIRE(p >= 0);
      REQUIRE(p < pattern.nonZeros());
      CHECK(pattern.innerIndexPtr()[p] == entries[k].row);
      CHECK(p >= pattern.outerIndexPtr()[entries[k].column]);
      CHECK(p < pattern.outerIndexPtr()[entries[k].column + 1]);
    }
  }
}

}  // namespace
}  // namespace ncpkit::internal
