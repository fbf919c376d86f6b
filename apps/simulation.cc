#include "apps/simulation.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "apps/report.h"
#include "integrators/trajectory_table.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// VmHWM of /proc/self/status: the peak resident memory of this process image (kB), or -1.
int64_t PeakResidentKilobytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

}  // namespace

namespace {

// Median of positive values in constant memory: a histogram with bins 1 % wide on a log
// scale from 1e-3 to 1e9 (here µs per step), so a run of any length keeps the same memory.
// The median is the geometric centre of its bin: within 0.5 % of the exact one.
class LogHistogram {
 public:
  void Add(double value) {
    // (NaN and values below the range go to the first bin.)
    const double position = value > kLowest ? std::log(value / kLowest) / std::log(kRatio) : 0.0;
    const size_t bin = static_cast<size_t>(std::min<double>(std::max(position, 0.0), kBins - 1));
    ++counts_[bin];
    ++total_;
  }
  double Median() const {
    if (total_ == 0) return 0.0;
    int64_t seen = 0;
    for (size_t bin = 0; bin < counts_.size(); ++bin) {
      seen += counts_[bin];
      if (2 * seen > total_) return kLowest * std::pow(kRatio, static_cast<double>(bin) + 0.5);
    }
    return 0.0;
  }

 private:
  static constexpr double kLowest = 1e-3, kRatio = 1.01;
  static constexpr size_t kBins = 2800;  // 1e-3 * 1.01^2800 > 1e9
  std::vector<int64_t> counts_ = std::vector<int64_t>(kBins, 0);
  int64_t total_ = 0;
};

// Per-step figures of a run, summarized into SimulationStats in constant memory.
class StatsAccumulator {
 public:
  StatsAccumulator(const std::string& scene, const std::string& variant)
      : start_(std::chrono::steady_clock::now()) {
    stats_.scene = scene;
    stats_.variant = variant;
  }
  void Add(double time, const SolverSummary& summary, double penetration, double seconds) {
    ++stats_.steps;
    if (!summary.IsSolved()) {
      if (stats_.failed_steps == 0) {
        std::ostringstream os;
        os << "step " << stats_.steps << " (t = " << time << " s): " << ToString(summary.status)
           << ", natural residual " << Format("%.3e", summary.natural_residual);
        if (!summary.message.empty()) os << ": " << summary.message;
        stats_.first_failure = os.str();
      }
      ++stats_.failed_steps;
    }
    // NaN must not hide in a max: a non-finite residual or penetration is reported as inf.
    stats_.max_residual = std::isnan(summary.natural_residual)
                              ? std::numeric_limits<double>::infinity()
                              : std::max(stats_.max_residual, summary.natural_residual);
    stats_.max_penetration = std::isnan(penetration)
                                 ? std::numeric_limits<double>::infinity()
                                 : std::max(stats_.max_penetration, penetration);
    const double us = seconds * 1e6;
    times_.Add(us);
    stats_.max_us = std::max(stats_.max_us, us);
    ++iterations_[summary.iterations];  // distinct counts only: bounded by the solver's cap
    stats_.max_iterations = std::max(stats_.max_iterations, summary.iterations);
  }
  SimulationStats Finish() {
    stats_.median_us = times_.Median();
    int64_t seen = 0;
    for (const auto& [iterations, count] : iterations_) {
      seen += count;
      if (2 * seen > stats_.steps) {
        stats_.median_iterations = iterations;
        break;
      }
    }
    stats_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    stats_.peak_rss_kb = PeakResidentKilobytes();
    return stats_;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  SimulationStats stats_;
  LogHistogram times_;
  std::map<int, int64_t> iterations_;
};

}  // namespace

SimulationStats RunScene(
    const Scene& scene, const std::string& variant,
    const std::function<void(const StepRecord&, const SceneRunner&)>& on_step) {
  Scene run = scene;
  run.ApplyVariant(variant);
  StatsAccumulator stats(scene.name, variant);
  SceneRunner runner(run);
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    stats.Add(record.time, record.summary, record.max_penetration, record.step_seconds);
    if (on_step) on_step(record, runner);
  }
  return stats.Finish();
}

