// Hostile input and long runs, as a demanding user tries them: every case exits with a clear
// message (status 2) or runs correctly, never a crash, a hang, a huge allocation or a silent
// wrong answer. The input files are in tests/data/hostile/ and tests/fuzz/regressions/.
#include <doctest/doctest.h>
#include <malloc.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "apps/simulation.h"
#include "apps/viewer.h"
#include "integrators/limits.h"
#include "readers/siconos_reader.h"
#include "solvers/lcp/lemke.h"
#include "solvers/linalg/internal/pivots.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::Run;
using testing::RunNcpkit;
using testing::TemporaryFile;
using testing::TestData;

bool Contains(const Run& run, const std::string& text) {
  return run.output.find(text) != std::string::npos;
}

// The program exits 2 with `message` in its output.
void CheckRejected(const std::string& args, const std::string& message) {
  const Run run = RunNcpkit(args);
  CHECK(run.status == 2);
  CHECK_MESSAGE(Contains(run, message), run.output);
}

std::string Regression(const std::string& relative) {
  return std::string(NCPKIT_SOURCE_DIR) + "/tests/fuzz/regressions/" + relative;
}

TEST_CASE("Matrix Market: a symmetric header with a non-square size is rejected, not a crash") {
  TemporaryFile q("q5.txt", "1 2\n");
  for (const char* file :
       {"matrix_market/symmetric_not_square.mtx", "matrix_market/skew_not_square.mtx"}) {
    CheckRejected("solve " + Regression(file) + " --q " + q.path(), "matrix must be square");
  }
}

TEST_CASE("Lemke: overflowing data and singular bases give a status, never a crash") {
  for (const char* file :
       {"siconos_lcp/lemke_overflow_1e308_a.dat", "siconos_lcp/lemke_overflow_1e308_b.dat"}) {
    CAPTURE(file);
    const LinearComplementarityProblem problem = ReadSiconosLcp(Regression(file));
    Eigen::VectorXd z;
    const LemkeSolver::Summary summary = LemkeSolver().Solve(problem, &z);
    // Either a solution, checked here, or the failure named (the first file has one, z = 2 e_1,
    // which the lexicographic path reaches before any entry of 1e308 enters the basis).
    if (summary.IsSolved()) {
      CHECK(natural_residual(problem, z) <= summary.tolerance);
    } else {
      CHECK(summary.status == Status::NumericalFailure);
      CHECK(summary.message.find("overflow") != std::string::npos);
    }
  }
  // A free-variable reduction that overflows (M_FF = 1e-300 is invertible, its Schur complement
  // is not finite) gives a status instead of NaN in the tie-breaking rows.
  Eigen::MatrixXd mixed(2, 2);
  mixed << 1e-300, 1e5, 1e5, 1.0;
  const double inf = std::numeric_limits<double>::infinity();
  const LinearComplementarityProblem overflow(mixed, Eigen::Vector2d(1, -1),
                                              Eigen::Vector2d(-inf, 0), Eigen::Vector2d(inf, inf));
  Eigen::VectorXd x;
  const LemkeSolver::Summary reduced = LemkeSolver().Solve(overflow, &x);
  CHECK(reduced.status == Status::NumericalFailure);
  CHECK(reduced.message.find("non-finite") != std::string::npos);
  // A warm start whose basis is exactly singular is refused, then the cold start solves it.
  Eigen::MatrixXd M(2, 2);
  M << 1, 1, 1, 1;
  const LinearComplementarityProblem problem(M, Eigen::Vector2d(-1, -1));
  LemkeSolver::Options options;
  options.warm_start = true;
  Eigen::VectorXd z = Eigen::Vector2d(1, 1);
  const LemkeSolver::Summary summary = LemkeSolver(options).Solve(problem, &z);
  CHECK(summary.IsSolved());
  CHECK(natural_residual(problem, z) <= 1e-12);
}

