#include "integrators/scene_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace ncpkit {

SceneRunner::SceneRunner(const Scene& scene)
    : scene_(scene),
      stepper_(MakeStepper(scene)),
      armed_(scene.impulses.size(), 1),
      done_(scene.impulses.size(), 0),
      previous_(scene.impulses.size(), std::nan("")),
      impulses_(scene.bodies.size(), Vector6d::Zero()) {
  num_steps_ = CountSteps(scene.duration, scene.h(), scene.max_steps);
  fired_.reserve(scene.impulses.size());
}

// Whether impulse k acts in the step starting at t (and its trigger's bookkeeping).
bool SceneRunner::Fires(size_t k, double t) {
  const ImpulseEvent& e = scene_.impulses[k];
  const double h = stepper_->h();
  if (e.timed) {
    const bool fire = !done_[k] && t >= e.at - 0.5 * h;
    if (fire) done_[k] = 1;
    return fire;
  }
  const double value = StateQuantity(stepper_->bodies()[e.watch].state, e.quantity) - e.value;
  const double before = previous_[k];
  const bool reached =
      std::abs(value) <= e.tolerance ||
      (std::isfinite(before) && std::abs(before) > e.tolerance && (before > 0.0) != (value > 0.0));
  previous_[k] = value;
  if (reached && armed_[k] && !done_[k] && t >= e.after - 0.5 * h) {
    armed_[k] = 0;
    if (!e.repeat) done_[k] = 1;
    return true;
  }
  if (!reached) armed_[k] = 1;
  return false;
}

const StepRecord& SceneRunner::Step() {
  const double t = stepper_->time();
  bool any = false;
  fired_.clear();
  for (size_t k = 0; k < scene_.impulses.size(); ++k) {
    if (!Fires(k, t)) continue;
    const ImpulseEvent& e = scene_.impulses[k];
    if (!any) std::fill(impulses_.begin(), impulses_.end(), Vector6d::Zero());
    impulses_[e.body] += e.impulse;
    fired_.push_back({t, static_cast<int>(k)});
    any = true;
  }
  ++step_;
  return any ? stepper_->Step(impulses_) : stepper_->Step();
}

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
  void Add(const StepRecord& record) {
    Add(record.time, record.summary, record.max_penetration, record.step_seconds);
    stats_.max_islands = std::max(stats_.max_islands, record.islands);
    stats_.failed_islands += record.failed_islands;
    ++contacts_[record.num_contacts];
    stats_.max_contacts = std::max(stats_.max_contacts, record.num_contacts);
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
    ++iterations_[summary.iterations];
    stats_.max_iterations = std::max(stats_.max_iterations, summary.iterations);
  }
  SimulationStats Finish() {
    stats_.median_us = times_.Median();
    stats_.median_iterations = MedianOf(iterations_);
    stats_.median_contacts = MedianOf(contacts_);
    stats_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    stats_.peak_rss_kb = PeakResidentKilobytes();
    return stats_;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  SimulationStats stats_;
  LogHistogram times_;
  // The median of counts kept as {value: steps}, over stats_.steps.
  int MedianOf(const std::map<int, int64_t>& counts) const {
    int64_t seen = 0;
    for (const auto& [value, count] : counts) {
      seen += count;
      if (2 * seen > stats_.steps) return value;
    }
    return 0;
  }

  std::map<int, int64_t> iterations_;  // distinct counts only: bounded by the solver's cap
  std::map<int, int64_t> contacts_;    // distinct counts only: at most the largest count
};

}  // namespace

SimulationStats RunScene(const Scene& scene, const std::string& variant,
                         const std::function<void(const StepRecord&, const SceneRunner&)>& on_step,
                         const std::function<void(SceneRunner&)>& on_start) {
  Scene run = scene;
  run.ApplyVariant(variant);
  StatsAccumulator stats(scene.name, variant);
  SceneRunner runner(run);
  if (on_start) on_start(runner);
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    stats.Add(record);
    if (on_step) on_step(record, runner);
  }
  return stats.Finish();
}

std::vector<std::pair<const char*, StatsValue>> StatsFields(const SimulationStats& s) {
  return {{"scene", s.scene},
          {"solver", s.variant},
          {"steps", s.steps},
          {"failed_steps", s.failed_steps},
          {"max_natural_residual", s.max_residual},
          {"max_penetration", s.max_penetration},
          {"median_us_per_step", s.median_us},
          {"max_us_per_step", s.max_us},
          {"median_iterations", int64_t{s.median_iterations}},
          {"max_iterations", int64_t{s.max_iterations}},
          {"median_contacts", int64_t{s.median_contacts}},
          {"max_contacts", int64_t{s.max_contacts}},
          {"islands", int64_t{s.max_islands}},
          {"failed_islands", s.failed_islands},
          {"first_failure", s.first_failure},
          {"wall_seconds", s.wall_seconds},
          {"peak_rss_kb", s.peak_rss_kb >= 0 ? StatsValue(s.peak_rss_kb) : StatsValue()}};
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
