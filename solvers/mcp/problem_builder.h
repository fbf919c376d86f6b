// Posing an MCP from variable blocks and residual functors, differentiated with ceres::Jet.
#ifndef NCPKIT_SOLVERS_MCP_PROBLEM_BUILDER_H_
#define NCPKIT_SOLVERS_MCP_PROBLEM_BUILDER_H_

#include <ceres/jet.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "solvers/base/input_error.h"
#include "solvers/mcp/mcp.h"

namespace ncpkit {
namespace internal {

// Type-erased residual block: adds its residuals (and Jacobian) into the rows it is paired with.
class ResidualBlockBase {
 public:
  virtual ~ResidualBlockBase() = default;
  virtual int num_residuals() const = 0;
  virtual int num_local_variables() const = 0;
  // residuals[num_residuals]; jacobian (the local entries, see below) or null.
  virtual bool Evaluate(const Eigen::VectorXd& z, double* residuals, double* jacobian) const = 0;
  // The local Jacobian's entries, row by row: row i holds the local columns
  // pattern_columns[pattern_starts[i] .. pattern_starts[i + 1]), ascending. Empty
  // pattern_starts: dense, row-major num_residuals x num_local_variables.
  int num_jacobian_entries() const {
    return pattern_starts.empty() ? num_residuals() * num_local_variables() : pattern_starts.back();
  }
  std::vector<int> pattern_starts, pattern_columns;
  std::vector<int> block_ids;      // variable blocks read, in functor order
  std::vector<int> paired_blocks;  // variable blocks whose rows receive the residuals, in order
  std::vector<int> rows;           // global row of each residual (set with the pattern)
  // Each local variable's index in z, or size() + its index in the parameters (set with the
  // pattern).
  std::vector<int> local_columns;
  // Index into J's values of each local Jacobian entry; -1 - k for entry k of the parameter
  // Jacobian's values (a local variable that is a parameter).
  std::vector<int> jacobian_slots;
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
    if constexpr (kOnHeap) {
      if (!jets_) jets_ = std::make_unique<Jets>();
      return EvaluateJets(z, jets_.get(), residuals, jacobian);
    } else {
      // One set per thread and block type, made on first use: a set on the stack would be
      // zeroed on every call by Jet's constructor (two thirds of this function's time at 35
      // variables), and one per block would cost memory in scenes of many blocks. Every call
      // seeds every x and the functor writes every r, so nothing carries over (a functor must not
      // evaluate another block of its own type from inside). Over every block type the library
      // instantiates this is about 0.5 MB of each thread's storage.
      thread_local Jets jets;
      return EvaluateJets(z, &jets, residuals, jacobian);
    }
  }

 private:
  using JetT = ceres::Jet<double, kTotal>;
  struct Jets {
    std::array<JetT, kTotal> x;
    std::array<JetT, kNumResiduals> r;
  };

  bool EvaluateJets(const Eigen::VectorXd& z, Jets* jets, double* residuals,
                    double* jacobian) const {
    // Seeded in place: assigning JetT(value, k) builds each Jet on the stack (a block zeroing)
    // and copies it (a block move), a third of this function's time at 35 variables.
    for (int k = 0; k < kTotal; ++k) {
      JetT& x = jets->x[k];
      x.a = z[local_columns[k]];
      x.v.setZero();
      x.v[k] = 1.0;
    }
    if (!Call(jets->x.data(), jets->r.data())) return false;
    for (int i = 0; i < kNumResiduals; ++i) {
      residuals[i] = jets->r[i].a;
      for (int k = 0; k < kTotal; ++k) jacobian[i * kTotal + k] = jets->r[i].v[k];
    }
    return true;
  }

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
  // Blocks whose Jets take more than 64 kB keep them in the block, made on first use (a block of
  // 1000 variables needs 16 MB: more than a thread's stack, too much for every thread's storage).
  static constexpr bool kOnHeap = sizeof(Jets) > 64 * 1024;
  Functor functor_;
  mutable std::unique_ptr<Jets> jets_;  // kOnHeap only
};

// Groups the local columns of a sparse pattern so that no two columns of a group share a row
// (greedy colouring of the column intersection graph, Curtis-Powell-Reid): the Jacobian then
// takes one derivative slot per group instead of one per column. Dense: column k in group k.
// Returns the number of groups; (*group)[k] is column k's.
int GroupColumns(int num_columns, const std::vector<int>& pattern_starts,
                 const std::vector<int>& pattern_columns, std::vector<int>* group);

// A residual block whose sizes are known at run time. Its Jacobian is computed kStride groups
// of columns at a time with ceres::Jet<double, kStride> (as Ceres'
// DynamicAutoDiffCostFunction does), the groups from the block's sparse pattern: a banded
// block of any size takes one or two functor evaluations. Jets live in the block (heap), so no
// block size grows the stack.
template <class Functor>
class DynamicAutoDiffResidualBlock : public ResidualBlockBase {
 public:
  static constexpr int kStride = 8;
  using JetT = ceres::Jet<double, kStride>;