TEST_CASE("the pivot test refuses zero, rounding-level and NaN pivots, whatever rcond says") {
  CHECK(internal::PivotsAreUsable(Eigen::Vector3d(2.0, -1.0, 1e-3), 2.0));
  CHECK(!internal::PivotsAreUsable(Eigen::Vector3d(2.0, 0.0, 1.0), 2.0));
  CHECK(!internal::PivotsAreUsable(Eigen::Vector3d(2.0, 1e-15, 1.0), 2.0));  // < 64 n eps * 2
  CHECK(!internal::PivotsAreUsable(Eigen::Vector3d(2.0, std::nan(""), 1.0), 2.0));
  CHECK(!internal::PivotsAreUsable(Eigen::Vector3d(2.0, 1.0, 1.0), std::nan("")));
}

TEST_CASE("problem files: sizes checked against the file, trailing data, directories, bytes") {
  // A 22-byte MLCP declaring 10^8 unknowns: refused before anything of that size is allocated.
  TemporaryFile mlcp("huge_mlcp.dat", "0 1\n50000000 50000000\n");
  CheckRejected("solve " + mlcp.path(), "an MLCP of size n + m needs 100000000 values");
  TemporaryFile sparse("huge_sparse.dat", "50000000 1 50000000 50000000 0 0 0 1 0 0\n");
  CheckRejected("solve " + sparse.path(), "an LCP of size n needs 50000000 values");
  TemporaryFile extra("extra.dat", "1\n0\n1\n1\n1 1\n2\n-1\n5\n");
  CheckRejected("solve " + extra.path(), "unexpected number '5' after the last entry of q");
  TemporaryFile remark("remark.dat", "1\n0\n1\n1\n1 1\n2\n-1\n\nExample 1.2 from a book, 2009\n");
  CHECK(RunNcpkit("solve " + remark.path()).status == 0);
  TemporaryFile binary("binary.dat", std::string("1\n0\n1\n1\n1 1\n2\n-1\n\x01\x02garbage", 20));
  CheckRejected("solve " + binary.path(), "binary data (byte 0x01)");
  CheckRejected("solve " + std::string(NCPKIT_SOURCE_DIR) + "/tests", "is a directory");
  TemporaryFile high("high.dat", "1\n0\n1\n1\n1 1\n\xff\xfe\n-1\n");
  CheckRejected("solve " + high.path(), "found '\\xff\\xfe'");
}

TEST_CASE("step counts: no overflow, a documented cap, integer fields range-checked") {
  const std::string scenes = std::string(NCPKIT_SOURCE_DIR) + "/scenes/";
  for (const char* duration : {"1e12", "1e300", "2147483648"}) {
    CheckRejected("simulate " + scenes + "sliding_cube.json --duration " + duration,
                  "above the cap of 10000000");
  }
  CHECK_THROWS_WITH_AS(CountSteps(1.0, 1e-12), doctest::Contains("--max-steps"),
                       std::invalid_argument);
  CHECK(CountSteps(1.0, 1e-12, int64_t{1} << 40) == 1000000000000);
  TemporaryFile iterations("iterations.json",
                           R"({"h": 0.01, "duration": 0.1, "max_iterations": 1e20,
                               "bodies": [{"name": "b", "shape": "sphere", "size": [1],
                                           "mass": 1, "position": [0, 0, 2]}]})");
  CheckRejected("simulate " + iterations.path(),
                "scene.max_iterations: must be an integer in [1, 10000000], got 1e+20");
  TemporaryFile directions("directions.json",
                           R"({"duration": 0.1, "quasistatic": {"friction_directions": 1e20},
                               "bodies": [{"name": "ground", "shape": "plane"}]})");
  CheckRejected("simulate " + directions.path(),
                "friction_directions: must be an integer in [3, 256], got 1e+20");
}

TEST_CASE("bodies overlapping at the start are rejected with the pair and the depth") {
  CheckRejected("simulate " + TestData("hostile/cube_in_ground.json"),
                "bodies 'cube' and 'ground' overlap by 0.5 m");
  CheckRejected("simulate " + TestData("hostile/coincident_cubes.json"),
                "bodies 'a' and 'b' overlap by 1 m");
  CheckRejected("simulate " + TestData("hostile/finger_inside_sphere.json"),
                "bodies 'sphere' and 'left_finger' overlap by 0.06 m");
  // Opted in: moved apart before the first step, with no velocity (no energy created).
  const Scene scene = LoadScene(TestData("hostile/cube_in_ground_separated.json"));
  CHECK(scene.bodies[0].state.position.z() == doctest::Approx(0.5).epsilon(1e-5));
  double fastest = 0.0;
  RunScene(scene, "fb-newton", [&](const StepRecord&, const SceneRunner& runner) {
    fastest = std::max(fastest, runner.stepper().bodies()[0].state.linear_velocity.norm());
  });
  CHECK(fastest < 1e-3);
}

