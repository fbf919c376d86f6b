// Posing an MCP from variable blocks and residual functors, differentiated with ceres::Jet.
#ifndef NCPKIT_SOLVERS_PROBLEM_BUILDER_H_
#define NCPKIT_SOLVERS_PROBLEM_BUILDER_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/input_error.h"
#include "solvers/mcp.h"

namespace ncpkit {
namespace internal {

// Type-erased residual block: adds its residuals (and Jacobian) into the rows it is paired with.
class ResidualBlockBase {
 public:
  virtual ~ResidualBlockBase() = default;
  virtual int num_residuals() const = 0;
  virtual int num_local_variables() const = 0;
  // residuals[num_residuals]; jacobian (row-major num_residuals x num_local_variables) or null.
  virtual bool Evaluate(const Eigen::VectorXd& z, double* residuals, double* jacobian) const = 0;
  std::vector<int> block_ids;       // variable blocks read, in functor order
  std::vector<int> paired_blocks;   // variable blocks whose rows receive the residuals, in order
  std::vector<int> rows;            // global row of each residual (set with the pattern)
  std::vector<int> local_columns;   // global variable index of each local variable
  std::vector<int> jacobian_slots;  // index into J's values of each (row, local column)
};

template <class Functor, int kNumResiduals, int... kBlockSizes>
class AutoDiffResidualBlock : public ResidualBlockBase {
 public:
  static constexpr int kNumBlocks = sizeof...(kBlockSizes);
  static constexpr int kTotal = (kBlockSizes + ...);
  static constexpr std::array<int, kNumBlocks> kSizes = {kBlockSizes...};

  explicit AutoDiffResidualBlock(Functor functor) : functor_(std::move(functor)) {}
  int num_residuals() const override { return kNumResiduals; }
  int num_local_variables() const override { return kTotal; }

  bool Evaluate(const Eigen::VectorXd& z, double* residuals, double* jacobian) const override {
    if (jacobian == nullptr) {
      std::array<double, kTotal> x;
      for (int k = 0; k < kTotal; ++k) x[k] = z[local_columns[k]];
      return Call(x.data(), residuals);
    }
    using JetT = ceres::Jet<double, kTotal>;
    std::array<JetT, kTotal> x;
    for (int k = 0; k < kTotal; ++k) x[k] = JetT(z[local_columns[k]], k);
    std::array<JetT, kNumResiduals> r;
    if (!Call(x.data(), r.data())) return false;
    for (int i = 0; i < kNumResiduals; ++i) {
      residuals[i] = r[i].a;
      for (int k = 0; k < kTotal; ++k) jacobian[i * kTotal + k] = r[i].v[k];
    }
    return true;
  }

 private:
  template <class T>
  bool Call(const T* x, T* r) const {
    std::array<const T*, kNumBlocks> blocks;
    int offset = 0;
    for (int b = 0; b < kNumBlocks; ++b) {
      blocks[b] = x + offset;
      offset += kSizes[b];
    }
    return functor_(blocks.data(), r);
  }
  Functor functor_;
};

}  // namespace internal

// Builds an MCP from variable blocks (size, bounds, start values) and residual blocks. A
// residual block is a functor
//   template <class T> bool operator()(T const* const* x, T* r) const;
// reading the variable blocks it names (x[b] points at block b's values) and writing
// kNumResiduals residuals. It is evaluated with ceres::Jet<double, N> of the fixed, local size
// N = sum of its block sizes, and its Jacobian is scattered into one sparse matrix whose
// pattern is computed once. Each residual block is paired with a variable block of the same
// size: residual k is added into row k of that block, i.e. it is complementary to variable k.
// Several residual blocks may add into the same rows. A functor returning false, or a
// non-finite value, makes Evaluate() return false (solvers then shorten the step).
//
// Not thread-safe: Evaluate() builds the sparsity pattern on first use.
class ProblemBuilder : public MixedComplementarityProblem {
 public:
  // Adds `size` variables with the same bounds and start value; returns the block id.
  int AddVariableBlock(int size, double lower, double upper, double start = 0.0);
  int AddVariableBlock(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                       const Eigen::VectorXd& start);

  // Adds a residual block; `blocks` are the variable blocks the functor reads, whose sizes
  // must be kBlockSizes...; `paired_block` must have kNumResiduals variables.
  template <int kNumResiduals, int... kBlockSizes, class Functor>
  void AddResidualBlock(Functor functor, int paired_block, const std::vector<int>& blocks) {
    AddResidualBlock<kNumResiduals, kBlockSizes...>(std::move(functor),
                                                    std::vector<int>{paired_block}, blocks);
  }

  // As above, with the residuals going to several variable blocks in turn: the first
  // size(paired_blocks[0]) residuals to the first, and so on; the sizes must add up to
  // kNumResiduals. One functor can so compute quantities its rows share only once.
  template <int kNumResiduals, int... kBlockSizes, class Functor>
  void AddResidualBlock(Functor functor, const std::vector<int>& paired_blocks,
                        const std::vector<int>& blocks) {
    static_assert(sizeof...(kBlockSizes) > 0, "a residual block reads at least one block");
    auto block =
        std::make_unique<internal::AutoDiffResidualBlock<Functor, kNumResiduals, kBlockSizes...>>(
            std::move(functor));
    const std::array<int, sizeof...(kBlockSizes)> sizes = {kBlockSizes...};
    if (blocks.size() != sizes.size()) {
      throw InputError("residual block: " + std::to_string(blocks.size()) +
                       " variable blocks given, the functor reads " + std::to_string(sizes.size()));
    }
    for (size_t b = 0; b < blocks.size(); ++b) CheckBlock(blocks[b], sizes[b], "read");
    CheckPairing(paired_blocks, kNumResiduals);
    block->block_ids = blocks;
    block->paired_blocks = paired_blocks;
    for (int id : blocks) {
      for (int k = 0; k < block_sizes_[id]; ++k) block->local_columns.push_back(offsets_[id] + k);
    }
    residual_blocks_.push_back(std::move(block));
    pattern_ready_ = false;
  }

  int num_variable_blocks() const { return static_cast<int>(offsets_.size()); }
  int block_offset(int block) const { return offsets_.at(block); }
  int block_size(int block) const { return block_sizes_.at(block); }
  const Eigen::VectorXd& start() const { return start_; }

  // MixedComplementarityProblem. Evaluate throws std::invalid_argument if some variable has
  // no residual row paired with it.
  int size() const override { return static_cast<int>(start_.size()); }
  const Eigen::VectorXd& lower() const override { return lower_; }
  const Eigen::VectorXd& upper() const override { return upper_; }
  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override;
  std::string name() const override { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

 private:
  void CheckBlock(int block, int expected_size, const char* role) const;
  void CheckPairing(const std::vector<int>& paired_blocks, int num_residuals) const;
  void BuildPattern() const;

  std::string name_ = "builder";
  std::vector<int> offsets_, block_sizes_;
  Eigen::VectorXd lower_, upper_, start_;
  std::vector<std::unique_ptr<internal::ResidualBlockBase>> residual_blocks_;
  mutable bool pattern_ready_ = false;
  mutable Eigen::SparseMatrix<double> pattern_;
  mutable std::vector<double> local_residuals_, local_jacobian_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_PROBLEM_BUILDER_H_