  DynamicAutoDiffResidualBlock(Functor functor, std::vector<int> block_sizes, int num_residuals)
      : functor_(std::move(functor)),
        block_sizes_(std::move(block_sizes)),
        num_residuals_(num_residuals) {
    for (int size : block_sizes_) num_local_ += size;
  }
  int num_residuals() const override { return num_residuals_; }
  int num_local_variables() const override { return num_local_; }

  // After pattern_starts / pattern_columns are set (or left empty: dense).
  void Prepare() {
    num_groups_ = GroupColumns(num_local_, pattern_starts, pattern_columns, &group_);
    x_.resize(num_local_);
    r_.resize(num_residuals_);
    x_double_.resize(num_local_);
  }

  bool Evaluate(const Eigen::VectorXd& z, double* residuals, double* jacobian) const override {
    if (jacobian == nullptr) {
      for (int k = 0; k < num_local_; ++k) x_double_[k] = z[local_columns[k]];
      return Call(x_double_.data(), residuals);
    }
    // (A block whose residuals depend on nothing has no group: one pass for the values.)
    for (int first = 0; first == 0 || first < num_groups_; first += kStride) {
      for (int k = 0; k < num_local_; ++k) {
        x_[k] = JetT(z[local_columns[k]]);
        const int slot = group_[k] - first;
        if (slot >= 0 && slot < kStride) x_[k].v[slot] = 1.0;
      }
      if (!Call(x_.data(), r_.data())) return false;
      if (first == 0) {
        for (int i = 0; i < num_residuals_; ++i) residuals[i] = r_[i].a;
      }
      Gather(first, jacobian);
    }
    return true;
  }

 private:
  // The entries of the groups first .. first + kStride - 1 from r_'s derivative slots.
  void Gather(int first, double* jacobian) const {
    if (pattern_starts.empty()) {
      const int end = std::min(first + kStride, num_local_);
      for (int i = 0; i < num_residuals_; ++i) {
        for (int k = first; k < end; ++k) jacobian[i * num_local_ + k] = r_[i].v[k - first];
      }
      return;
    }
    for (int i = 0; i < num_residuals_; ++i) {
      for (int e = pattern_starts[i]; e < pattern_starts[i + 1]; ++e) {
        const int slot = group_[pattern_columns[e]] - first;
        if (slot >= 0 && slot < kStride) jacobian[e] = r_[i].v[slot];
      }
    }
  }

  template <class T>
  bool Call(const T* x, T* r) const {
    std::vector<const T*>& blocks = Pointers<T>();
    blocks.resize(block_sizes_.size());
    int offset = 0;
    for (size_t b = 0; b < block_sizes_.size(); ++b) {
      blocks[b] = x + offset;
      offset += block_sizes_[b];
    }
    return functor_(blocks.data(), r);
  }
  template <class T>
  std::vector<const T*>& Pointers() const {
    if constexpr (std::is_same_v<T, double>) {
      return double_pointers_;
    } else {
      return jet_pointers_;
    }
  }

  Functor functor_;
  std::vector<int> block_sizes_;
  int num_residuals_ = 0, num_local_ = 0, num_groups_ = 0;
  std::vector<int> group_;
  mutable std::vector<JetT> x_, r_;
  mutable std::vector<double> x_double_;
  mutable std::vector<const double*> double_pointers_;
  mutable std::vector<const JetT*> jet_pointers_;
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
// Parameter blocks (AddParameterBlock) are values a functor reads like a variable block's but
// that are no unknowns: they get no rows, and their entries of the Jacobian, dF/dtheta, come
// from the same Jets and are returned by EvaluateParameterJacobian() — the derivatives that the
// sensitivity of a solution with respect to them needs (solvers/sensitivity/mcp_sensitivity.h).
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
    AddBlock(std::move(block), paired_blocks, blocks);
  }

