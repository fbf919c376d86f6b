// ncpkit solve and ncpkit fclib on frictional contact problems, run as a user would.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "readers/fclib_reader.h"
#include "solvers/registry/solver_registry.h"
#include "tests/readers/fclib_writer.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::Run;
using testing::RunNcpkit;
using testing::SharedData;

std::vector<double> ReadNumbers(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> values;
  double x;
  while (in >> x) values.push_back(x);
  return values;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("solve an FCLib file: the --solution file checks out independently") {
  const std::string solution = testing::TemporaryPath("fclib_cli_solution.txt");
  const std::string file = SharedData("fclib/Rover/Rover1040.hdf5");
  const Run run = RunNcpkit("solve " + file + " --solution " + solution);
  CHECK(run.status == 0);
  CHECK(run.output.find("solved by nsgs") != std::string::npos);
  CHECK(run.output.find("fclib error") != std::string::npos);
  const std::vector<double> r = ReadNumbers(solution);
  const FclibFile data = ReadFclibFile(file);
  REQUIRE(static_cast<int>(r.size()) == data.problem.size());
  // FORMAT.md §5 written out on the file's W, q, mu: the answer meets the default 1e-8.
  const Eigen::MatrixXd W(data.problem.W_columns());
  const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(r.data(), r.size());
  const Eigen::VectorXd u = W * x + data.problem.q();
  double sum = 0.0;
  for (int a = 0; a < data.problem.num_contacts(); ++a) {
    const double mu = data.problem.mu()[a];
    const double ut = std::hypot(u[3 * a + 1], u[3 * a + 2]);
    const double v[3] = {x[3 * a] - u[3 * a] - mu * ut, x[3 * a + 1] - u[3 * a + 1],
                         x[3 * a + 2] - u[3 * a + 2]};
    const double vt = std::hypot(v[1], v[2]);
    double p[3] = {v[0], v[1], v[2]};
    if (mu * vt <= -v[0]) {
      p[0] = p[1] = p[2] = 0.0;
    } else if (vt > mu * v[0]) {
      p[0] = (mu * vt + v[0]) / (1 + mu * mu);
      p[1] = mu * p[0] * v[1] / vt;
      p[2] = mu * p[0] * v[2] / vt;
    }
    for (int k = 0; k < 3; ++k) sum += std::pow(x[3 * a + k] - p[k], 2);
  }
  CHECK(std::sqrt(sum) / (1.0 + data.problem.q().norm()) <= 1e-8);
  std::remove(solution.c_str());

  // --solution for an LCP: z, one number a line.
  const Run lcp = RunNcpkit("solve " + SharedData("lcp/lcp_CPS_2.dat") + " --solution " + solution);
  CHECK(lcp.status == 0);
  CHECK(ReadNumbers(solution) == std::vector<double>{0.0, 1.0, 3.0});
  std::remove(solution.c_str());
}

TEST_CASE("solve every friction solver with --json; a Siconos FC3D file by name and by --kind") {
  const Run run = RunNcpkit(
      "solve " + SharedData("fclib/Confeti/Confeti-ex13-4contact.hdf5") + " --solver all --json",
      false);
  CHECK(run.status == 0);
  std::istringstream lines(run.output);
  std::string line;
  int objects = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json object = nlohmann::json::parse(line);
    CHECK(object["status"] == "converged");
    CHECK(object.contains("siconos_error"));
    ++objects;
  }
  CHECK(objects == static_cast<int>(SolverNames(ProblemKind::Friction).size()));

  const std::string text =
      "3\n2\n0\n6\n6\n6 6\n"
      "2 0 0 0 0 0\n0 2 0 0 0 0\n0 0 2 0 0 0\n0 0 0 3 0 0\n0 0 0 0 3 0\n0 0 0 0 0 3\n"
      "-1 0.5 0 -2 0 0\n0.3 0.6\n";
  testing::TemporaryFile named("two_contacts_fc3d.dat", text);
  const Run by_name = RunNcpkit("solve " + named.path());
  CHECK(by_name.status == 0);
  CHECK(by_name.output.find("converged") != std::string::npos);
  testing::TemporaryFile unnamed("two_contacts.dat", text);
  CHECK(RunNcpkit("solve " + unnamed.path()).status == 2);  // read as an LCP: malformed
  CHECK(RunNcpkit("solve " + unnamed.path() + " --kind fc3d").status == 0);
}

