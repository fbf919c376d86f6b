// FCLib HDF5 files and Siconos FC3D files: the shared problems, every storage of W, global
// problems reduced to local ones, and malformed files refused with the dataset named.
#include "readers/fclib_reader.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "fixtures/fclib_problems.h"
#include "readers/siconos_reader.h"
#include "solvers/base/input_error.h"
#include "tests/readers/fclib_writer.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::Hdf5Writer;

std::string TempPath(const std::string& name) { return testing::TemporaryPath("fclib_" + name); }

// A random local problem with n_c contacts: W = J J^T + 0.1 I, sparse in 3 x 3 blocks.
struct RandomLocal {
  Eigen::SparseMatrix<double> W;
  Eigen::VectorXd q, mu;
};
RandomLocal MakeRandomLocal(int nc, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3 * nc, 6);
  for (int i = 0; i < 3 * nc; ++i)
    for (int j = 0; j < 6; ++j) J(i, j) = normal(rng);
  RandomLocal p;
  p.W = (J * J.transpose() + 0.1 * Eigen::MatrixXd::Identity(3 * nc, 3 * nc)).sparseView();
  p.q = Eigen::VectorXd::NullaryExpr(3 * nc, [&]() { return normal(rng); });
  p.mu = Eigen::VectorXd::Constant(nc, 0.4);
  return p;
}

TEST_CASE("every shared FCLib problem is read") {
  for (const SharedFclibProblem& shared : SharedFclibProblems()) {
    CAPTURE(shared.path);
    const FclibFile file = ReadFclibFile(testing::SharedData("fclib/" + shared.path));
    CHECK(file.problem.num_contacts() == shared.contacts);
    CHECK(file.problem.size() == 3 * shared.contacts);
    CHECK(file.problem.W().nonZeros() > 0);
    CHECK(!file.from_global);
  }
}

TEST_CASE("triplet, compressed-column and compressed-row storage give the same problem") {
  const RandomLocal p = MakeRandomLocal(4, 1);
  for (int storage : {0, -1, -2}) {
    CAPTURE(storage);
    const std::string path = TempPath("storage.hdf5");
    {
      Hdf5Writer out(path);
      out.Local(p.W, p.q, p.mu, storage);
    }
    const FclibFile file = ReadFclibFile(path);
    CHECK((Eigen::MatrixXd(file.problem.W_columns()) - Eigen::MatrixXd(p.W)).norm() == 0.0);
    CHECK((file.problem.q() - p.q).norm() == 0.0);
    CHECK((file.problem.mu() - p.mu).norm() == 0.0);
    std::remove(path.c_str());
  }
  SUBCASE("duplicate triplets are summed") {
    const std::string path = TempPath("duplicates.hdf5");
    {
      Hdf5Writer out(path);
      out.Local(p.W, p.q, p.mu, 0);
      std::vector<int> p_cols, i_rows;
      std::vector<double> x;
      const Eigen::MatrixXd dense(p.W);
      for (int j = 0; j < 12; ++j)
        for (int i = 0; i < 12; ++i) {
          // every entry as two halves
          for (int half = 0; half < 2; ++half) {
            p_cols.push_back(j), i_rows.push_back(i), x.push_back(0.5 * dense(i, j));
          }
        }
      out.Int("/fclib_local/W/nz", static_cast<int>(x.size()));
      out.Int("/fclib_local/W/nzmax", static_cast<int>(x.size()));
      out.Ints("/fclib_local/W/p", p_cols);
      out.Ints("/fclib_local/W/i", i_rows);
      out.Doubles("/fclib_local/W/x", x);
    }
    const FclibFile file = ReadFclibFile(path);
    CHECK((Eigen::MatrixXd(file.problem.W_columns()) - Eigen::MatrixXd(p.W)).norm() <= 1e-14);
    std::remove(path.c_str());
  }
}

