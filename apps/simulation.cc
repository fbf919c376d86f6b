#include "apps/simulation.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>
#include <variant>

#include "apps/report.h"
#include "integrators/trajectory_table.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress,
                                           std::vector<QualityRow>* quality) {
  std::vector<std::pair<const Scene*, std::string>> runs;
  for (const Scene& scene : scenes) {
    for (const std::string& variant : variants.empty() ? scene.DefaultVariants() : variants) {
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
    // Measured only when asked for (the demo is not).
    std::optional<TrajectoryQualityMeter> meter;
    if (quality != nullptr) meter.emplace(MakeQualityMeter(*scene));
    std::vector<RigidBodyState> states;
    int64_t contacts = 0;
    stats.push_back(
        RunScene(*scene, variant, [&](const StepRecord& record, const SceneRunner& runner) {
          if (++steps % 500 == 0)
            progress << " " << (100 * steps / total_steps) << "%" << std::flush;
          if (quality == nullptr) return;
          contacts += record.num_contacts;
          states.clear();
          for (const Body& body : runner.stepper().bodies()) states.push_back(body.state);
          meter->Add(states);
        }));
    progress << " " << stats.back().wall_seconds << " s\n";
    if (quality == nullptr) continue;
    const SimulationStats& s = stats.back();
    QualityRow row;
    row.scene = s.scene;
    row.who = s.variant;
    row.steps = s.steps;
    row.failed_steps = s.failed_steps;
    row.us_per_step = s.median_us;
    row.contacts_per_step =
        static_cast<double>(contacts) / static_cast<double>(std::max<int64_t>(1, s.steps));
    row.quality = meter->Result();
    quality->push_back(row);
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

std::string StatsJson(const SimulationStats& stats) {
  std::ostringstream os;
  const char* separator = "{";
  for (const auto& [name, value] : StatsFields(stats)) {
    os << separator << JsonString(name) << ": ";
    separator = ", ";
    if (const auto* integer = std::get_if<int64_t>(&value)) {
      os << *integer;
    } else if (const auto* number = std::get_if<double>(&value)) {
      os << JsonNumber(*number);
    } else if (const auto* text = std::get_if<std::string>(&value)) {
      os << JsonString(*text);
    } else {
      os << "null";
    }
  }
  os << "}";
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

}  // namespace ncpkit
