#include "readers/matrix_market.h"

#include <doctest/doctest.h>

#include <limits>

#include "readers/siconos_reader.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::TemporaryFile;

std::string ErrorOf(const std::string& contents) {
  TemporaryFile file("bad.mtx", contents);
  try {
    ReadMatrixMarket(file.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("Matrix Market coordinate files round-trip and symmetric ones are expanded") {
  Eigen::SparseMatrix<double> M(3, 3);
  M.insert(0, 0) = 2;
  M.insert(2, 1) = -1.25;
  M.insert(1, 2) = 1e-17;
  TemporaryFile file("roundtrip.mtx", "");
  WriteMatrixMarket(file.path(), M);
  CHECK((Eigen::MatrixXd(ReadMatrixMarket(file.path())) - Eigen::MatrixXd(M)).norm() == 0.0);

  TemporaryFile sym("sym.mtx",
                    "%%MatrixMarket matrix coordinate real symmetric\n% comment\n2 2 2\n1 1 4\n"
                    "2 1 1\n");
  const Eigen::MatrixXd S = ReadMatrixMarket(sym.path());
  CHECK(S(0, 1) == 1.0);
  CHECK(S(1, 0) == 1.0);
  TemporaryFile array("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  const Eigen::MatrixXd A = ReadMatrixMarket(array.path());
  CHECK(A(1, 0) == 2.0);  // column-major
  CHECK(A(0, 1) == 3.0);
}

TEST_CASE("malformed Matrix Market files are reported") {
  CHECK(ErrorOf("").find("empty file") != std::string::npos);
  CHECK(ErrorOf("%%MatrixMarket vector coordinate real general\n").find("header") !=
        std::string::npos);
  CHECK(ErrorOf("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n").find("field") !=
        std::string::npos);
  CHECK(ErrorOf("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
            .find("row index in [1, 2], found 3") != std::string::npos);
  CHECK(ErrorOf("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n").find("only") !=
        std::string::npos);
}

TEST_CASE("vector files and .mtx problems") {
  TemporaryFile q("q.txt", "# q\n-1 2\n-inf\n");
  const Eigen::VectorXd v = ReadVectorFile(q.path());
  REQUIRE(v.size() == 3);
  CHECK(v[2] == -std::numeric_limits<double>::infinity());
  TemporaryFile bad("badq.txt", "1 2 x\n");
  CHECK_THROWS_AS(ReadVectorFile(bad.path()), InputError);

  TemporaryFile matrix("problem.mtx",
                       "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 2\n");
  TemporaryFile rhs("problem_q.txt", "-2\n4\n");
  const LinearComplementarityProblem p = ReadProblemFile(matrix.path(), rhs.path());
  CHECK(p.size() == 2);
  CHECK_THROWS_AS(ReadProblemFile(matrix.path()), InputError);
  TemporaryFile short_q("short_q.txt", "1\n");
  CHECK_THROWS_AS(ReadProblemFile(matrix.path(), short_q.path()), std::invalid_argument);
}

}  // namespace
}  // namespace ncpkit