TEST_CASE("a global problem is reduced to W = H^T M^-1 H, q = H^T M^-1 f + w") {
  std::mt19937 rng(2);
  std::normal_distribution<double> normal;
  const int ndof = 9, nc = 2;
  Eigen::MatrixXd A(ndof, ndof), H(ndof, 3 * nc);
  for (int i = 0; i < ndof; ++i) {
    for (int j = 0; j < ndof; ++j) A(i, j) = normal(rng);
    for (int j = 0; j < 3 * nc; ++j) H(i, j) = normal(rng);
  }
  const Eigen::MatrixXd M = A * A.transpose() + Eigen::MatrixXd::Identity(ndof, ndof);
  const Eigen::VectorXd f = Eigen::VectorXd::NullaryExpr(ndof, [&]() { return normal(rng); });
  const Eigen::VectorXd w = Eigen::VectorXd::NullaryExpr(3 * nc, [&]() { return normal(rng); });
  const Eigen::MatrixXd W = H.transpose() * M.ldlt().solve(H);
  const Eigen::VectorXd q = H.transpose() * M.ldlt().solve(f) + w;
  // M whole, and M as its upper triangle only.
  for (bool upper_only : {false, true}) {
    CAPTURE(upper_only);
    const std::string path = TempPath("global.hdf5");
    {
      Hdf5Writer out(path);
      out.Int("/fclib_global/spacedim", 3);
      const Eigen::MatrixXd stored =
          upper_only ? Eigen::MatrixXd(M.triangularView<Eigen::Upper>()) : M;
      out.Matrix("/fclib_global/M", stored.sparseView(), 0);
      out.Matrix("/fclib_global/H", H.sparseView(), 0);
      out.Vector("/fclib_global/vectors/f", f);
      out.Vector("/fclib_global/vectors/w", w);
      out.Vector("/fclib_global/vectors/mu", Eigen::Vector2d(0.3, 0.5));
    }
    const FclibFile file = ReadFclibFile(path);
    CHECK(file.from_global);
    CHECK(file.num_degrees_of_freedom == ndof);
    CHECK((Eigen::MatrixXd(file.problem.W_columns()) - W).norm() <= 1e-12 * W.norm());
    CHECK((file.problem.q() - q).norm() <= 1e-12 * q.norm());
    std::remove(path.c_str());
  }
}

// Writes a valid local problem, spoils it with `spoil`, and checks that reading it throws an
// InputError naming `dataset`.
template <class Spoil>
void CheckRefused(const std::string& name, Spoil spoil, const std::string& dataset,
                  const std::string& what) {
  const RandomLocal p = MakeRandomLocal(3, 4);
  const std::string path = TempPath(name + ".hdf5");
  {
    Hdf5Writer out(path);
    out.Local(p.W, p.q, p.mu, -2);
    spoil(out, p);
  }
  CAPTURE(name);
  CHECK_THROWS_WITH_AS(ReadFclibFile(path), doctest::Contains(dataset.c_str()), InputError);
  CHECK_THROWS_WITH_AS(ReadFclibFile(path), doctest::Contains(what.c_str()), InputError);
  std::remove(path.c_str());
}