TEST_CASE("quasistatic qp-lcp: no library output, non-finite or out-of-range steps fail") {
  const Run run = RunNcpkit("simulate " + TestData("hostile/qp_lcp_no_contact.json") + " --json");
  CHECK(run.status == 0);
  CHECK(!Contains(run, "CHOLMOD"));
  CHECK(nlohmann::json::parse(run.output).at("failed_steps") == 0);
  CheckRejected("simulate " + TestData("hostile/huge_command.json"), "beyond the coordinate limit");
}

TEST_CASE("quasistatic: a scene in which every body is fixed steps without solving") {
  for (const char* variant : {"qp-lcp/lemke", "qp/lemke", "dlc/lemke", "dqc/fb-newton"}) {
    CAPTURE(variant);
    const Run run = RunNcpkit("simulate " + TestData("hostile/every_body_fixed.json") +
                              " --solver " + variant + " --json");
    CHECK(run.status == 0);
    CHECK(!Contains(run, "CHOLMOD"));
    CHECK(nlohmann::json::parse(run.output).at("failed_steps") == 0);
  }
}

TEST_CASE("simulate --json is JSON whatever the names; write errors are errors") {
  TemporaryFile named("named.json",
                      R"({"name": "a \"quoted\", \\ name", "h": 0.01, "duration": 0.02,
                          "bodies": [{"name": "b,1", "shape": "sphere", "size": [1], "mass": 1,
                                      "position": [0, 0, 2]}]})");
  const Run run = RunNcpkit("simulate " + named.path() + " --json");
  CHECK(run.status == 0);
  CHECK(nlohmann::json::parse(run.output).at("scene") == "a \"quoted\", \\ name");
  CheckRejected("simulate " + named.path() + " --out /dev/full", "cannot write /dev/full");
  CheckRejected("compare " + named.path() + " --solvers fb-newton --csv /dev/full",
                "cannot write /dev/full");
  SimulationStats stats;
  stats.max_residual = std::numeric_limits<double>::infinity();
  CHECK(nlohmann::json::parse(StatsJson(stats)).at("max_natural_residual").is_null());
}

TEST_CASE("a long run without --out keeps its memory flat") {
  Scene scene = LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/sliding_cube.json");
  scene.duration = 1.0;  // warm up: the stepper's own workspaces
  RunScene(scene, "fb-newton", nullptr);
  const size_t before = mallinfo2().uordblks;
  if (before == 0) return;  // a sanitizer's allocator: mallinfo2 says nothing
  scene.duration = 400.0;   // 40000 steps
  size_t during = 0;
  RunScene(scene, "fb-newton", [&](const StepRecord&, const SceneRunner& runner) {
    if (runner.stepper().time() > 399.0) during = std::max(during, mallinfo2().uordblks);
  });
  // 24 bytes a step would be 960 kB here.
  CHECK(during < before + 200 * 1024);
}

TEST_CASE("a resting box stays solved to well within the tolerance over 10^5 steps") {
  TemporaryFile file("resting_box.json",
                     R"({"h": 0.01, "duration": 1000,
                         "bodies": [{"name": "box", "shape": "box", "size": [1, 1, 1],
                                     "mass": 1, "position": [0, 0, 0.5]}],
                         "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]}],
                         "contact": {"mu": 0.5, "e_t": 1, "e_o": 1, "e_r": 1}})");
  const Scene scene = LoadScene(file.path());
  double drift = 0.0;
  const SimulationStats stats =
      RunScene(scene, "fb-newton", [&](const StepRecord&, const SceneRunner& runner) {
        drift = std::max(drift, std::abs(runner.stepper().bodies()[0].state.position.z() - 0.5));
      });
  CHECK(stats.failed_steps == 0);
  // Accepted warm starts used to carry their rounding errors along: 2.1e-12 after 10^5 steps,
  // growing in proportion to time. Now refined at 1 % of the tolerance.
  CHECK(stats.max_residual <= 1e-12);
  CHECK(drift <= 1e-11);
}

