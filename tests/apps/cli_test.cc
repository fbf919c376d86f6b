// The ncpkit program, run as a user would: exit status, stdout and stderr.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "apps/simulation.h"
#include "readers/siconos_reader.h"
#include "solvers/registry/solver_registry.h"
#include "tests/allocation_counter.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::SharedData;
using testing::TemporaryFile;

using testing::Run;
using testing::RunNcpkit;

TEST_CASE("solvers: the registry as a table, and every row in the usage text") {
  const Run run = RunNcpkit("solvers");
  CHECK(run.status == 0);
  CHECK(run.output == SolverTableMarkdown());
  const Run help = RunNcpkit("help");
  CHECK(help.status == 0);
  for (const SolverEntry& e : SolverRegistry()) {
    CAPTURE(e.name);
    CHECK(help.output.find("  " + e.name + " ") != std::string::npos);
    CHECK(help.output.find(e.description) != std::string::npos);
  }
  CHECK(RunNcpkit("solvers extra").status == 2);
}

TEST_CASE("--help or -h after any command prints the usage and exits 0") {
  for (const char* line : {"--help", "-h", "help", "simulate --help", "simulate scene.json -h",
                           "solve --help", "fclib -h", "compare --help", "view --help",
                           "mjcf --help", "lcp-demo --help", "solvers -h", "version --help"}) {
    CAPTURE(line);
    const Run run = RunNcpkit(line);
    CHECK(run.status == 0);
    CHECK(run.output.rfind("usage:", 0) == 0);
    CHECK(run.output.find("ncpkit simulate SCENE") != std::string::npos);
  }
  // Not an option of any command: still refused, by name.
  const Run wrong = RunNcpkit("simulate --halp", true);
  CHECK(wrong.status == 2);
  CHECK(wrong.output.find("unknown option '--halp'") != std::string::npos);
}

TEST_CASE("solve: converged run exits 0 and prints the summary") {
  const Run run = RunNcpkit("solve " + SharedData("lcp/lcp_CPS_2.dat"));
  CHECK(run.status == 0);
  CHECK(run.output.find("converged") != std::string::npos);
  CHECK(run.output.find("z                 0 1 3") != std::string::npos);
}

TEST_CASE("solve --json prints one object per solver with the required fields") {
  const Run run = RunNcpkit("solve " + SharedData("lcp/lcp_deudeu.dat") + " --solver all --json");
  CHECK(run.status == 0);
  for (const char* field : {"\"problem\": \"lcp_deudeu.dat\"", "\"n\": 2", "\"solver\": \"lemke\"",
                            "\"solver\": \"pgs\"", "\"status\": \"converged\"", "\"iterations\"",
                            "\"natural_residual\"", "\"time_us\""}) {
    CHECK_MESSAGE(run.output.find(field) != std::string::npos, field);
  }
}

TEST_CASE("solve --sensitivity adds the Jacobian of the solution to the report") {
  // lcp_deudeu: every z_i > 0, so dz/dq = -M^-1 and dz/dM_ij = z_j dz/dq_i.
  const LinearComplementarityProblem problem = ReadProblemFile(SharedData("lcp/lcp_deudeu.dat"));
  const Run run =
      RunNcpkit("solve " + SharedData("lcp/lcp_deudeu.dat") + " --sensitivity q --json");
  REQUIRE(run.status == 0);
  const nlohmann::json line = nlohmann::json::parse(run.output);
  const nlohmann::json& sensitivity = line.at("sensitivity");
  CHECK(sensitivity.at("input") == "q");
  CHECK(sensitivity.at("degenerate").empty());
  Eigen::Matrix2d jacobian;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) jacobian(i, j) = sensitivity.at("jacobian").at(i).at(j);
  CHECK((jacobian * problem.dense_matrix() + Eigen::Matrix2d::Identity()).cwiseAbs().maxCoeff() <=
        1e-14);
  const Run by_M =
      RunNcpkit("solve " + SharedData("lcp/lcp_deudeu.dat") + " --sensitivity M --json");
  REQUIRE(by_M.status == 0);
  const nlohmann::json m = nlohmann::json::parse(by_M.output).at("sensitivity");
  REQUIRE(m.at("cols") == 4);
  const Eigen::Vector2d z(1.0 / 3.0 + 1.0, 2.0 + 1.0 / 3.0);
  for (int k = 0; k < 4; ++k) {
    const int row = m.at("entries").at(k).at(0), column = m.at("entries").at(k).at(1);
    CHECK(double(m.at("jacobian").at(0).at(k)) ==
          doctest::Approx(z[column] * jacobian(0, row)).epsilon(1e-12));
  }
  // Refused: an input the problem kind does not have.
  CHECK(RunNcpkit("solve " + SharedData("lcp/lcp_deudeu.dat") + " --sensitivity W").status == 2);
  const std::string capsules = SharedData("fclib/Capsules/Capsules-i101-404.hdf5");
  CHECK(RunNcpkit("solve " + capsules + " --sensitivity M").status == 2);
  // A frictional contact problem: the Jacobian of r with respect to mu, 3 n_c x n_c.
  const Run friction = RunNcpkit("solve " + capsules + " --sensitivity mu --json");
  REQUIRE(friction.status == 0);
  const nlohmann::json by_mu = nlohmann::json::parse(friction.output).at("sensitivity");
  CHECK(by_mu.at("rows") == 675);
  CHECK(by_mu.at("cols") == 225);
  CHECK(by_mu.at("jacobian").size() == 675);
}