TEST_CASE("malformed FCLib files are refused with the dataset named") {
  CheckRefused(
      "missing_group", [](Hdf5Writer& out, const RandomLocal&) { out.Delete("/fclib_local"); },
      "/fclib_local", "is missing");
  CheckRefused(
      "missing_q",
      [](Hdf5Writer& out, const RandomLocal&) { out.Delete("/fclib_local/vectors/q"); },
      "/fclib_local/vectors/q", "is missing");
  CheckRefused(
      "short_q",
      [](Hdf5Writer& out, const RandomLocal& p) {
        out.Vector("/fclib_local/vectors/q", p.q.head(8));
      },
      "/fclib_local/vectors/q", "has 8 entries, expected 9");
  CheckRefused(
      "long_mu",
      [](Hdf5Writer& out, const RandomLocal&) {
        out.Vector("/fclib_local/vectors/mu", Eigen::Vector4d(0.1, 0.2, 0.3, 0.4));
      },
      "/fclib_local/vectors/mu", "has 4 entries");
  CheckRefused(
      "index_out_of_range",
      [](Hdf5Writer& out, const RandomLocal& p) {
        Eigen::SparseMatrix<double, Eigen::RowMajor> R = p.W;
        R.makeCompressed();
        std::vector<int> i(R.innerIndexPtr(), R.innerIndexPtr() + R.nonZeros());
        i[5] = 9;
        out.Ints("/fclib_local/W/i", i);
      },
      "/fclib_local/W/i", "entry 5 is 9, outside [0, 9)");
  CheckRefused(
      "negative_index",
      [](Hdf5Writer& out, const RandomLocal&) {
        out.Ints("/fclib_local/W/p", {0, 3, -1, 9, 12, 15, 18, 21, 24, 81});
      },
      "/fclib_local/W/p", "decreases at entry 2");
  CheckRefused(
      "nan_value",
      [](Hdf5Writer& out, const RandomLocal& p) {
        std::vector<double> x(p.W.nonZeros(), 1.0);
        x[7] = std::nan("");
        out.Doubles("/fclib_local/W/x", x);
      },
      "/fclib_local/W/x", "entry 7 is nan");
  CheckRefused(
      "infinite_q",
      [](Hdf5Writer& out, const RandomLocal& p) {
        Eigen::VectorXd q = p.q;
        q[2] = INFINITY;
        out.Vector("/fclib_local/vectors/q", q);
      },
      "/fclib_local/vectors/q", "entry 2 is inf");
  CheckRefused(
      "negative_mu",
      [](Hdf5Writer& out, const RandomLocal&) {
        out.Vector("/fclib_local/vectors/mu", Eigen::Vector3d(0.1, -0.2, 0.3));
      },
      "/fclib_local", "mu(1) = -0.2");
  CheckRefused(
      "wrong_dimension",
      [](Hdf5Writer& out, const RandomLocal&) { out.Int("/fclib_local/spacedim", 2); },
      "/fclib_local/spacedim", "is 2, expected a value in [3, 3]");
  CheckRefused(
      "size_not_a_multiple_of_3",
      [](Hdf5Writer& out, const RandomLocal& p) {
        out.Matrix("/fclib_local/W", Eigen::SparseMatrix<double>(p.W.topLeftCorner(8, 8)), -1);
      },
      "/fclib_local/W", "is 8 x 8, expected 3 n_c x 3 n_c");
  CheckRefused(
      "huge_declared_size",
      [](Hdf5Writer& out, const RandomLocal&) { out.Int("/fclib_local/W/m", 40'000'000); },
      "/fclib_local/W", "declares 40000000 x 9, more than the file can hold");
  CheckRefused(
      "huge_triplet_dimensions",
      [](Hdf5Writer& out, const RandomLocal& p) {
        out.Matrix("/fclib_local/W", p.W, 0);  // triplets: no dataset of size m or n
        out.Int("/fclib_local/W/m", 40'000'000);
        out.Int("/fclib_local/W/n", 40'000'000);
      },
      "/fclib_local/W", "declares 40000000 x 40000000, more than the file can hold");
  CheckRefused(
      "text_instead_of_numbers",
      [](Hdf5Writer& out, const RandomLocal&) {
        out.Delete("/fclib_local/vectors/mu");
        out.Group("/fclib_local/vectors/mu");
      },
      "/fclib_local/vectors/mu", "is not a dataset");
  CheckRefused(
      "mixed_problem",
      [](Hdf5Writer& out, const RandomLocal& p) { out.Matrix("/fclib_local/V", p.W, -1); },
      "/fclib_local/V", "mixed local problems");

  SUBCASE("not an HDF5 file, a directory, a missing file") {
    testing::TemporaryFile text("not_hdf5.hdf5", "3\n1\n0 3 3\n");
    CHECK_THROWS_WITH_AS(ReadFclibFile(text.path()), doctest::Contains("is not an HDF5 file"),
                         InputError);
    CHECK_THROWS_WITH_AS(ReadFclibFile(P_tmpdir), doctest::Contains("is not a regular file"),
                         InputError);
    CHECK_THROWS_WITH_AS(ReadFclibFile("/nonexistent/x.hdf5"),
                         doctest::Contains("cannot be opened"), InputError);
  }
  SUBCASE("a global M that is not symmetric positive definite") {
    const std::string path = TempPath("global_bad.hdf5");
    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(3, 3);
    const Eigen::MatrixXd H = Eigen::MatrixXd::Identity(3, 3);
    for (int variant = 0; variant < 2; ++variant) {
      M(0, 0) = variant == 0 ? -1.0 : 1.0;
      M(0, 1) = variant == 0 ? 0.0 : 0.5;  // variant 1: both triangles stored, not symmetric
      M(1, 0) = variant == 0 ? 0.0 : 0.2;
      {
        Hdf5Writer out(path);
        out.Int("/fclib_global/spacedim", 3);
        out.Matrix("/fclib_global/M", M.sparseView(), 0);
        out.Matrix("/fclib_global/H", H.sparseView(), 0);
        out.Vector("/fclib_global/vectors/f", Eigen::Vector3d(0, 0, -1));
        out.Vector("/fclib_global/vectors/w", Eigen::Vector3d::Zero());
        out.Vector("/fclib_global/vectors/mu", Eigen::VectorXd::Constant(1, 0.3));
      }
      CHECK_THROWS_WITH_AS(ReadFclibFile(path), doctest::Contains("/fclib_global/M"), InputError);
      CHECK_THROWS_WITH_AS(ReadFclibFile(path),
                           doctest::Contains(variant == 0 ? "positive definite" : "not symmetric"),
                           InputError);
    }
    std::remove(path.c_str());
  }
}

