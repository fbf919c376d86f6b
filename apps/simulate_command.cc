#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/simulation.h"
#include "apps/viewer.h"
#include "integrators/explicit_stepper.h"
#include "integrators/mjcf.h"
#include "integrators/trajectory_derivatives.h"
#include "integrators/trajectory_table.h"
#include "readers/fclib_writer.h"
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

// --save-problems DIR: every island problem of an explicit scene's cone or convex model as an
// FCLib file, DIR/<scene file stem>-<step>-<island>-<pass>.hdf5 (pass 2, 3, ... where a step
// searched its pairs again and solved the island again), with the impulses found as its
// /solution. The names depend on neither the threads nor the order islands are solved in.
class ProblemSaver {
 public:
  ProblemSaver(const std::string& directory, const std::string& scene_path)
      : directory_(directory), stem_(std::filesystem::path(scene_path).stem().string()) {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error || !std::filesystem::is_directory(directory_)) {
      throw InputError("--save-problems: cannot create the folder " + directory_);
    }
  }
  void Attach(SceneRunner& runner) {
    auto* stepper = dynamic_cast<ExplicitStepper*>(&runner.mutable_stepper());
    if (stepper == nullptr ||
        (stepper->model() != ExplicitModel::Cone && stepper->model() != ExplicitModel::Convex)) {
      throw InputError(
          "--save-problems: takes explicit scenes of the cone or convex model (their steps pose "
          "global frictional contact problems); this run is " +
          runner.stepper().variant());
    }
    stepper->SetProblemObserver([this](int island, const GlobalFrictionContactProblem& problem,
                                       const Eigen::VectorXd& r) { Save(island, problem, r); });
  }
  // After each step: a write that failed (on a worker thread) is thrown here.
  void StepDone() {
    ++step_;
    passes_.clear();
    if (!failure_.empty()) throw InputError(failure_);
  }
  int saved() const { return saved_; }

 private:
  void Save(int island, const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r) {
    const int pass = ++passes_[island];
    char name[64];
    std::snprintf(name, sizeof(name), "-%06lld-%04d-%d.hdf5", static_cast<long long>(step_ + 1),
                  island, pass);
    const std::string path = (std::filesystem::path(directory_) / (stem_ + name)).string();
    try {
      WriteFclibGlobal(
          path, problem,
          stem_ + " step " + std::to_string(step_ + 1) + " island " + std::to_string(island), &r);
      ++saved_;
    } catch (const std::exception& e) {
      if (failure_.empty()) failure_ = e.what();
    }
  }

  std::string directory_, stem_;
  int64_t step_ = 0;
  int saved_ = 0;
  std::map<int, int> passes_;
  std::string failure_;
};

// --gradient COLUMN [--wrt a,b,...]: the run's step derivatives, then the gradient of COLUMN at
// the last step with respect to each name of --wrt (default every name there is).
class GradientPrinter {
 public:
  explicit GradientPrinter(const CommandLine& line)
      : column_(line.Value("gradient", "")), wrt_(SplitList(line.Value("wrt", ""))) {
    if (line.Has("wrt") && wrt_.empty()) throw UsageError("--wrt needs at least one name");
  }
  // After each step; the first checks the names (Gradient() throws for an unknown column or
  // --wrt name, listing those there are), so that a misspelt one stops the run at once.
  void Add(const Stepper& stepper) {
    derivatives_.Add(stepper);
    if (derivatives_.steps() > 1) return;
    if (wrt_.empty()) wrt_ = derivatives_.WrtNames();
    derivatives_.Gradient({{column_, Eigen::VectorXd::Zero(1)}}, wrt_);
  }
  void Print(bool json, std::ostream& out) const {
    Eigen::VectorXd weight = Eigen::VectorXd::Zero(derivatives_.steps());
    weight(weight.size() - 1) = 1.0;
    const TrajectoryDerivatives::Result r = derivatives_.Gradient({{column_, weight}}, wrt_);
    if (json) {
      nlohmann::json values = nlohmann::json::object();
      for (const auto& [name, value] : r.values) values[name] = Json(value);
      nlohmann::json line = {{"gradient", column_},
                             {"step", derivatives_.steps()},
                             {"values", values},
                             {"undetermined_steps", r.undetermined_steps},
                             {"degenerate_contacts", r.degenerate_contacts.size()}};
      out << line.dump() << "\n";
      return;
    }
    out << "gradient of " << column_ << " after step " << derivatives_.steps() << "\n";
    for (const auto& [name, value] : r.values) {
      out << "  d/d " << name << " =";
      if (value.rows() > 1 && value.cols() > 1) {
        out << " (" << value.rows() << " x " << value.cols() << "; --json for every entry)";
      } else {
        for (Eigen::Index i = 0; i < value.size(); ++i) out << " " << ExactNumber(value(i));
      }
      out << "\n";
    }
    out << "  steps whose end state the data do not determine: " << r.undetermined_steps.size()
        << "; degenerate contacts: " << r.degenerate_contacts.size() << "\n";
  }