  // A residual block whose sizes are known at run time: it reads the variable blocks `blocks`
  // (x[b] points at block b's values, of the sizes they were added with) and writes one
  // residual per variable of `paired_blocks`, in order. The functor is as above. `pattern`
  // (optional) lists, for each residual, the local variables it depends on (positions in the
  // concatenation of the blocks read, any order); the Jacobian then holds only those entries
  // and is computed with one derivative slot per group of columns that share no residual (a
  // banded block of 1000 variables: 3 groups, one functor evaluation with 8-wide Jets). Empty
  // pattern: every residual depends on every variable (a dense block: one evaluation per 8
  // variables). A residual that depends on a variable its pattern leaves out gets a wrong
  // Jacobian, without notice: check a new pattern with CheckJacobian() (jacobian_check.h).
  template <class Functor>
  void AddDynamicResidualBlock(Functor functor, const std::vector<int>& paired_blocks,
                               const std::vector<int>& blocks,
                               const std::vector<std::vector<int>>& pattern = {}) {
    std::vector<int> sizes;
    for (int id : blocks) {
      CheckBlock(id, -1, "read");
      sizes.push_back(block_sizes_[id]);
    }
    const int num_residuals = PairedSize(paired_blocks);
    auto block = std::make_unique<internal::DynamicAutoDiffResidualBlock<Functor>>(
        std::move(functor), std::move(sizes), num_residuals);
    SetPattern(pattern, block->num_local_variables(), block.get());
    block->Prepare();
    AddBlock(std::move(block), paired_blocks, blocks);
  }

  // Adds a block of parameters with these (finite) values; returns its id, in the same
  // numbering as variable blocks: residual blocks read it by that id, and never pair with it.
  int AddParameterBlock(const Eigen::VectorXd& values);
  // Sets a parameter block's values (finite, of its size): the next Evaluate() reads them.
  void SetParameterBlock(int block, const Eigen::VectorXd& values);
  bool is_parameter_block(int block) const { return is_parameter_.at(block) != 0; }
  // All parameters, block after block in the order they were added.
  const Eigen::VectorXd& parameters() const { return parameters_; }
  int num_parameters() const { return static_cast<int>(parameters_.size()); }

  // Blocks of either kind; a variable block's offset is its first variable's index in z, a
  // parameter block's its first entry's in parameters().
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
  // The start values of the variable blocks: where a solve begins when z is empty.
  void DefaultStart(Eigen::VectorXd* z) const override { *z = start_; }
  // dF/dtheta at z (size() x num_parameters(), column-major, fixed pattern). Returns false as
  // Evaluate() does.
  bool EvaluateParameterJacobian(const Eigen::VectorXd& z, Eigen::SparseMatrix<double>* J) const;

 private:
  // expected_size -1: any size.
  void CheckBlock(int block, int expected_size, const char* role) const;
  void CheckPairing(const std::vector<int>& paired_blocks, int num_residuals) const;
  int PairedSize(const std::vector<int>& paired_blocks) const;
  static void SetPattern(const std::vector<std::vector<int>>& pattern, int num_local,
                         internal::ResidualBlockBase* block);
  void AddBlock(std::unique_ptr<internal::ResidualBlockBase> block,
                const std::vector<int>& paired_blocks, const std::vector<int>& blocks);
  void BuildPattern() const;

  // Evaluates every residual block at z (and the parameters) into F, scattering the
  // Jacobian's entries into J's values (columns of z) and P's (columns of the parameters); a
  // null J or P skips its entries.
  bool EvaluateBlocks(const Eigen::VectorXd& z, Eigen::VectorXd* F, double* J, double* P) const;
  // The vector the residual blocks read: z followed by the parameters (z itself without any).
  const Eigen::VectorXd& Extended(const Eigen::VectorXd& z) const;

  std::string name_ = "builder";
  std::vector<int> offsets_, block_sizes_;
  std::vector<char> is_parameter_;  // per block
  Eigen::VectorXd lower_, upper_, start_, parameters_;
  std::vector<std::unique_ptr<internal::ResidualBlockBase>> residual_blocks_;
  mutable bool pattern_ready_ = false;
  mutable Eigen::SparseMatrix<double> pattern_, parameter_pattern_;
  mutable Eigen::VectorXd extended_;
  mutable std::vector<double> local_residuals_, local_jacobian_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_PROBLEM_BUILDER_H_
