#include <fstream>
#include <iostream>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/simulation.h"

namespace ncpkit {
namespace {

Scene LoadWithOverrides(const std::string& path, const CommandLine& line) {
  Scene scene = LoadScene(path);
  if (line.Has("duration")) scene.duration = line.PositiveDouble("duration", scene.duration);
  scene.max_steps = line.PositiveInt64("max-steps", scene.max_steps);
  return scene;
}

// Write errors (a full disk, /dev/full) are errors of the run, not silent truncation.
void CloseOrThrow(std::ofstream* file, const std::string& path) {
  file->flush();
  if (!*file) throw std::runtime_error("cannot write " + path + " (write error)");
  file->close();
  if (!*file) throw std::runtime_error("cannot write " + path + " (write error on close)");
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return items;
}

// Reports a run: the table or JSON, and exit 1 naming the first failed step.
int Report(const SimulationStats& stats, const CommandLine& line, std::ostream& out) {
  if (line.Has("json")) {
    out << StatsJson(stats) << "\n";
  } else {
    PrintStatsTable({stats}, out);
  }
  if (stats.failed_steps > 0) {
    std::cerr << "ncpkit: " << stats.failed_steps << " of " << stats.steps
              << " steps failed to solve; first: " << stats.first_failure << "\n";
    return 1;
  }
  return 0;
}

int SimulateQuasistatic(const CommandLine& line, std::ostream& out) {
  QuasistaticScene scene = LoadQuasistaticScene(line.positional[0]);
  if (line.Has("duration")) scene.duration = line.PositiveDouble("duration", scene.duration);
  scene.max_steps = line.PositiveInt64("max-steps", scene.max_steps);
  std::string variant = QuasistaticVariantName(scene.options);
  if (line.Has("solver")) {
    variant = line.Value("solver", variant);
    ApplyQuasistaticVariant(variant, &scene.options);
  }
  std::ofstream csv;
  if (line.Has("out")) {
    csv.open(line.Value("out", ""));
    if (!csv) throw std::invalid_argument("cannot write " + line.Value("out", ""));
  }
  QuasistaticTrajectoryTable table;
  const SimulationStats stats = RunQuasistaticScene(
      scene, variant, [&](const QuasistaticStepRecord& record, const QuasistaticStepper& stepper) {
        if (csv.is_open()) table.Add(record, stepper);
      });
  if (csv.is_open()) {
    table.WriteCsv(csv);
    CloseOrThrow(&csv, line.Value("out", ""));
  }
  return Report(stats, line, out);
}

}  // namespace

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args, {"solver", "duration", "out", "max-steps"}, {"json"});
  if (line.positional.size() != 1) {
    throw UsageError("simulate needs exactly one SCENE file\n" + UsageText());
  }
  if (IsQuasistaticSceneFile(line.positional[0])) return SimulateQuasistatic(line, out);
  Scene scene = LoadWithOverrides(line.positional[0], line);
  std::string variant = scene.options.solver + (scene.options.warm_start ? "" : "-cold");
  if (line.Has("solver")) {
    variant = line.Value("solver", variant);
    ApplySolverVariant(variant, &scene.options);
  }
  std::ofstream csv;
  if (line.Has("out")) {
    csv.open(line.Value("out", ""));
    if (!csv) throw std::invalid_argument("cannot write " + line.Value("out", ""));
  }
  TrajectoryTable table;
  const SimulationStats stats =
      RunScene(scene, variant, [&](const StepRecord& record, const SceneRunner& runner) {
        if (csv.is_open()) table.Add(record, runner);
      });
  if (csv.is_open()) {
    table.WriteCsv(csv);
    CloseOrThrow(&csv, line.Value("out", ""));
  }
  return Report(stats, line, out);
}

int RunCompareCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args, {"solvers", "csv", "duration", "max-steps"}, {});
  if (line.positional.empty()) throw UsageError("compare needs SCENE files\n" + UsageText());
  std::vector<std::string> variants = DefaultCompareVariants();
  std::vector<std::string> quasistatic_variants = DefaultQuasistaticVariants();
  if (line.Has("solvers")) {
    // Each name applies to the scenes whose kind it fits.
    variants.clear();
    quasistatic_variants.clear();
    for (const std::string& v : SplitList(line.Value("solvers", ""))) {
      const bool implicit = IsSolverVariant(v), quasistatic = IsQuasistaticVariant(v);
      if (!implicit && !quasistatic) {
        ImplicitStepperOptions check;
        ApplySolverVariant(v, &check);  // throws with the list of names
      }
      if (implicit) variants.push_back(v);
      if (quasistatic) quasistatic_variants.push_back(v);
    }
    if (variants.empty() && quasistatic_variants.empty()) {
      throw UsageError("--solvers needs at least one name");
    }
  }
  std::vector<Scene> scenes;
  std::vector<QuasistaticScene> quasistatic;
  for (const std::string& path : line.positional) {
    if (IsQuasistaticSceneFile(path)) {
      quasistatic.push_back(LoadQuasistaticScene(path));
      if (line.Has("duration")) {
        quasistatic.back().duration = line.PositiveDouble("duration", quasistatic.back().duration);
      }
      quasistatic.back().max_steps = line.PositiveInt64("max-steps", quasistatic.back().max_steps);
    } else {
      scenes.push_back(LoadWithOverrides(path, line));
    }
  }
  std::vector<SimulationStats> stats = CompareScenes(scenes, variants, std::cerr);
  for (const QuasistaticScene& scene : quasistatic) {
    for (const std::string& variant : quasistatic_variants) {
      std::cerr << scene.name << " with " << variant << " ..." << std::flush;
      stats.push_back(RunQuasistaticScene(scene, variant, nullptr));
      std::cerr << " " << stats.back().wall_seconds << " s\n";
    }
  }
  PrintStatsTable(stats, out);
  if (line.Has("csv")) {
    std::ofstream csv(line.Value("csv", ""));
    if (!csv) throw std::invalid_argument("cannot write " + line.Value("csv", ""));
    WriteStatsCsv(stats, csv);
    CloseOrThrow(&csv, line.Value("csv", ""));
  }
  return 0;
}

std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress) {
  std::vector<SimulationStats> stats;
  const int total = static_cast<int>(scenes.size() * variants.size());
  int done = 0;
  for (const Scene& original : scenes) {
    for (const std::string& variant : variants) {
      Scene scene = original;
      ApplySolverVariant(variant, &scene.options);
      progress << "[" << ++done << "/" << total << "] " << scene.name << " with " << variant
               << " ..." << std::flush;
      int64_t steps = 0;
      const int64_t total_steps = CountSteps(scene.duration, scene.options.h, scene.max_steps);
      stats.push_back(RunScene(scene, variant, [&](const StepRecord&, const SceneRunner&) {
        if (++steps % 500 == 0) progress << " " << (100 * steps / total_steps) << "%" << std::flush;
      }));
      progress << " " << stats.back().wall_seconds << " s\n";
    }
  }
  return stats;
}

}  // namespace ncpkit