TEST_CASE("far from the origin a scene is as accurate as near it") {
  const Scene near = LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/sliding_cube.json");
  Scene far = near;
  const Eigen::Vector3d offset(1e5, -1e5, 0.0);
  for (Body& body : far.bodies) body.state.position += offset;
  std::vector<Eigen::Vector3d> path;
  const SimulationStats stats_near =
      RunScene(near, "fb-newton", [&](const StepRecord&, const SceneRunner& runner) {
        path.push_back(runner.stepper().bodies()[0].state.position);
      });
  size_t step = 0;
  double worst = 0.0;
  const SimulationStats stats_far =
      RunScene(far, "fb-newton", [&](const StepRecord&, const SceneRunner& runner) {
        const Eigen::Vector3d p = runner.stepper().bodies()[0].state.position - offset;
        worst = std::max(worst, (p - path[step++]).norm());
      });
  CHECK(stats_far.failed_steps == 0);
  // Each pair's problem is posed relative to the pair: the residual is the same as near the
  // origin (it was 9.6e-13 at 1e5 m, against 2.6e-14), and the path differs by the rounding of
  // the coordinates alone (a double resolves 1.5e-11 m at 1e5 m; 400 steps).
  CHECK(stats_far.max_residual <= 2.0 * stats_near.max_residual + 1e-15);
  CHECK(worst <= 1e-8);
}

TEST_CASE("viewer pages: bad trajectory CSVs are rejected, names cannot end the page's script") {
  const std::string scenes = std::string(NCPKIT_SOURCE_DIR) + "/scenes/";
  const std::string cube = scenes + "sliding_cube.json";
  TemporaryFile page("page.html", "");
  TemporaryFile missing("missing.csv", "t,cube.x,cube.y\n0.01,0,0\n");
  CheckRejected("view " + cube + " " + missing.path() + " --html " + page.path(),
                "no column cube.z");
  TemporaryFile csv("traj.csv", "");
  REQUIRE(RunNcpkit("simulate " + cube + " --duration 0.03 --out " + csv.path()).status == 0);
  std::ifstream in(csv.path());
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  TemporaryFile bad("bad.csv",
                    header + "\n" + row + "\n" + "0.02,zero" + row.substr(row.find(',', 5)) + "\n");
  CheckRejected("view " + cube + " " + bad.path() + " --html " + page.path(),
                ":3: column cube.x: 'zero' is not a number");
  TemporaryFile short_row("short.csv", header + "\n0.01,1,2\n");
  CheckRejected("view " + cube + " " + short_row.path() + " --html " + page.path(),
                ":2: 3 fields, the header has");
  CheckRejected("view " + cube + " " + csv.path(), "view needs SCENE TRAJ.csv --html OUT.html");
  CheckRejected("view " + cube + " " + Regression("trajectory_csv/huge_iteration_count.csv") +
                    " --html " + page.path(),
                ":2: column solver.iterations is not an iteration count");
  CheckRejected("simulate " + cube + " --duration 0.02 --html /dev/full", "cannot write /dev/full");
  // A scene name that tries to close the data's <script> element.
  std::ifstream scene_file(cube);
  std::string text((std::istreambuf_iterator<char>(scene_file)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"sliding-cube\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 14, "\"</script><script>alert(1)</script>\"");
  TemporaryFile hostile("hostile_name.json", text);
  const Run run =
      RunNcpkit("simulate " + hostile.path() + " --duration 0.02 --html " + page.path());
  if (!ViewerAvailable()) {  // a build without npm: --html refuses, saying why
    CHECK(run.status == 2);
    CHECK(Contains(run, "built without the viewer"));
  } else {
    REQUIRE(run.status == 0);
    std::ifstream html(page.path());
    const std::string written((std::istreambuf_iterator<char>(html)),
                              std::istreambuf_iterator<char>());
    size_t closing = 0;
    for (size_t p = written.find("</script>"); p != std::string::npos;
         p = written.find("</script>", p + 1)) {
      ++closing;
    }
    CHECK(closing == 2);  // the data's and the script's own
    CHECK(written.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
    CHECK(written.find("<title>ncpkit: &lt;/script&gt;") != std::string::npos);
  }
}

}  // namespace
}  // namespace ncpkit