TEST_CASE("solve exits 1 when a requested solver does not converge") {
  const Run ray = RunNcpkit("solve " + SharedData("lcp/lcp_Pang_isolated_sol_perturbed.dat"));
  CHECK(ray.status == 1);
  CHECK(ray.output.find("ray termination") != std::string::npos);
  const Run table = RunNcpkit("solve " + SharedData("lcp/lcp_CPS_2.dat") + " --solver all");
  CHECK(table.status == 1);  // PGS: zero diagonal
  CHECK(table.output.find("M(0,0) = 0") != std::string::npos);
  const Run capped = RunNcpkit("solve " + SharedData("lcp/lcp_exp_murty2.dat") + " --max-iter 10");
  CHECK(capped.status == 1);
  CHECK(capped.output.find("max_iterations") != std::string::npos);
}

TEST_CASE("usage and input errors exit 2 with a message") {
  struct Case {
    std::string args, message;
  };
  TemporaryFile nan_file("nan_lcp.dat", "1\n0\n1\n1\n1 1\nnan\n-1\n");
  TemporaryFile truncated("trunc_lcp.dat", "3\n0\n3\n3\n3 3\n1 2\n");
  TemporaryFile bounds_l("l.txt", "1 0\n");
  TemporaryFile matrix("m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n");
  TemporaryFile q3("q3.txt", "1 2 3\n");
  TemporaryFile q2("q2.txt", "-1 -1\n");
  TemporaryFile upper("u.txt", "0.5 -1\n");  // u(1) = -1 < l(1) = 0
  TemporaryFile rect("rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n");
  const Case cases[] = {
      {"solve", "exactly one problem FILE"},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"solve /nonexistent.dat", "cannot open file"},
      {"solve " + nan_file.path(), "is not finite"},
      {"solve " + truncated.path(), "only"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --solver magic", "unknown solver 'magic'"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --tol -1", "--tol needs a positive number"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --tol nan", "--tol needs a positive number"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --max-iter x", "positive integer"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --bogus", "unknown option '--bogus'"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --tol", "--tol needs a value"},
      {"solve " + matrix.path(), "needs a q vector file"},
      {"solve " + matrix.path() + " --q " + q3.path(), "q has 3 entries"},
      {"solve " + SharedData("mlcp/Rectangular_mlcp.dat"), "square MLCPs only"},
      {"solve " + matrix.path() + " --q " + q2.path() + " --upper " + upper.path(),
       "l(1) = 0 > u(1) = -1"},
      {"solve " + rect.path() + " --q " + q2.path(), "2 x 3, it must be square"},
      {"solve " + SharedData("lcp/lcp_CPS_2.dat") + " --lower " + q2.path(),
       "bounds files go with a Matrix Market"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Run run = RunNcpkit(c.args);
    CHECK(run.status == 2);
    CHECK_MESSAGE(run.output.find(c.message) != std::string::npos, run.output);
  }
}

