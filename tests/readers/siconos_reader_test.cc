#include "readers/siconos_reader.h"

#include <doctest/doctest.h>

#include <limits>

#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::SharedData;
using testing::TemporaryFile;

std::string InputErrorOf(const std::string& name, const std::string& contents, bool mlcp = false) {
  TemporaryFile file(name, contents);
  try {
    if (mlcp) {
      ReadSiconosMlcp(file.path());
    } else {
      ReadSiconosLcp(file.path());
    }
  } catch (const InputError& e) {  // bad files and invalid problems alike
    return e.what();
  }
  return "";
}

TEST_CASE("dense Siconos matrices are column-major") {
  const LinearComplementarityProblem p = ReadSiconosLcp(SharedData("lcp/lcp_CPS_2.dat"));
  Eigen::MatrixXd expected(3, 3);
  expected << 0, -1, 2, 2, 0, -2, -1, 1, 0;
  CHECK((p.dense_matrix() - expected).norm() == 0.0);
  CHECK(p.q()[0] == -3);
  CHECK(p.q()[1] == 6);
  CHECK(p.name == "lcp_CPS_2.dat");
}

TEST_CASE("sparse-block files equal their dense twins") {
  for (const char* base : {"lcp_ortiz", "lcp_deudeu", "lcp_trivial"}) {
    CAPTURE(base);
    const auto dense = ReadSiconosLcp(SharedData(std::string("lcp/") + base + ".dat"));
    const auto block = ReadSiconosLcp(SharedData(std::string("lcp/") + base + "_block.dat"));
    CHECK(dense.has_dense_matrix());
    CHECK_FALSE(block.has_dense_matrix());
    CHECK((dense.dense_matrix() - block.dense_matrix()).norm() == 0.0);
    CHECK((dense.q() - block.q()).norm() == 0.0);
  }
}

TEST_CASE("MLCP files: equality rows become free variables") {
  const auto p = ReadSiconosMlcp(SharedData("mlcp/Buck2_mlcp.dat"));
  CHECK(p.size() == 32);
  CHECK(p.NumFreeVariables() == 20);
  CHECK(p.lower()[19] == -std::numeric_limits<double>::infinity());
  CHECK(p.lower()[20] == 0.0);
}

TEST_CASE("a rectangular MLCP is rejected with its sizes") {
  try {
    ReadSiconosMlcp(SharedData("mlcp/Rectangular_mlcp.dat"));
    FAIL("expected a InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("M is 3 x 2 but n + m = 2") != std::string::npos);
  }
}

TEST_CASE("malformed LCP files give a message with the line and what was expected") {
  CHECK(InputErrorOf("missing.dat", "").find("expected problem size n") != std::string::npos);
  CHECK(InputErrorOf("word.dat", "2\n0\n2\n2\n2 2\n1 0 zero 1\n1 1\n")
            .find(":6: expected M(0,1) (a number), found 'zero'") != std::string::npos);
  CHECK(InputErrorOf("short.dat", "2\n0\n2\n2\n2 2\n1 0 0 1\n1\n")
            .find("expected q(1) (a number), found end of file") != std::string::npos);
  CHECK(InputErrorOf("storage.dat", "2\n7\n2\n2\n").find("storage type") != std::string::npos);
  CHECK(InputErrorOf("size.dat", "-3\n").find("problem size n in [1,") != std::string::npos);
  // A size the file cannot hold is refused before the matrix header is read.
  CHECK(InputErrorOf("huge.dat", "2000000\n0\n2000000\n2000000\n2000000 2000000\n1\n")
            .find("an LCP of size n needs 2000000 values") != std::string::npos);
  CHECK(InputErrorOf("mismatch.dat", "2\n0\n3\n3\n3 3\n")
            .find("M is 3 x 3 but the LCP has size n = 2") != std::string::npos);
  CHECK(InputErrorOf("header.dat", "2\n0\n2\n2\n2 3\n").find("then 2 x 3") != std::string::npos);
  // NaN reads as a number; the problem's own validation rejects it.
  CHECK(InputErrorOf("nan.dat", "1\n0\n1\n1\n1 1\nnan\n-1\n")
            .find("invalid linear complementarity problem") != std::string::npos);
  CHECK(InputErrorOf("blockcol.dat", "2 1 2 2\n1\n1 1\n2\n2\n2 1\n0 1\n5\n0 1 0 0 1\n-1 -1\n")
            .find("block column index") != std::string::npos);
  CHECK(InputErrorOf("mlcp_kind.dat", "1\n1\n1\n1\n0 1 2\n0 3\n", true).find("block kind") !=
        std::string::npos);
  try {
    ReadSiconosLcp("/nonexistent/lcp.dat");
    FAIL("expected a InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cannot open file") != std::string::npos);
  }
}

}  // namespace
}  // namespace ncpkit
