// Counting heap allocations, for the tests and benchmarks that check a hot path allocates
// nothing. Linking allocation_counter.cc replaces the global operator new (and, where no
// sanitizer owns the allocator, malloc and its relatives, which Eigen uses) with counting
// versions that forward to the C library.
#ifndef NCPKIT_TESTS_ALLOCATION_COUNTER_H_
#define NCPKIT_TESTS_ALLOCATION_COUNTER_H_

#include <cstdint>

namespace ncpkit::testing {

// Allocations in this process so far: operator new, and malloc / calloc / realloc /
// posix_memalign / aligned_alloc when CountsMalloc().
int64_t AllocationCount();
// False in sanitizer builds, where the sanitizer's allocator must stay in charge of malloc:
// there only operator new is counted.
bool CountsMalloc();
// True in AddressSanitizer builds, which run long solver loops tens of times slower: tests
// that step a scene for long shorten the run there (the Release run checks the full length).
bool SanitizedBuild();

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_ALLOCATION_COUNTER_H_