TEST_CASE("a Matrix Market problem with bounds is solved") {
  TemporaryFile matrix("box.mtx",
                       "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  TemporaryFile q("box_q.txt", "-5 3\n");
  TemporaryFile l("box_l.txt", "0 -inf\n");
  TemporaryFile u("box_u.txt", "2 inf\n");
  const Run run = RunNcpkit("solve " + matrix.path() + " --q " + q.path() + " --lower " + l.path() +
                            " --upper " + u.path());
  CHECK(run.status == 0);
  CHECK(run.output.find("z                 2 -3") != std::string::npos);
}

TEST_CASE("the LCP demo runs every bundled problem with every solver") {
  const Run run = RunNcpkit("lcp-demo");
  CHECK(run.status == 0);
  CHECK(run.output.find("murty_8") != std::string::npos);
  CHECK(run.output.find("contact_like_1000") != std::string::npos);
}

const std::string kScenes = std::string(NCPKIT_SOURCE_DIR) + "/scenes/";

TEST_CASE("simulate writes the trajectory CSV and a JSON summary") {
  TemporaryFile csv("trajectory.csv", "");
  const Run run = RunNcpkit("simulate " + kScenes + "sliding_cube.json --duration 0.1 --out " +
                            csv.path() + " --json");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("\"steps\": 10") != std::string::npos);
  CHECK(run.output.find("\"failed_steps\": 0") != std::string::npos);
  CHECK(run.output.find("\"max_penetration\"") != std::string::npos);
  std::ifstream in(csv.path());
  std::string header, line;
  std::getline(in, header);
  CHECK(header.rfind("t,cube.x,cube.y,cube.z,cube.qw,cube.qx,cube.qy,cube.qz,cube.vx", 0) == 0);
  CHECK(header.find("cube-ground.ax,cube-ground.ay,cube-ground.az,cube-ground.pn,cube-ground.pt,"
                    "cube-ground.po,cube-ground.pr,cube-ground.n_active,cube-ground.gap") !=
        std::string::npos);
  CHECK(header.find("solver.iterations,solver.residual,solver.time_us,solver.status") !=
        std::string::npos);
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  CHECK(rows == 10);
}