TEST_CASE("friction problems: bad files and options exit 2 with a message") {
  const std::string path = testing::TemporaryPath("fclib_cli_bad.hdf5");
  {
    testing::Hdf5Writer out(path);
    const Eigen::MatrixXd W = Eigen::MatrixXd::Identity(3, 3);
    out.Local(W.sparseView(), Eigen::Vector3d(-1, 0, 0), Eigen::VectorXd::Constant(1, 0.3), -2);
    out.Delete("/fclib_local/vectors/q");
  }
  const Run missing = RunNcpkit("solve " + path);
  CHECK(missing.status == 2);
  CHECK(missing.output.find("/fclib_local/vectors/q: is missing") != std::string::npos);
  const Run in_fclib = RunNcpkit("fclib " + path);
  CHECK(in_fclib.status == 2);
  CHECK(in_fclib.output.find("/fclib_local/vectors/q") != std::string::npos);
  std::remove(path.c_str());
  const std::string rover = SharedData("fclib/Rover/Rover1040.hdf5");
  CHECK(RunNcpkit("solve " + rover + " --solver lemke").status == 2);
  CHECK(RunNcpkit("solve " + rover + " --time-limit -1").status == 2);
  CHECK(RunNcpkit("solve " + rover + " --q x.txt").status == 2);
  CHECK(RunNcpkit("solve " + rover + " --solution /nonexistent/dir/x.txt").status == 2);
  CHECK(RunNcpkit("fclib " + rover + " --solvers nsgs,pgs").status == 2);
  CHECK(RunNcpkit("fclib").status == 2);
  const std::string empty = testing::TemporaryPath("fclib_cli_empty");
  std::filesystem::create_directories(empty);
  const Run no_files = RunNcpkit("fclib " + empty);
  CHECK(no_files.status == 2);
  CHECK(no_files.output.find("holds no .hdf5 file") != std::string::npos);
  std::filesystem::remove_all(empty);
}

