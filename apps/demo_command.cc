#include <Eigen/Dense>
#include <iostream>
#include <limits>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/report.h"
#include "apps/simulation.h"
#include "fixtures/problem_generators.h"
#include "readers/text_scanner.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

// Small problems with known answers, bundled so that the demo needs no files.
std::vector<LinearComplementarityProblem> BundledProblems() {
  std::vector<LinearComplementarityProblem> problems;
  const double inf = std::numeric_limits<double>::infinity();
  {
    // PATH's C-API example as a box LCP on [0, 10]^4; solution (2.8, 0, 0.8, 1.2).
    Eigen::MatrixXd M(4, 4);
    M << 0, 0, -1, -1, 0, 0, 1, -2, 1, -1, 2, -2, 1, 2, -2, 4;
    Eigen::VectorXd q(4);
    q << 2, 2, -2, -6;
    problems.emplace_back(M, q, Eigen::VectorXd::Zero(4), Eigen::VectorXd::Constant(4, 10.0));
    problems.back().name = "path_example_box";
  }
  {
    // Cottle-Pang-Stone example 4.4.7; unique solution (0, 1, 3).
    Eigen::MatrixXd M(3, 3);
    M << 0, -1, 2, 2, 0, -2, -1, 1, 0;
    Eigen::VectorXd q(3);
    q << -3, 6, -1;
    problems.emplace_back(M, q);
    problems.back().name = "cps_4.4.7";
  }
  {
    // An MLCP with a free x: 2x + y - 1 = 0, 0 <= y _|_ x + 2y + 0.5 >= 0; solution (0.5, 0).
    Eigen::MatrixXd M(2, 2);
    M << 2, 1, 1, 2;
    Eigen::VectorXd q(2);
    q << -1, 0.5;
    Eigen::VectorXd l(2), u(2);
    l << -inf, 0;
    u << inf, inf;
    problems.emplace_back(M, q, l, u);
    problems.back().name = "mlcp_one_free";
  }
  problems.push_back(MurtyLcp(8));
  problems.push_back(RandomSpdLcp(100, 1));
  problems.push_back(ContactLikeLcp(1000, 1));
  return problems;
}

}  // namespace

int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (!args.empty()) throw UsageError("unknown command '" + args[0] + "'\n" + UsageText());
  out << "ncpkit demo: the paper scenes (Xie & Chakraborty 2016, sec. VI), each stepped with every "
         "solver\n"
         "variant. One mixed NCP per step in the end-of-step twists, the equivalent contact\n"
         "points and the contact impulses; residual = natural residual of each step's problem,\n"
         "penetration measured from the shapes after the step; us/step = the whole step.\n"
         "'-cold' = no warm start from the previous step. Scenes: "
      << SceneDirectory() << "\n\n";
  std::vector<Scene> scenes;
  for (const char* file : {"sliding_cube.json", "rolling_cylinder.json", "toppling_cube.json",
                           "cylinder_manipulation.json"}) {
    scenes.push_back(LoadScene(SceneDirectory() + "/" + file));
  }
  PrintStatsTable(CompareScenes(scenes, {}, std::cerr), out);
  out << "\nThe same scenes and the 50-box stack stepped explicitly (\"stepper\": \"explicit\"):\n"
         "contacts and gaps at the start of the step, one problem in the impulses; cone = Coulomb\n"
         "cones (frictional contact problem), pyramid = Stewart-Trinkle LCP, relaxed = Anitescu's\n"
         "relaxed cone (LCP); residual = that problem's (FCLib error for cone).\n\n";
  std::vector<Scene> explicit_scenes;
  for (const char* file : {"sliding_cube.json", "rolling_cylinder.json", "toppling_cube.json",
                           "cylinder_manipulation.json"}) {
    const std::string path = SceneDirectory() + "/" + file;
    std::string text = internal::ReadTextFile(path);
    text.insert(text.find('{') + 1, "\"stepper\": \"explicit\",");
    explicit_scenes.push_back(ParseScene(text, path));
  }
  std::vector<SimulationStats> explicit_stats = CompareScenes(
      explicit_scenes,
      {"cone/nsgs-velocity", "cone/auto", "pyramid/lemke", "relaxed/lemke", "relaxed/pgs"},
      std::cerr);
  // The stack with the solvers that take it in milliseconds (Lemke pivots through its
  // 1600-unknown LCPs for seconds a step).
  const std::vector<SimulationStats> stack =
      CompareScenes({LoadScene(SceneDirectory() + "/engine/stack50.json")},
                    {"cone/nsgs-velocity", "cone/auto", "relaxed/pgs"}, std::cerr);
  explicit_stats.insert(explicit_stats.end(), stack.begin(), stack.end());
  PrintStatsTable(explicit_stats, out);
  out << "\nThe quasistatic scenes (Trinkle, Berard & Pang 2005; Pang & Tedrake 2021) with each "
         "model/solver: one complementarity\n"
         "problem per step in the displacements and contact forces; dqc = quadratic cones (NCP),\n"
         "dlc = friction pyramid (MLCP), qp = convex QP by its KKT conditions (MLCP), qp-lcp =\n"
         "the QP's Delassus LCP. Penetration = linearized at the end of the step.\n\n";
  std::vector<Scene> small;
  for (const char* file : {"fence_particle.json", "gripper_sphere.json"}) {
    small.push_back(LoadScene(SceneDirectory() + "/" + file));
  }
  std::vector<SimulationStats> stats = CompareScenes(small, {}, std::cerr);
  // The stacking scene (64 coordinates, 900 steps) with two variants only, to keep the demo
  // short.
  const std::vector<SimulationStats> stacking =
      CompareScenes({LoadScene(SceneDirectory() + "/cube_stacking.json")},
                    {"qp-lcp/fb-newton", "qp/lemke"}, std::cerr);
  stats.insert(stats.end(), stacking.begin(), stacking.end());
  PrintStatsTable(stats, out);
  return 0;
}

int RunLcpDemoCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (!args.empty()) throw UsageError("unknown argument '" + args[0] + "'\n" + UsageText());
  out << "ncpkit demo: every bundled problem with every solver (tolerance 1e-10 on the natural\n"
         "residual ||z - mid(l, u, z - (Mz + q))||_inf). PGS is not expected to converge on\n"
         "non-symmetric problems or on a zero diagonal; the note column says why.\n\n";
  std::vector<SolveRecord> records;
  for (const LinearComplementarityProblem& problem : BundledProblems()) {
    for (const std::string& name : SolverNames(ProblemKind::Linear)) {
      Eigen::VectorXd z;
      const auto solver = CreateSolver(name, ProblemKind::Linear, SolverOptions());
      records.push_back({problem.name, problem.size(), solver->Solve(problem, &z)});
    }
  }
  PrintTable(records, out);
  return 0;
}

}  // namespace ncpkit