TEST_CASE("Siconos FC3D files: dense and sparse-block W") {
  // Two contacts; W dense column-major, then the same as two diagonal 3 x 3 blocks.
  const std::string dense =
      "3\n2\n0\n6\n6\n6 6\n"
      "2 0 0 0 0 0\n0 2 0 0 0 0\n0 0 2 0 0 0\n0 0 0 3 0 0\n0 0 0 0 3 0\n0 0 0 0 0 3\n"
      "-1 0.5 0 -2 0 0\n0.3 0.6\n";
  const FrictionContactProblem a = ParseSiconosFrictionContact(dense, "dense.dat");
  CHECK(a.num_contacts() == 2);
  CHECK(a.DiagonalBlock(1)(2, 2) == 3.0);
  CHECK(a.q()[1] == 0.5);
  CHECK(a.mu()[1] == 0.6);
  const std::string blocks =
      "3 2\n1 6 6\n2\n2 2\n3 6\n3 6\n3 2\n0 1 2\n0 1\n"
      "0\n2 0 0 0 2 0 0 0 2\n1\n3 0 0 0 3 0 0 0 3\n"
      "-1 0.5 0 -2 0 0\n0.3 0.6\n";
  const FrictionContactProblem b = ParseSiconosFrictionContact(blocks, "blocks.dat");
  CHECK((Eigen::MatrixXd(a.W_columns()) - Eigen::MatrixXd(b.W_columns())).norm() == 0.0);
  CHECK_THROWS_WITH_AS(ParseSiconosFrictionContact("2\n1\n0 2 2 2 2 1 0 0 1 -1 0 0.5\n", "x.dat"),
                       doctest::Contains("dimension"), InputError);
  CHECK_THROWS_WITH_AS(ParseSiconosFrictionContact(dense.substr(0, dense.size() - 5), "x.dat"),
                       doctest::Contains("x.dat"), InputError);
  CHECK_THROWS_AS(
      ParseSiconosFrictionContact("3\n1\n0 3 3 3 3 1 0 0 0 1 0 0 0 1 -1 0 0 nan\n", "x.dat"),
      InputError);
}

}  // namespace
}  // namespace ncpkit
