#include "solvers/linalg/internal/suitesparse_memory.h"

#include <SuiteSparse_config.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ncpkit::internal {
namespace {

// Each cached block starts with its size, so that free and realloc know it.
struct alignas(std::max_align_t) Header {
  std::size_t bytes;
};

thread_local SuiteSparseBlockCache* t_cache = nullptr;

// SuiteSparse's functions before the hooks were installed (normally the C library's).
void* (*g_malloc)(std::size_t) = nullptr;
void* (*g_calloc)(std::size_t, std::size_t) = nullptr;
void* (*g_realloc)(void*, std::size_t) = nullptr;
void (*g_free)(void*) = nullptr;

std::size_t BlockBytes(void* p) { return (static_cast<Header*>(p) - 1)->bytes; }

void* HookMalloc(std::size_t bytes) {
  return t_cache != nullptr ? t_cache->Allocate(bytes) : g_malloc(bytes);
}

void* HookCalloc(std::size_t count, std::size_t size) {
  if (t_cache == nullptr) return g_calloc(count, size);
  if (size != 0 && count > SIZE_MAX / size) return nullptr;
  void* p = t_cache->Allocate(count * size);
  if (p != nullptr) std::memset(p, 0, count * size);
  return p;
}

void* HookRealloc(void* p, std::size_t bytes) {
  if (t_cache == nullptr) return g_realloc(p, bytes);
  void* fresh = t_cache->Allocate(bytes);
  if (fresh == nullptr) return nullptr;  // p stays valid, as realloc promises
  if (p != nullptr) {
    const std::size_t old = BlockBytes(p);
    std::memcpy(fresh, p, old < bytes ? old : bytes);
    t_cache->Free(p);
  }
  return fresh;
}

void HookFree(void* p) {
  if (t_cache == nullptr) {
    g_free(p);
  } else if (p != nullptr) {
    t_cache->Free(p);
  }
}

void InstallHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_malloc = SuiteSparse_config.malloc_func;
    g_calloc = SuiteSparse_config.calloc_func;
    g_realloc = SuiteSparse_config.realloc_func;
    g_free = SuiteSparse_config.free_func;
    SuiteSparse_config.malloc_func = &HookMalloc;
    SuiteSparse_config.calloc_func = &HookCalloc;
    SuiteSparse_config.realloc_func = &HookRealloc;
    SuiteSparse_config.free_func = &HookFree;
  });
}

}  // namespace

SuiteSparseBlockCache::SuiteSparseBlockCache() { InstallHooks(); }

SuiteSparseBlockCache::~SuiteSparseBlockCache() {
  for (int k = 0; k < num_free_; ++k) g_free(static_cast<Header*>(free_[k].memory) - 1);
}

SuiteSparseBlockCache::Scope::Scope(SuiteSparseBlockCache* cache) : previous_(t_cache) {
  t_cache = cache;
}

SuiteSparseBlockCache::Scope::~Scope() { t_cache = previous_; }

void* SuiteSparseBlockCache::Allocate(std::size_t bytes) {
  for (int k = num_free_ - 1; k >= 0; --k) {
    if (free_[k].bytes != bytes) continue;
    void* memory = free_[k].memory;
    free_[k] = free_[--num_free_];
    return memory;
  }
  if (bytes > SIZE_MAX - sizeof(Header)) return nullptr;
  auto* header = static_cast<Header*>(g_malloc(sizeof(Header) + bytes));
  if (header == nullptr) return nullptr;
  header->bytes = bytes;
  return header + 1;
}

void SuiteSparseBlockCache::Free(void* block) {
  if (num_free_ == kMaxFree) {
    g_free(static_cast<Header*>(block) - 1);
    return;
  }
  free_[num_free_++] = Block{BlockBytes(block), block};
}

}  // namespace ncpkit::internal
