#include "solvers/linalg/block_cholesky.h"

#include <amd.h>

#include <algorithm>

namespace ncpkit {
namespace {

// The inverse of a lower triangular block by forward substitution, column by column.
BlockCholesky::Block LowerInverse(const BlockCholesky::Block& L) {
  BlockCholesky::Block inverse = BlockCholesky::Block::Zero();
  for (int j = 0; j < BlockCholesky::kBlock; ++j) {
    inverse(j, j) = 1.0 / L(j, j);
    for (int i = j + 1; i < BlockCholesky::kBlock; ++i) {
      double sum = 0.0;
      for (int m = j; m < i; ++m) sum += L(i, m) * inverse(m, j);
      inverse(i, j) = -sum / L(i, i);
    }
  }
  return inverse;
}

}  // namespace

bool BlockCholesky::Analyze(int num_blocks, const std::vector<std::pair<int, int>>& pairs) {
  if (num_blocks == num_blocks_ && pairs == pattern_) return true;
  ++analyses_;
  num_blocks_ = -1;
  const int nb = num_blocks;
  // The block graph, both triangles, for AMD.
  std::vector<int> degree(nb, 0);
  for (const auto& [i, j] : pairs) {
    ++degree[i];
    ++degree[j];
  }
  std::vector<int> starts(nb + 1, 0);
  for (int k = 0; k < nb; ++k) starts[k + 1] = starts[k] + degree[k];
  std::vector<int> adjacency(starts[nb]);
  std::vector<int> next(starts.begin(), starts.end() - 1);
  for (const auto& [i, j] : pairs) {
    adjacency[next[i]++] = j;
    adjacency[next[j]++] = i;
  }
  for (int k = 0; k < nb; ++k)
    std::sort(adjacency.begin() + starts[k], adjacency.begin() + starts[k + 1]);
  order_.resize(nb);
  if (pairs.empty()) {  // nothing to order (AMD takes no empty graph)
    for (int k = 0; k < nb; ++k) order_[k] = k;
  } else if (amd_order(nb, starts.data(), adjacency.data(), order_.data(), nullptr, nullptr) !=
             AMD_OK) {
    return false;
  }
  position_.resize(nb);
  for (int k = 0; k < nb; ++k) position_[order_[k]] = k;
  // L's structure column by column: the column's own neighbours below it, and the structure of
  // each child in the elimination tree without the column itself.
  std::vector<std::vector<int>> structure(nb), children(nb);
  for (const auto& [i, j] : pairs) {
    const int a = position_[i], b = position_[j];
    structure[std::min(a, b)].push_back(std::max(a, b));
  }
  column_begin_.assign(nb + 1, 0);
  rows_.clear();
  for (int k = 0; k < nb; ++k) {
    std::vector<int>& column = structure[k];
    for (const int child : children[k]) {
      for (const int row : structure[child]) {
        if (row != k) column.push_back(row);
      }
    }
    std::sort(column.begin(), column.end());
    column.erase(std::unique(column.begin(), column.end()), column.end());
    if (!column.empty()) children[column.front()].push_back(k);
    rows_.insert(rows_.end(), column.begin(), column.end());
    column_begin_[k + 1] = static_cast<int>(rows_.size());
  }
  diagonal_.resize(nb);
  below_.resize(rows_.size());
  pattern_ = pairs;
  num_blocks_ = nb;
  return true;
}

void BlockCholesky::SetZero() {
  for (Block& block : diagonal_) block.setZero();
  for (Block& block : below_) block.setZero();
}

BlockCholesky::Block& BlockCholesky::Below(int row, int column) {
  const auto first = rows_.begin() + column_begin_[column];
  const auto last = rows_.begin() + column_begin_[column + 1];
  return below_[std::lower_bound(first, last, row) - rows_.begin()];
}

void BlockCholesky::Add(int i, int j, const Block& X) {
  const int a = position_[i], b = position_[j];
  if (a == b) {
    diagonal_[a] += X;
  } else if (a > b) {
    Below(a, b) += X;
  } else {
    Below(b, a) += X.transpose();
  }
}

// Right-looking: column k's diagonal block factorized, its blocks below divided by it, and
// their products subtracted from the columns to its right (all within L's structure).
bool BlockCholesky::Factorize() {
  if (num_blocks_ < 0) return false;
  for (int k = 0; k < num_blocks_; ++k) {
    Eigen::LLT<Block> llt(diagonal_[k]);
    if (llt.info() != Eigen::Success) return false;
    diagonal_[k] = llt.matrixL();
    const int first = column_begin_[k], end = column_begin_[k + 1];
    // L_ik = A_ik L_kk^-T, through L_kk^-T formed once: 6 x 6 products, which Eigen unrolls
    // (a triangular solve per block would take its blocked general path).
    const Block inverse_transpose = LowerInverse(diagonal_[k]).transpose();
    for (int e = first; e < end; ++e) {
      const Block product = below_[e] * inverse_transpose;
      below_[e] = product;
    }
    for (int e = first; e < end; ++e) {
      const Block& Lik = below_[e];
      const int i = rows_[e];
      diagonal_[i].noalias() -= Lik * Lik.transpose();
      for (int f = first; f < e; ++f) {
        Below(i, rows_[f]).noalias() -= Lik * below_[f].transpose();
      }
    }
  }
  return true;
}

void BlockCholesky::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  using Segment = Eigen::Matrix<double, kBlock, 1>;
  const int nb = num_blocks_;
  work_.resize(kBlock * nb);
  for (int k = 0; k < nb; ++k)
    work_.segment<kBlock>(kBlock * k) = b.segment<kBlock>(kBlock * order_[k]);
  for (int k = 0; k < nb; ++k) {
    Segment y =
        diagonal_[k].triangularView<Eigen::Lower>().solve(work_.segment<kBlock>(kBlock * k));
    work_.segment<kBlock>(kBlock * k) = y;
    for (int e = column_begin_[k]; e < column_begin_[k + 1]; ++e) {
      work_.segment<kBlock>(kBlock * rows_[e]).noalias() -= below_[e] * y;
    }
  }
  for (int k = nb - 1; k >= 0; --k) {
    Segment y = work_.segment<kBlock>(kBlock * k);
    for (int e = column_begin_[k]; e < column_begin_[k + 1]; ++e) {
      y.noalias() -= below_[e].transpose() * work_.segment<kBlock>(kBlock * rows_[e]);
    }
    work_.segment<kBlock>(kBlock * k) =
        diagonal_[k].triangularView<Eigen::Lower>().transpose().solve(y);
  }
  x->resize(kBlock * nb);
  for (int k = 0; k < nb; ++k)
    x->segment<kBlock>(kBlock * order_[k]) = work_.segment<kBlock>(kBlock * k);
}

}  // namespace ncpkit