TEST_CASE("simulate --gradient prints a column's gradient, by the closed form of a sliding box") {
  // A box sliding along x for the whole run: x_N = x_0 + h sum_k (v_0 - k mu g h), so
  // dx_N/dmu = -g h^2 N (N + 1) / 2 and dx_N/dv_0 = N h.
  TemporaryFile scene("sliding_box.json", R"({"name": "sliding", "stepper": "explicit",
    "tolerance": 1e-12, "h": 0.01, "duration": 0.1, "gravity": [0, 0, -9.8],
    "bodies": [{"name": "box", "shape": "box", "size": [1, 1, 1], "mass": 2.0,
                "position": [0, 0, 0.5], "velocity": [2, 0, 0]}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "contact": {"mu": 0.2}})");
  const Run run = RunNcpkit(
      "simulate " + scene.path() + " --gradient box.x --wrt mu,box.velocity,box.mass --json",
      /*stderr_too=*/false);
  INFO(run.output);
  REQUIRE(run.status == 0);
  // The summary's JSON line, then the gradient's.
  const size_t second = run.output.find("\n{");
  REQUIRE(second != std::string::npos);
  const nlohmann::json line = nlohmann::json::parse(run.output.substr(second + 1));
  CHECK(line["gradient"] == "box.x");
  CHECK(line["step"] == 10);
  CHECK(line["values"]["mu"].get<double>() ==
        doctest::Approx(-9.8 * 1e-4 * 10 * 11 / 2).epsilon(1e-9));
  CHECK(line["values"]["box.velocity"][0].get<double>() == doctest::Approx(0.1).epsilon(1e-9));
  CHECK(std::abs(line["values"]["box.mass"].get<double>()) < 1e-12);
  CHECK(line["undetermined_steps"].empty());
  // The text form, one line per name; misspelt names stop the run, listing the names there are.
  const Run text = RunNcpkit("simulate " + scene.path() + " --gradient box.x --wrt mu");
  CHECK(text.status == 0);
  CHECK(text.output.find("gradient of box.x after step 10") != std::string::npos);
  CHECK(text.output.find("  d/d mu = -0.0538999999") != std::string::npos);
  const Run column = RunNcpkit("simulate " + scene.path() + " --gradient box.q");
  CHECK(column.status == 2);
  CHECK(column.output.find("no state column 'box.q'; there are: box.x") != std::string::npos);
  const Run wrt = RunNcpkit("simulate " + scene.path() + " --gradient box.x --wrt friction");
  CHECK(wrt.status == 2);
  CHECK(wrt.output.find("'friction'; there are: h, mu, restitution, box.mass") !=
        std::string::npos);
  CHECK(RunNcpkit("simulate " + scene.path() + " --wrt mu").status == 2);
  // A scene of many bodies lists the first of its columns, and how many there are.
  const Run many = RunNcpkit("simulate " + kScenes + "engine/stack50.json --gradient nope.x");
  CHECK(many.status == 2);
  CHECK(many.output.find("there are: b0.x, b0.y") != std::string::npos);
  CHECK(many.output.find(", ... (650 in all)") != std::string::npos);
  CHECK(many.output.size() < 1000);
  // The pyramid model's: one of its edges points against x, so the closed form holds. The convex
  // model's box rises at mu times its slip (the relaxation) and is checked in the library's
  // tests; here it runs.
  const Run pyramid =
      RunNcpkit("simulate " + scene.path() + " --solver pyramid/lemke --gradient box.x --wrt mu");
  CHECK(pyramid.status == 0);
  CHECK(pyramid.output.find("  d/d mu = -0.0539000000") != std::string::npos);
  const Run convex = RunNcpkit("simulate " + scene.path() +
                               " --solver convex/convex-newton --gradient box.x --wrt mu");
  CHECK(convex.status == 0);
  CHECK(convex.output.find("gradient of box.x after step 10") != std::string::npos);
  // The pile's falling boxes pass each other within the search margin: speculative edge contacts
  // whose edges' lines meet beside an edge's end are described too, so every step is derived.
  const Run pile = RunNcpkit("simulate " + kScenes +
                             "engine/pile200.json --duration 0.3 --quiet --gradient c0.x --wrt mu");
  CHECK(pile.status == 0);
  CHECK(pile.output.find("gradient of c0.x after step 30") != std::string::npos);
  const size_t value = pile.output.find("d/d mu = ");
  REQUIRE(value != std::string::npos);
  CHECK(std::isfinite(std::stod(pile.output.substr(value + 9))));
  // The implicit stepper's: the sliding cube's x_N = x_0 + N h v_x - mu g h^2 N (N + 1) / 2 *
  // 0.8 (it slides along (0.8, 0.6)), so dx_2/dmu = -0.002352.
  const Run implicit = RunNcpkit("simulate " + kScenes +
                                 "sliding_cube.json --duration 0.02 --gradient cube.x --wrt mu");
  CHECK(implicit.status == 0);
  CHECK(implicit.output.find("d/d mu = -0.0023520000") != std::string::npos);
  // The soft model's: its coefficients are parameters (the library's tests check the values).
  TemporaryFile soft("soft_box.json", R"({"name": "soft", "stepper": "explicit", "model": "soft",
    "soft": {"stiffness": 5000, "damping": 50}, "h": 0.01, "duration": 0.4,
    "bodies": [{"name": "box", "shape": "box", "size": [1, 1, 1], "mass": 2.0,
                "position": [0, 0, 0.5], "velocity": [0, 0, -0.4]}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "contact": {"mu": 0.5}})");
  const Run springs =
      RunNcpkit("simulate " + soft.path() + " --gradient box.z --wrt soft_stiffness,soft_damping");
  CHECK(springs.status == 0);
  const size_t stiffness = springs.output.find("d/d soft_stiffness = ");
  REQUIRE(stiffness != std::string::npos);
  CHECK(std::isfinite(std::stod(springs.output.substr(stiffness + 21))));
  CHECK(springs.output.find("d/d soft_damping = ") != std::string::npos);
  // A step without a derivative stops the run, saying which and why.
  const Run dqc = RunNcpkit("simulate " + kScenes +
                            "fence_particle.json --duration 0.05 --gradient particle.x");
  CHECK(dqc.status == 2);
  CHECK(dqc.output.find("step 1 (t = 0.01 s)") != std::string::npos);
  CHECK(dqc.output.find("not dqc") != std::string::npos);
}

