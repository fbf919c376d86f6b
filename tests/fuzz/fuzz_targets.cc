#include "tests/fuzz/fuzz_targets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "apps/viewer.h"
#include "dynamics/mesh_file.h"
#include "dynamics/shapes/polyhedron.h"
#include "integrators/mjcf.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "readers/matrix_market.h"
#include "readers/siconos_reader.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit::fuzz {
namespace {

// Bounds that keep one input's solve or run short (libFuzzer's time-out is per input).
constexpr int kMaxSolveSize = 64;
constexpr int kMaxSceneBodies = 12;
constexpr int kMaxSteps = 3;

std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

// A solver's summary must not claim a convergence its natural residual denies.
void CheckSummary(const SolverSummary& summary, const std::string& context) {
  if (summary.IsSolved() && !(summary.natural_residual <= summary.tolerance)) {
    Finding(context + ": " + summary.solver + " says solved at natural residual " +
            std::to_string(summary.natural_residual) + " > " + std::to_string(summary.tolerance));
  }
}

void SolveBounded(const LinearComplementarityProblem& problem) {
  if (problem.size() > kMaxSolveSize) return;
  for (const std::string solver : {"lemke", "pgs", "fb-newton"}) {
    SolverOptions options;
    options.max_iterations = solver == "lemke" ? 2000 : solver == "pgs" ? 200 : 30;
    Eigen::VectorXd z;
    CheckSummary(CreateSolver(solver, ProblemKind::Linear, options)->Solve(problem, &z),
                 problem.name);
  }
}

template <class Parse>
void ParseThenSolve(const uint8_t* data, size_t size, Parse parse) {
  try {
    SolveBounded(parse(Text(data, size)));
  } catch (const std::invalid_argument&) {
    // Rejected with a message: the readers' contract.
  }
}

}  // namespace

void SiconosLcp(const uint8_t* data, size_t size) {
  ParseThenSolve(data, size, [](const std::string& t) { return ParseSiconosLcp(t, "fuzz.dat"); });
}

void SiconosMlcp(const uint8_t* data, size_t size) {
  ParseThenSolve(data, size,
                 [](const std::string& t) { return ParseSiconosMlcp(t, "fuzz_mlcp.dat"); });
}

void SiconosFrictionContact(const uint8_t* data, size_t size) {
  try {
    const FrictionContactProblem problem =
        ParseSiconosFrictionContact(Text(data, size), "fc3d.dat");
    if (problem.size() > kMaxSolveSize) return;
    for (const std::string& solver : SolverNames(ProblemKind::Friction)) {
      SolverOptions options;
      options.max_iterations = solver == "auto" ? 0 : 30;
      options.time_limit_seconds = 1.0;
      Eigen::VectorXd r;
      const std::unique_ptr<ComplementaritySolver> object =
          CreateSolver(solver, ProblemKind::Friction, options);
      CheckSummary(object->Solve(problem, &r), problem.name);
    }
  } catch (const std::invalid_argument&) {
    // Rejected with a message: the readers' contract.
  }
}

void MatrixMarket(const uint8_t* data, size_t size) {
  ParseThenSolve(data, size, [](const std::string& t) {
    const Eigen::SparseMatrix<double> M = ParseMatrixMarket(t, "fuzz.mtx");
    if (M.rows() != M.cols() || M.rows() > kMaxSolveSize) {
      throw std::invalid_argument("not a small square matrix");
    }
    Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(M.rows(), -1.0, 1.0);
    LinearComplementarityProblem problem(M, q);
    problem.name = "fuzz.mtx";
    return problem;
  });
}

void VectorFile(const uint8_t* data, size_t size) {
  try {
    const Eigen::VectorXd v = ParseVectorFile(Text(data, size), "fuzz.txt");
    if (v.size() == 0) Finding("an empty vector was accepted");
  } catch (const std::invalid_argument&) {
  }
}

namespace {

// A few steps of a scene read, a few iterations each.
void RunBounded(Scene scene) {
  if (scene.bodies.size() > kMaxSceneBodies) return;
  int& iterations = scene.mutable_settings().max_iterations;
  iterations = scene.stepper() == "implicit" ? std::min(iterations, 30)
               : iterations == 0             ? 200
                                             : std::min(iterations, 200);
  if (scene.stepper() == "explicit")
    scene.options<ExplicitStepperOptions>().solver_time_limit = 1.0;
  scene.duration = std::min(scene.duration, kMaxSteps * scene.h());
  SceneRunner runner(scene);
  while (!runner.Done()) CheckSummary(runner.Step().summary, scene.name);
}

}  // namespace

void SceneFile(const uint8_t* data, size_t size) {
  try {
    RunBounded(ParseScene(Text(data, size), "fuzz.json"));
  } catch (const std::invalid_argument&) {
  }
}

// MJCF text: its includes and mesh files are looked up beside "fuzz.xml", in the working folder.
void MjcfFile(const uint8_t* data, size_t size) {
  try {
    RunBounded(ParseMjcfScene(Text(data, size), "fuzz.xml"));
  } catch (const std::invalid_argument&) {
  }
}

void TrajectoryCsv(const uint8_t* data, size_t size) {
  // The scene the CSVs belong to: a cube on a plane (tests/fuzz/seeds/trajectory.csv is a run).
  static const Scene scene = ParseScene(R"({"name": "cube", "h": 0.01, "duration": 0.05,
      "bodies": [{"name": "cube", "shape": "box", "size": [1, 1, 1], "mass": 1,
                  "position": [0, 0, 0.5]}],
      "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]}]})",
                                        "fuzz_scene.json");
  try {
    const ViewerRun run = ViewerRun::FromCsvText(scene, Text(data, size), "fuzz.csv");
    std::ostringstream page;
    if (ViewerAvailable()) run.WriteHtml(page);
  } catch (const std::invalid_argument&) {
  }
}

// The first byte picks the format (even: OBJ, odd: STL), the rest is the file; the vertices of
// a file that reads go to the hull (at most kMaxMeshHullPoints of them, for the time), whose
// every vertex must lie inside every face.
void MeshFile(const uint8_t* data, size_t size) {
  if (size == 0) return;
  constexpr size_t kMaxMeshHullPoints = 4000;
  try {
    const std::vector<Eigen::Vector3d> points =
        ParseMeshVertices(Text(data + 1, size - 1), data[0] % 2 == 0 ? "fuzz.obj" : "fuzz.stl");
    if (points.size() > kMaxMeshHullPoints) return;
    const auto hull = MakeConvexHull(points);
    for (const ConvexPolyhedron::Face& face : hull->faces) {
      for (const Eigen::Vector3d& v : hull->vertices) {
        if (face.normal.dot(v) > face.offset + 1e-9 * (1.0 + hull->radius)) {
          Finding("a hull vertex outside a face");
        }
      }
    }
    if (!(hull->volume > 0.0)) Finding("a hull of no volume");
  } catch (const std::invalid_argument&) {
    // Rejected with a message: the readers' contract.
  }
}

const std::vector<NamedTarget>& Targets() {
  static const std::vector<NamedTarget> kTargets = {{"siconos_lcp", SiconosLcp},
                                                    {"siconos_mlcp", SiconosMlcp},
                                                    {"siconos_fc3d", SiconosFrictionContact},
                                                    {"matrix_market", MatrixMarket},
                                                    {"vector_file", VectorFile},
                                                    {"scene", SceneFile},
                                                    {"trajectory_csv", TrajectoryCsv},
                                                    {"mesh_file", MeshFile},
                                                    {"mjcf", MjcfFile}};
  return kTargets;
}

}  // namespace ncpkit::fuzz
