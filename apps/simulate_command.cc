#include <unistd.h>

#include <fstream>
#include <iostream>
#include <optional>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/simulation.h"
#include "apps/viewer.h"
#include "integrators/trajectory_table.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

Scene LoadWithOverrides(const std::string& path, const CommandLine& line) {
  Scene scene = LoadScene(path);
  if (line.Has("duration")) scene.duration = line.PositiveDouble("duration", scene.duration);
  scene.max_steps = line.PositiveInt64("max-steps", scene.max_steps);
  // The stepper checks the range (StepperSettings::threads).
  scene.mutable_settings().threads = line.PositiveInt("threads", scene.settings().threads);
  return scene;
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

}  // namespace

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line = CommandLine::Parse(
      args, {"solver", "duration", "out", "max-steps", "html", "threads"}, {"json", "quiet"});
  if (line.positional.size() != 1) {
    throw UsageError("simulate needs exactly one SCENE file\n" + UsageText());
  }
  const Scene scene = LoadWithOverrides(line.positional[0], line);
  const std::string variant = line.Value("solver", scene.variant());
  if (!scene.TakesVariant(variant)) Scene(scene).ApplyVariant(variant);  // throws, saying why
  std::ofstream csv, html;
  if (line.Has("out")) {
    csv.open(line.Value("out", ""));
    if (!csv) throw InputError("cannot write " + line.Value("out", ""));
  }
  std::optional<ViewerRun> viewer;
  if (line.Has("html")) {
    if (!ViewerAvailable()) ViewerRun(scene, variant).WriteHtml(html);  // throws, saying why
    html.open(line.Value("html", ""));
    if (!html) throw InputError("cannot write " + line.Value("html", ""));
    viewer.emplace(scene, variant);
  }
  TrajectoryTable table;
  ProgressLine progress(std::cerr, isatty(STDERR_FILENO) == 1, scene.duration);
  int64_t steps = 0, failed = 0;
  const SimulationStats stats =
      RunScene(scene, variant, [&](const StepRecord& record, const SceneRunner& runner) {
        if (csv.is_open()) table.Add(record, runner.stepper(), !runner.fired().empty());
        if (viewer) viewer->Add(record, runner.stepper());
        if (line.Has("quiet")) return;
        failed += record.summary.IsSolved() ? 0 : 1;
        progress.Update(++steps, runner.num_steps(), record.time, failed);
      });
  progress.Finish();
  if (csv.is_open()) {
    table.WriteCsv(csv);
    CloseOrThrow(&csv, line.Value("out", ""));
  }
  if (viewer) {
    viewer->WriteHtml(html);
    CloseOrThrow(&html, line.Value("html", ""));
  }
  return Report(stats, line, out);
}

int RunViewCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line = CommandLine::Parse(args, {"html"}, {});
  if (line.positional.size() != 2 || !line.Has("html")) {
    throw UsageError("view needs SCENE TRAJ.csv --html OUT.html\n" + UsageText());
  }
  const Scene scene = LoadScene(line.positional[0]);
  const ViewerRun run = ViewerRun::FromCsv(scene, line.positional[1]);
  std::ofstream html(line.Value("html", ""));
  if (!html) throw InputError("cannot write " + line.Value("html", ""));
  run.WriteHtml(html);
  CloseOrThrow(&html, line.Value("html", ""));
  out << line.Value("html", "") << ": " << run.frames().size() << " steps of " << scene.name
      << "\n";
  return 0;
}

int RunCompareCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args, {"solvers", "csv", "duration", "max-steps", "threads"}, {});
  if (line.positional.empty()) throw UsageError("compare needs SCENE files\n" + UsageText());
  std::vector<std::string> variants;  // empty: each scene's defaults
  if (line.Has("solvers")) {
    // Each name applies to the scenes whose stepper takes it.
    variants = SplitList(line.Value("solvers", ""));
    if (variants.empty()) throw UsageError("--solvers needs at least one name");
    for (const std::string& v : variants) RequireKnownVariant(v);
  }
  std::vector<Scene> scenes;
  for (const std::string& path : line.positional) scenes.push_back(LoadWithOverrides(path, line));
  const std::vector<SimulationStats> stats = CompareScenes(scenes, variants, std::cerr);
  PrintStatsTable(stats, out);
  if (line.Has("csv")) {
    std::ofstream csv(line.Value("csv", ""));
    if (!csv) throw InputError("cannot write " + line.Value("csv", ""));
    WriteStatsCsv(stats, csv);
    CloseOrThrow(&csv, line.Value("csv", ""));
  }
  return 0;
}

}  // namespace ncpkit
