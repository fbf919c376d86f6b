#include "solvers/linalg/internal/suitesparse_memory.h"

#include <SuiteSparse_config.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ncpkit::internal {
namespace {

// Each cached block starts with the size asked for and the size it has, so that free and
// realloc know them.
struct alignas(std::max_align_t) Header {
  std::size_t bytes;
  std::size_t capacity;
};

thread_local SuiteSparseBlockCache* t_cache = nullptr;

// SuiteSparse's functions before the hooks were installed (normally the C library's).
void* (*g_malloc)(std::size_t) = nullptr;
void* (*g_calloc)(std::size_t, std::size_t) = nullptr;
void* (*g_realloc)(void*, std::size_t) = nullptr;
void (*g_free)(void*) = nullptr;

Header* HeaderOf(void* p) { return static_cast<Header*>(p) - 1; }

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
  // KLU grows its LU storage a little at a time: a block that still holds the new size is
  // kept, unless it would be more than twice what that size needs.
  if (p != nullptr && bytes <= HeaderOf(p)->capacity &&
      HeaderOf(p)->capacity / 2 <= SuiteSparseBlockCache::ClassBytes(bytes)) {
    HeaderOf(p)->bytes = bytes;
    return p;
  }
  void* fresh = t_cache->Allocate(bytes);
  if (fresh == nullptr) return nullptr;  // p stays valid, as realloc promises
  if (p != nullptr) {
    const std::size_t old = HeaderOf(p)->bytes;
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
  for (int k = 0; k < num_free_; ++k) g_free(HeaderOf(free_[k].memory));
}

std::size_t SuiteSparseBlockCache::ClassBytes(std::size_t bytes) {
  constexpr std::size_t kSmallest = 64;
  if (bytes <= kSmallest) return kSmallest;
  if (bytes > SIZE_MAX / 4) return bytes;  // no class: malloc will refuse it anyway
  std::size_t top = kSmallest;
  while (top < bytes) top <<= 1;
  const std::size_t half = top / 2, eighth = top / 8;
  return half + (bytes - half + eighth - 1) / eighth * eighth;
}

SuiteSparseBlockCache::Scope::Scope(SuiteSparseBlockCache* cache) : previous_(t_cache) {
  t_cache = cache;
}

SuiteSparseBlockCache::Scope::~Scope() { t_cache = previous_; }

void* SuiteSparseBlockCache::Allocate(std::size_t bytes) {
  const std::size_t capacity = ClassBytes(bytes);
  for (int k = num_free_ - 1; k >= 0; --k) {
    if (free_[k].capacity != capacity) continue;
    void* memory = free_[k].memory;
    free_[k] = free_[--num_free_];
    HeaderOf(memory)->bytes = bytes;
    return memory;
  }
  if (capacity > SIZE_MAX - sizeof(Header)) return nullptr;
  auto* header = static_cast<Header*>(g_malloc(sizeof(Header) + capacity));
  if (header == nullptr) return nullptr;
  ++fresh_blocks_;
  header->bytes = bytes;
  header->capacity = capacity;
  return header + 1;
}

void SuiteSparseBlockCache::Free(void* block) {
  if (num_free_ == kMaxFree) {
    g_free(HeaderOf(block));
    return;
  }
  free_[num_free_++] = Block{HeaderOf(block)->capacity, block};
}

}  // namespace ncpkit::internal