TEST_CASE("--json output is valid JSON whatever happens") {
  // Errors: the message as {"error": ..., "exit_status": 2} on stdout (and on stderr).
  for (const std::string& args :
       {std::string("simulate /nonexistent.json --json"), std::string("solve /nonexistent --json"),
        "simulate " + kScenes + "sliding_cube.json --solver nope --json",
        "simulate " + kScenes + "sliding_cube.json --json --duration -1"}) {
    INFO(args);
    const Run run = RunNcpkit(args, /*stderr_too=*/false);
    CHECK(run.status == 2);
    const nlohmann::json object = nlohmann::json::parse(run.output);
    CHECK(object.at("exit_status") == 2);
    CHECK(!object.at("error").get<std::string>().empty());
  }
  // Non-finite statistics are null (JSON has no inf or NaN).
  SimulationStats stats;
  stats.scene = "s\xff\"";  // invalid UTF-8 and a quote
  stats.max_residual = std::numeric_limits<double>::infinity();
  stats.max_penetration = std::numeric_limits<double>::quiet_NaN();
  const nlohmann::json object = nlohmann::json::parse(StatsJson(stats));
  CHECK(object.at("max_natural_residual").is_null());
  CHECK(object.at("max_penetration").is_null());
  CHECK(object.at("scene") == "s\xef\xbf\xbd\"");  // U+FFFD
}

TEST_CASE("simulate shows progress on stderr once a run takes more than a second") {
  std::ostringstream lines, terminal;
  ProgressLine to_file(lines, /*terminal=*/false, 2.0);
  ProgressLine to_terminal(terminal, /*terminal=*/true, 2.0);
  to_file.Update(1, 200, 0.01, 0);
  to_terminal.Update(1, 200, 0.01, 0);
  CHECK(lines.str().empty());  // within the first second: nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  to_file.Update(7, 200, 0.07, 1);
  to_file.Update(8, 200, 0.08, 1);  // throttled: one line every 5 s off a terminal
  to_terminal.Update(7, 200, 0.07, 1);
  to_file.Finish();
  to_terminal.Finish();
  const std::string file_text = lines.str(), terminal_text = terminal.str();
  CHECK(file_text.rfind("ncpkit: t = 0.07 of 2 s, step 7 of 200, 1 failed, ", 0) == 0);
  CHECK(file_text.size() > 3);
  CHECK(file_text.substr(file_text.size() - 3) == " s\n");  // wall time so far
  CHECK(std::count(file_text.begin(), file_text.end(), '\n') == 1);
  CHECK(terminal_text.rfind("\rncpkit: t = 0.07 of 2 s, step 7 of 200, 1 failed", 0) == 0);
  CHECK(terminal_text.back() == '\n');  // Finish ends the rewritten line
  // --quiet: no progress however long the run (here a short one: the option is accepted).
  CHECK(RunNcpkit("simulate " + kScenes + "sliding_cube.json --duration 0.02 --quiet").status == 0);
}

TEST_CASE("simulate exits 1 with the step and reason when a step fails") {
  // One FB Newton iteration per step cannot solve the contact steps (auto's chain can).
  TemporaryFile scene(
      "one_iteration.json",
      "{\"h\": 0.01, \"duration\": 0.05, \"max_iterations\": 1, \"warm_start\": false,"
      " \"solver\": \"fb-newton\","
      " \"bodies\": [{\"name\": \"c\", \"shape\": \"box\", \"size\": [1,1,1],"
      " \"mass\": 1, \"position\": [0,0,0.5], \"velocity\": [1,0,0]}],"
      " \"fixed\": [{\"name\": \"g\", \"shape\": \"plane\", \"normal\": [0,0,1]}]}");
  const Run run = RunNcpkit("simulate " + scene.path());
  INFO(run.output);
  CHECK(run.status == 1);
  CHECK(run.output.find("steps failed to solve; first: step 1") != std::string::npos);
}

TEST_CASE("bad scene files and options exit 2 with a message") {
  TemporaryFile bad("bad_scene.json",
                    "{\"h\": 0.01, \"duration\": 1, \"bodies\": [{\"name\": \"x\","
                    " \"shape\": \"cube\", \"size\": [1,1,1], \"mass\": 1,"
                    " \"position\": [0,0,1]}]}");
  Run run = RunNcpkit("simulate " + bad.path());
  CHECK(run.status == 2);
  CHECK(run.output.find("unknown shape 'cube'") != std::string::npos);
  run = RunNcpkit("simulate /nonexistent.json");
  CHECK(run.status == 2);
  run = RunNcpkit("simulate " + kScenes + "sliding_cube.json --solver lemke");
  CHECK(run.status == 2);
  CHECK(run.output.find("unknown solver 'lemke'") != std::string::npos);
  run = RunNcpkit("simulate " + kScenes + "sliding_cube.json --duration -1");
  CHECK(run.status == 2);
  run = RunNcpkit("compare " + kScenes + "sliding_cube.json --solvers fb-newton,nope");
  CHECK(run.status == 2);
}

