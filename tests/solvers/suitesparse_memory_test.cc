#include "solvers/linalg/internal/suitesparse_memory.h"

#include <SuiteSparse_config.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

namespace ncpkit::internal {
namespace {

TEST_CASE("suitesparse memory: size classes hold the request, at most a quarter more") {
  for (std::size_t bytes = 0; bytes < 70000; bytes += 1 + bytes / 50) {
    const std::size_t c = SuiteSparseBlockCache::ClassBytes(bytes);
    CAPTURE(bytes);
    CHECK(c >= bytes);
    CHECK(c <= std::max<std::size_t>(64, bytes + bytes / 4));
    CHECK(SuiteSparseBlockCache::ClassBytes(c) == c);  // a class is its own class
    CHECK(SuiteSparseBlockCache::ClassBytes(bytes + 1) >= c);
  }
  CHECK(SuiteSparseBlockCache::ClassBytes(1000) == 1024);
  CHECK(SuiteSparseBlockCache::ClassBytes(1025) == 1280);
  CHECK(SuiteSparseBlockCache::ClassBytes(SIZE_MAX / 2) == SIZE_MAX / 2);
}

TEST_CASE("suitesparse memory: SuiteSparse's blocks are reused across sizes of one class") {
  SuiteSparseBlockCache cache;
  const SuiteSparseBlockCache::Scope scope(&cache);
  auto* a = static_cast<unsigned char*>(SuiteSparse_config.malloc_func(100000));
  REQUIRE(a != nullptr);
  for (int i = 0; i < 100000; ++i) a[i] = static_cast<unsigned char>(i);
  CHECK(cache.fresh_blocks() == 1);

  // Grown within its block (114688 bytes): the same block, its contents kept.
  auto* b = static_cast<unsigned char*>(SuiteSparse_config.realloc_func(a, 110000));
  CHECK(b == a);
  // Grown past it: a new block with the old contents.
  auto* c = static_cast<unsigned char*>(SuiteSparse_config.realloc_func(b, 120000));
  REQUIRE(c != nullptr);
  CHECK(c != b);
  bool same = true;
  for (int i = 0; i < 100000; ++i) same = same && c[i] == static_cast<unsigned char>(i);
  CHECK(same);
  CHECK(cache.fresh_blocks() == 2);

  // The block freed by the realloc serves a request of another size in its class.
  void* d = SuiteSparse_config.malloc_func(99000);
  CHECK(d == a);
  SuiteSparse_config.free_func(d);
  // calloc from a freed block still zeroes it.
  auto* e = static_cast<unsigned char*>(SuiteSparse_config.calloc_func(1000, 105));
  CHECK(static_cast<void*>(e) == a);
  bool zero = true;
  for (int i = 0; i < 105000; ++i) zero = zero && e[i] == 0;
  CHECK(zero);
  CHECK(cache.fresh_blocks() == 2);
  SuiteSparse_config.free_func(e);

  // Shrunk to less than half its block's need: moved to a block of the smaller class.
  void* f = SuiteSparse_config.realloc_func(c, 1000);
  CHECK(f != c);
  CHECK(cache.fresh_blocks() == 3);
  SuiteSparse_config.free_func(f);
}

TEST_CASE("suitesparse memory: outside a scope SuiteSparse uses the C library") {
  SuiteSparseBlockCache cache;
  void* p = SuiteSparse_config.malloc_func(1000);
  REQUIRE(p != nullptr);
  SuiteSparse_config.free_func(p);
  CHECK(cache.fresh_blocks() == 0);
}

}  // namespace
}  // namespace ncpkit::internal