 private:
  static nlohmann::json Json(const Eigen::MatrixXd& value) {
    if (value.size() == 1) return value(0, 0);
    if (value.cols() == 1) return std::vector<double>(value.data(), value.data() + value.size());
    nlohmann::json rows = nlohmann::json::array();
    for (Eigen::Index i = 0; i < value.rows(); ++i) {
      const Eigen::VectorXd row = value.row(i).transpose();
      rows.push_back(std::vector<double>(row.data(), row.data() + row.size()));
    }
    return rows;
  }

  std::string column_;
  std::vector<std::string> wrt_;
  TrajectoryDerivatives derivatives_;
};

}  // namespace

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line = CommandLine::Parse(args,
                                              {"solver", "duration", "out", "max-steps", "html",
                                               "threads", "save-problems", "gradient", "wrt"},
                                              {"json", "quiet"});
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
  std::optional<ProblemSaver> saver;
  if (line.Has("save-problems")) saver.emplace(line.Value("save-problems", ""), line.positional[0]);
  if (line.Has("wrt") && !line.Has("gradient")) throw UsageError("--wrt needs --gradient COLUMN");
  std::optional<GradientPrinter> gradient;
  if (line.Has("gradient")) gradient.emplace(line);
  TrajectoryTable table;
  ProgressLine progress(std::cerr, isatty(STDERR_FILENO) == 1, scene.duration);
  int64_t steps = 0, failed = 0;
  const auto on_start = [&](SceneRunner& runner) {
    if (saver) saver->Attach(runner);
  };
  const SimulationStats stats = RunScene(
      scene, variant,
      [&](const StepRecord& record, const SceneRunner& runner) {
        if (saver) saver->StepDone();
        if (csv.is_open()) table.Add(record, runner.stepper(), !runner.fired().empty());
        if (viewer) viewer->Add(record, runner.stepper());
        if (gradient) gradient->Add(runner.stepper());
        if (line.Has("quiet")) return;
        failed += record.summary.IsSolved() ? 0 : 1;
        progress.Update(++steps, runner.num_steps(), record.time, failed);
      },
      on_start);
  progress.Finish();
  if (saver && !line.Has("json")) {
    out << saver->saved() << " problems saved in " << line.Value("save-problems", "") << "\n";
  }
  if (csv.is_open()) {
    table.WriteCsv(csv);
    CloseOrThrow(&csv, line.Value("out", ""));
  }
  if (viewer) {
    viewer->WriteHtml(html);
    CloseOrThrow(&html, line.Value("html", ""));
  }
  const int status = Report(stats, line, out);
  if (gradient) gradient->Print(line.Has("json"), out);
  return status;
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

int RunMjcfCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line = CommandLine::Parse(args, {"out"}, {});
  if (line.positional.size() != 1) throw UsageError("mjcf needs one SCENE file\n" + UsageText());
  const std::string xml = WriteMjcf(LoadScene(line.positional[0]));
  if (!line.Has("out")) {
    out << xml;
    return 0;
  }
  std::ofstream file(line.Value("out", ""));
  if (!file) throw InputError("cannot write " + line.Value("out", ""));
  file << xml;
  CloseOrThrow(&file, line.Value("out", ""));
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
  std::vector<QualityRow> quality;
  const std::vector<SimulationStats> stats = CompareScenes(scenes, variants, std::cerr, &quality);
  // Engines that read MJCF step each MJCF file themselves, beside ncpkit's variants.
  for (size_t k = 0; k < scenes.size(); ++k) {
    if (!IsMjcfPath(line.positional[k])) continue;
    for (QualityRow& row : RunPeersOnMjcf(line.positional[k], scenes[k], std::cerr)) {
      quality.push_back(std::move(row));
    }
  }
  PrintStatsTable(stats, out);
  out << "\ntrajectory quality (one meter for every run; us/step: the median for ncpkit, the mean "
         "for engines)\n";
  PrintQualityTable(quality, out);
  if (line.Has("csv")) {
    std::ofstream csv(line.Value("csv", ""));
    if (!csv) throw InputError("cannot write " + line.Value("csv", ""));
    WriteStatsCsv(stats, csv);
    CloseOrThrow(&csv, line.Value("csv", ""));
  }
  return 0;
}

}  // namespace ncpkit
