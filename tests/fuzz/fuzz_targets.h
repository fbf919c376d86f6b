// Fuzz targets: every reader and parser of ncpkit, each followed by a bounded solve or a few
// steps. Built as libFuzzer programs (tools/fuzz.sh) and run on the kept crash inputs by the
// ordinary tests (tests/fuzz/regressions_test.cc). A target returns normally when the input is
// rejected with std::invalid_argument (the readers' contract) or processed; anything else (a
// crash, another exception, a solver claiming convergence it did not reach) is a finding.
#ifndef NCPKIT_TESTS_FUZZ_FUZZ_TARGETS_H_
#define NCPKIT_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ncpkit::fuzz {

using Target = void (*)(const uint8_t* data, size_t size);

struct NamedTarget {
  const char* name;  // also the folder of its seeds and kept inputs
  Target run;
};

void SiconosLcp(const uint8_t* data, size_t size);
void SiconosMlcp(const uint8_t* data, size_t size);
void SiconosFrictionContact(const uint8_t* data, size_t size);  // then every friction solver
void MatrixMarket(const uint8_t* data, size_t size);
void VectorFile(const uint8_t* data, size_t size);
void SceneFile(const uint8_t* data, size_t size);      // any scene file, stepped a few steps
void TrajectoryCsv(const uint8_t* data, size_t size);  // a trajectory CSV into a viewer page
void MeshFile(const uint8_t* data, size_t size);       // an OBJ or STL file, then its hull
void MjcfFile(const uint8_t* data, size_t size);       // an MJCF model, then a few steps

const std::vector<NamedTarget>& Targets();

}  // namespace ncpkit::fuzz

#endif  // NCPKIT_TESTS_FUZZ_FUZZ_TARGETS_H_
