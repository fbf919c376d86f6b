// One libFuzzer program per target: NCPKIT_FUZZ_TARGET names the function (fuzz_targets.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncpkit::fuzz::NCPKIT_FUZZ_TARGET(data, size);
  return 0;
}