TEST_CASE("the shipped engine scenes run clean with their own defaults") {
  // Each JSON file names its model, solver and tolerance; the MJCF models take the explicit
  // stepper's default variant at the tolerance of every MJCF model (1e-6). Every step solved to
  // the scene's tolerance, simulate exits 0.
  const struct {
    const char* file;
    const char* variant;
  } scenes[] = {{"stack50.json", "cone/nsgs-velocity"},
                {"pile200.json", "convex/convex-newton"},
                {"wall100.json", "convex/convex-newton"},
                {"capsules200.xml", "cone/auto"},
                {"rocks200.xml", "cone/auto"}};
  for (const auto& scene : scenes) {
    // The MJCF piles take 2.5 and 15 s in an optimized build, minutes under the sanitizers:
    // the Release run checks them.
    if (testing::SanitizedBuild() && std::string(scene.file).find(".xml") != std::string::npos) {
      continue;
    }
    CAPTURE(scene.file);
    const Run run = RunNcpkit("simulate " + kScenes + "engine/" + scene.file + " --json --quiet",
                              /*stderr_too=*/false);
    INFO(run.output);
    CHECK(run.status == 0);
    const nlohmann::json summary = nlohmann::json::parse(run.output);
    CHECK(summary["solver"] == scene.variant);
    CHECK(summary["steps"] >= 100);
    CHECK(summary["failed_steps"] == 0);
    CHECK(summary["max_contacts"] >= 200);
  }
}

TEST_CASE("simulate --threads: the islands on N threads, the same summary; bad counts refused") {
  const std::string stack = kScenes + "engine/stack50.json --duration 0.1 --json --quiet";
  const Run one = RunNcpkit("simulate " + stack, /*stderr_too=*/false);
  const Run two = RunNcpkit("simulate " + stack + " --threads 2", /*stderr_too=*/false);
  INFO(one.output);
  INFO(two.output);
  REQUIRE(one.status == 0);
  REQUIRE(two.status == 0);
  const nlohmann::json a = nlohmann::json::parse(one.output);
  const nlohmann::json b = nlohmann::json::parse(two.output);
  CHECK(a["islands"] == 25);  // 5 x 5 columns on one ground
  CHECK(a["failed_islands"] == 0);
  // Resting, each of the 25 columns has 8 contacts: 4 corners on the ground, 4 between its
  // boxes; more while the boxes land.
  CHECK(a["median_contacts"] == 200);
  CHECK(a["max_contacts"] >= 200);
  for (const char* key :
       {"steps", "failed_steps", "max_natural_residual", "max_penetration", "median_iterations",
        "max_iterations", "median_contacts", "max_contacts", "islands", "failed_islands"}) {
    CAPTURE(key);
    CHECK(a[key] == b[key]);
  }
  for (const std::string& bad : {std::string("0"), std::string("-2"), std::string("x")}) {
    const Run run = RunNcpkit("simulate " + stack + " --threads " + bad);
    CHECK(run.status == 2);
  }
  const Run too_many = RunNcpkit("simulate " + stack + " --threads 257");
  CHECK(too_many.status == 2);
  CHECK(too_many.output.find("threads") != std::string::npos);
  TemporaryFile file("threads_scene.json",
                     "{\"h\": 0.01, \"duration\": 0.1, \"threads\": 300, \"bodies\": []}");
  const Run in_file = RunNcpkit("simulate " + file.path());
  CHECK(in_file.status == 2);
  CHECK(in_file.output.find("threads") != std::string::npos);
}

TEST_CASE("compare prints one row per scene and solver variant, and a CSV") {
  TemporaryFile csv("compare.csv", "");
  const Run run = RunNcpkit("compare " + kScenes + "sliding_cube.json " + kScenes +
                            "toppling_cube.json --duration 0.2 --csv " + csv.path());
  INFO(run.output);
  CHECK(run.status == 0);
  for (const char* variant :
       {"fb-newton ", "fb-newton-dense", "minmap-newton", "penalized-fb", "fb-newton-cold"}) {
    CHECK(run.output.find(std::string("toppling-cube          ") + variant) != std::string::npos);
  }
  CHECK(run.output.find("[10/10]") != std::string::npos);  // progress on stderr
  std::ifstream in(csv.path());
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  CHECK(rows == 11);
}

}  // namespace
}  // namespace ncpkit