TEST_CASE("fclib: a table, a CSV and a performance profile over a folder") {
  const std::string folder = testing::TemporaryPath("fclib_cli_folder");
  std::filesystem::create_directories(folder + "/sub");
  std::filesystem::copy_file(SharedData("fclib/Rover/Rover1040.hdf5"), folder + "/a.hdf5",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(SharedData("fclib/Confeti/Confeti-ex03.hdf5"), folder + "/sub/b.hdf5",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string csv = folder + "/out.csv", svg = folder + "/profile.svg";
  const Run run =
      RunNcpkit("fclib " + folder + " --solvers nsgs,fc-newton --csv " + csv + " --profile " + svg);
  CHECK(run.status == 0);
  CHECK(run.output.find("solved (FCLib error <= 1e-06) of 2 problems:  nsgs 2  fc-newton 2") !=
        std::string::npos);
  const std::string table = ReadAll(csv);
  CHECK(table.rfind("problem,contacts,solver,status,solved,iterations,fclib_error,", 0) == 0);
  CHECK(table.find("a.hdf5,5,nsgs,converged,true,") != std::string::npos);
  CHECK(table.find("b.hdf5,54,fc-newton,converged,true,") != std::string::npos);
  const std::string figure = ReadAll(svg);
  CHECK(figure.rfind("<svg", 0) == 0);
  CHECK(figure.find("data-solver=\"nsgs\"") != std::string::npos);
  CHECK(figure.find("data-solver=\"fc-newton\"") != std::string::npos);
  // A problem no solver solves (to 1e-300, short of an exact zero): exit 1.
  const Run capped =
      RunNcpkit("fclib " + folder + "/sub/b.hdf5 --solvers nsgs,fc-newton --tol 1e-300");
  CHECK(capped.status == 1);
  std::filesystem::remove_all(folder);
}

TEST_CASE("an explicit scene file through simulate and compare") {
  const std::string scene = std::string(NCPKIT_SOURCE_DIR) + "/tests/data/explicit_boxes.json";
  const testing::Run run = testing::RunNcpkit("simulate " + scene + " --json", false);
  CHECK(run.status == 0);
  const nlohmann::json summary = nlohmann::json::parse(run.output);
  CHECK(summary["solver"] == "cone/auto");
  CHECK(summary["failed_steps"] == 0);
  const testing::Run compare = testing::RunNcpkit(
      "compare " + scene + " --solvers cone/fc-newton-fb,cone/fc-proximal --duration 0.2");
  CHECK(compare.status == 0);
  CHECK(compare.output.find("cone/fc-newton-fb") != std::string::npos);
  CHECK(compare.output.find("cone/fc-proximal") != std::string::npos);
  const testing::Run wrong = testing::RunNcpkit("simulate " + scene + " --solver fb-newton");
  CHECK(wrong.status == 2);
  CHECK(wrong.output.find("cone/<solver>") != std::string::npos);
}

TEST_CASE("simulate --save-problems: the steps' island problems as FCLib files fclib replays") {
  const std::filesystem::path folder =
      std::filesystem::path(testing::TemporaryPath("saved_problems"));
  std::filesystem::remove_all(folder);
  const std::string scene = std::string(NCPKIT_SOURCE_DIR) + "/scenes/engine/stack50.json";
  const Run run =
      RunNcpkit("simulate " + scene + " --duration 0.3 --quiet --save-problems " + folder.string());
  REQUIRE(run.status == 0);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry);
  std::sort(files.begin(), files.end());
  // The columns land as one island (their 5 mm gaps are within the pairs' reach while they
  // fall), then rest as 25: more files than steps, each named by step, island and pass.
  REQUIRE(files.size() > 30);
  CHECK(run.output.find(std::to_string(files.size()) + " problems saved in") != std::string::npos);
  CHECK(files.front().filename() == "stack50-000002-0000-1.hdf5");  // the first step is free fall
  CHECK(files.back().filename() == "stack50-000030-0024-1.hdf5");
  for (const std::filesystem::path& file : files) {
    CAPTURE(file);
    const FclibFile data = ReadFclibFile(file.string());
    CHECK(data.from_global);
    CHECK(data.num_degrees_of_freedom % 6 == 0);
    CHECK(data.title.find("stack50 step") == 0);
    // The saved impulses solve the saved problem to the scene's tolerance (1e-6).
    REQUIRE(data.solution_r.size() == data.problem.size());
    CHECK(FclibError(data.problem, data.solution_r) <= 1e-6);
  }
  const Run replay = RunNcpkit("fclib " + folder.string() + " --solvers nsgs");
  CHECK(replay.status == 0);
  const std::string count = std::to_string(files.size());
  CHECK(replay.output.find("of " + count + " problems:  nsgs " + count) != std::string::npos);
  // The convex model's problems are the same global problems; other steppers pose none.
  std::filesystem::remove_all(folder);
  CHECK(RunNcpkit("simulate " + scene +
                  " --duration 0.05 --solver convex/convex-newton "
                  "--save-problems " +
                  folder.string())
            .status == 0);
  CHECK(std::filesystem::exists(folder / "stack50-000002-0000-1.hdf5"));
  const Run implicit = RunNcpkit("simulate " + std::string(NCPKIT_SOURCE_DIR) +
                                 "/scenes/sliding_cube.json --save-problems " + folder.string());
  CHECK(implicit.status != 0);
  CHECK(implicit.output.find("--save-problems: takes explicit scenes of the cone or convex "
                             "model") != std::string::npos);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace ncpkit
