// SuiteSparse allocates and frees its factors on every numeric factorization. A factorization
// object that keeps its pattern can hand those blocks back to itself instead: while a
// BlockCache::Scope lives on a thread, SuiteSparse's memory calls on that thread are served
// from the cache (blocks of the sizes freed before), so that a time-stepper's factorizations
// reach a steady state without heap allocations. Blocks come in size classes, four per power
// of two (at most a quarter larger than asked), so that a block serves the next factorization's
// request of a slightly different size, and a realloc that its block still holds keeps it: KLU
// grows its LU storage by reallocations whose sizes follow the fill of each matrix. Elsewhere
// SuiteSparse allocates as before.
#ifndef NCPKIT_SOLVERS_LINALG_INTERNAL_SUITESPARSE_MEMORY_H_
#define NCPKIT_SOLVERS_LINALG_INTERNAL_SUITESPARSE_MEMORY_H_

#include <array>
#include <cstddef>

namespace ncpkit::internal {

class SuiteSparseBlockCache {
 public:
  SuiteSparseBlockCache();
  ~SuiteSparseBlockCache();
  SuiteSparseBlockCache(const SuiteSparseBlockCache&) = delete;
  SuiteSparseBlockCache& operator=(const SuiteSparseBlockCache&) = delete;

  // Routes this thread's SuiteSparse memory calls to `cache` while it lives. Every block a
  // cache hands out must be freed in one of its scopes (every call into SuiteSparse that may
  // allocate or free the cached objects runs in one).
  class Scope {
   public:
    explicit Scope(SuiteSparseBlockCache* cache);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    SuiteSparseBlockCache* previous_;
  };

  // A block of at least `bytes` (ClassBytes(bytes)): a freed one of that class, or a fresh one.
  void* Allocate(std::size_t bytes);
  void Free(void* block);

  // The size of the blocks that serve a request of `bytes`: the least of 64 and the four
  // classes of each power of two above (5/8, 6/8, 7/8 and 8/8 of it) that holds them.
  static std::size_t ClassBytes(std::size_t bytes);
  // How many blocks this cache has taken from the C library.
  int fresh_blocks() const { return fresh_blocks_; }

 private:
  struct Block {
    std::size_t capacity = 0;  // its class
    void* memory = nullptr;    // the user part (after the header)
  };
  static constexpr int kMaxFree = 64;
  std::array<Block, kMaxFree> free_;
  int num_free_ = 0;
  int fresh_blocks_ = 0;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_LINALG_INTERNAL_SUITESPARSE_MEMORY_H_