std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress) {
  std::vector<std::pair<const Scene*, std::string>> runs;
  for (const Scene& scene : scenes) {
    for (const std::string& variant :
         variants.empty() ? DefaultVariants(scene.stepper) : variants) {
      if (!scene.TakesVariant(variant)) continue;
      // A variant the scene cannot be stepped with (qp-lcp without regularization) is skipped,
      // saying why.
      try {
        Scene probe = scene;
        probe.ApplyVariant(variant);
        MakeStepper(probe);
      } catch (const InputError& e) {
        progress << scene.name << " with " << variant << ": skipped (" << e.what() << ")\n";
        continue;
      }
      runs.emplace_back(&scene, variant);
    }
  }
  std::vector<SimulationStats> stats;
  int done = 0;
  for (const auto& [scene, variant] : runs) {
    progress << "[" << ++done << "/" << runs.size() << "] " << scene->name << " with " << variant
             << " ..." << std::flush;
    int64_t steps = 0;
    const int64_t total_steps = CountSteps(scene->duration, scene->h(), scene->max_steps);
    stats.push_back(RunScene(*scene, variant, [&](const StepRecord&, const SceneRunner&) {
      if (++steps % 500 == 0) progress << " " << (100 * steps / total_steps) << "%" << std::flush;
    }));
    progress << " " << stats.back().wall_seconds << " s\n";
  }
  return stats;
}

void PrintStatsTable(const std::vector<SimulationStats>& stats, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s %-19s %6s %6s %9s %9s %11s %11s %10s %11s\n", "scene",
                "solver", "steps", "failed", "it(med)", "it(max)", "us/step(med)", "us/step(max)",
                "max resid", "max penetr");
  out << line;
  for (const SimulationStats& s : stats) {
    std::snprintf(line, sizeof(line),
                  "%-22s %-19s %6lld %6lld %9d %9d %11.1f %11.1f %10.2e %11.2e\n", s.scene.c_str(),
                  s.variant.c_str(), static_cast<long long>(s.steps),
                  static_cast<long long>(s.failed_steps), s.median_iterations, s.max_iterations,
                  s.median_us, s.max_us, s.max_residual, s.max_penetration);
    out << line;
  }
}

void WriteStatsCsv(const std::vector<SimulationStats>& stats, std::ostream& out) {
  out << "scene,solver,steps,failed_steps,median_iterations,max_iterations,median_us,max_us,"
         "max_residual,max_penetration,first_failure\n";
  for (const SimulationStats& s : stats) {
    out << CsvField(s.scene) << "," << CsvField(s.variant) << "," << s.steps << ","
        << s.failed_steps << "," << s.median_iterations << "," << s.max_iterations << ","
        << s.median_us << "," << s.max_us << "," << s.max_residual << "," << s.max_penetration
        << "," << CsvField(s.first_failure) << "\n";
  }
}

std::string StatsJson(const SimulationStats& s) {
  std::ostringstream os;
  os << "{\"scene\": " << JsonString(s.scene) << ", \"solver\": " << JsonString(s.variant)
     << ", \"steps\": " << s.steps << ", \"failed_steps\": " << s.failed_steps
     << ", \"max_natural_residual\": " << JsonNumber(s.max_residual)
     << ", \"max_penetration\": " << JsonNumber(s.max_penetration)
     << ", \"median_us_per_step\": " << JsonNumber(s.median_us)
     << ", \"max_us_per_step\": " << JsonNumber(s.max_us)
     << ", \"median_iterations\": " << s.median_iterations
     << ", \"max_iterations\": " << s.max_iterations
     << ", \"first_failure\": " << JsonString(s.first_failure)
     << ", \"peak_rss_kb\": " << (s.peak_rss_kb >= 0 ? std::to_string(s.peak_rss_kb) : "null")
     << "}";
  return os.str();
}

ProgressLine::ProgressLine(std::ostream& out, bool terminal, double end_time)
    : out_(out), terminal_(terminal), end_time_(end_time) {
  start_ = Elapsed();
}

double ProgressLine::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ProgressLine::Update(int64_t step, int64_t total_steps, double time, int64_t failed_steps) {
  const double now = Elapsed();
  if (now - start_ < 1.0 || (last_ >= 0.0 && now - last_ < (terminal_ ? 0.25 : 5.0))) return;
  last_ = now;
  char line[160];
  std::snprintf(line, sizeof(line), "t = %.4g of %.4g s, step %lld of %lld, %lld failed, %.0f s",
                time, end_time_, static_cast<long long>(step), static_cast<long long>(total_steps),
                static_cast<long long>(failed_steps), now - start_);
  out_ << (terminal_ ? "\r" : "") << "ncpkit: " << line << (terminal_ ? "" : "\n") << std::flush;
  written_ = true;
}

void ProgressLine::Finish() {
  if (written_ && terminal_) out_ << "\n" << std::flush;
}

std::string SceneDirectory() {
  if (const char* dir = std::getenv("NCPKIT_SCENES")) return dir;
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed =
        program.parent_path().parent_path() / "share" / "ncpkit" / "scenes";
    if (std::filesystem::is_directory(installed, error)) return installed.string();
  }
  return NCPKIT_SCENE_DIR;
}

}  // namespace ncpkit
