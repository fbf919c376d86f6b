#include "tests/allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define NCPKIT_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NCPKIT_SANITIZED_ALLOCATOR 1
#endif

namespace {

std::atomic<int64_t> g_allocations{0};

void Count() { g_allocations.fetch_add(1, std::memory_order_relaxed); }

#ifdef NCPKIT_SANITIZED_ALLOCATOR
void* Allocate(std::size_t size) {
  Count();
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
#endif

}  // namespace

namespace ncpkit::testing {

int64_t AllocationCount() { return g_allocations.load(std::memory_order_relaxed); }

bool CountsMalloc() {
#ifdef NCPKIT_SANITIZED_ALLOCATOR
  return false;
#else
  return true;
#endif
}

bool SanitizedBuild() { return !CountsMalloc(); }

}  // namespace ncpkit::testing

// With malloc counted below, operator new counts through it once.
#ifdef NCPKIT_SANITIZED_ALLOCATOR
void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
#else
void* operator new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
#endif
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return operator new(size, std::nothrow);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#ifndef NCPKIT_SANITIZED_ALLOCATOR
// glibc's own entry points, to which the counting versions forward (glibc lets a program
// replace malloc and its relatives this way).
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);

void* malloc(std::size_t size) {
  Count();
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  Count();
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) {
  Count();
  return __libc_realloc(p, size);
}
int posix_memalign(void** p, std::size_t alignment, std::size_t size) {
  Count();
  *p = __libc_memalign(alignment, size);
  return *p == nullptr ? 12 /* ENOMEM */ : 0;
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
void* memalign(std::size_t alignment, std::size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
}
#endif
