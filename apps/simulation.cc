#include "apps/simulation.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "solvers/solver_registry.h"

namespace ncpkit {
namespace {

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// The shortest decimal that reads back as the same double: a trajectory far from the origin
// (x = 1e5 m) keeps every digit the stepper computed (12 significant digits lost 5e-7 m there).
std::string ExactNumber(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  return std::string(buffer, result.ptr);
}

// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a
// line break; names come from users' scene files.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
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

const std::vector<std::string>& DefaultCompareVariants() {
  static const std::vector<std::string> kVariants = {
      "fb-newton", "fb-newton-dense", "minmap-newton", "penalized-fb", "fb-newton-cold"};
  return kVariants;
}

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
  StatsAccumulator stats(scene.name, variant);
  SceneRunner runner(scene);
  while (!runner.Done()) {
    const StepRecord record = runner.Step();
    stats.Add(record.time, record.summary, record.max_penetration, record.step_seconds);
    if (on_step) on_step(record, runner);
  }
  return stats.Finish();
}

SimulationStats RunQuasistaticScene(
    const QuasistaticScene& scene, const std::string& variant,
    const std::function<void(const QuasistaticStepRecord&, const QuasistaticStepper&)>& on_step) {
  QuasistaticOptions options = scene.options;
  ApplyQuasistaticVariant(variant, &options);
  StatsAccumulator stats(scene.name, variant);
  QuasistaticStepper stepper(scene.system, options);
  const int64_t steps = CountSteps(scene.duration, options.h, scene.max_steps);
  for (int64_t k = 0; k < steps; ++k) {
    const QuasistaticStepRecord record = stepper.Step();
    stats.Add(record.time, record.summary, record.max_penetration, record.step_seconds);
    if (on_step) on_step(record, stepper);
  }
  return stats.Finish();
}

void QuasistaticTrajectoryTable::Add(const QuasistaticStepRecord& record,
                                     const QuasistaticStepper& stepper) {
  if (names_.empty()) {
    for (const QuasistaticBody& b : stepper.bodies()) names_.push_back(b.name);
    for (const Actuator& a : stepper.system().actuators()) actuators_.push_back(a.name);
    for (const QuasistaticBody& b : stepper.bodies()) moving_.push_back(!b.fixed);
  }
  Row row;
  row.t = record.time;
  for (const QuasistaticBody& b : stepper.bodies()) {
    if (b.fixed) continue;
    const double values[7] = {b.position.x(),    b.position.y(),    b.position.z(),
                              b.orientation.w(), b.orientation.x(), b.orientation.y(),
                              b.orientation.z()};
    row.bodies.insert(row.bodies.end(), values, values + 7);
  }
  for (size_t a = 0; a < record.actuator_positions.size(); ++a) {
    row.actuators.push_back(record.actuator_positions[a]);
    row.actuators.push_back(record.actuator_commands[a]);
  }
  for (const QuasistaticContactRecord& c : record.contacts) {
    PairSum& sum = row.pairs[{c.body_a, c.body_b}];
    sum.normal += c.normal_force;
    sum.friction += c.friction_force.norm();
    sum.distance = std::min(sum.distance, c.distance_after);
    ++sum.count;
  }
  row.iterations = record.summary.iterations;
  row.residual = record.summary.natural_residual;
  row.time_us = record.step_seconds * 1e6;
  row.status = ToString(record.summary.status);
  rows_.push_back(std::move(row));
}

void QuasistaticTrajectoryTable::WriteCsv(std::ostream& out) const {
  std::map<std::pair<int, int>, int> pair_column;
  for (const Row& row : rows_) {
    for (const auto& entry : row.pairs) pair_column[entry.first] = 0;
  }
  out << "t";
  for (size_t b = 0; b < names_.size(); ++b) {
    if (!moving_[b]) continue;
    for (const char* q : {"x", "y", "z", "qw", "qx", "qy", "qz"})
      out << "," << CsvField(names_[b] + "." + q);
  }
  for (const std::string& a : actuators_)
    out << "," << CsvField(a + ".q") << "," << CsvField(a + ".q_cmd");
  for (const auto& entry : pair_column) {
    const std::string name = names_[entry.first.first] + "-" + names_[entry.first.second];
    for (const char* q : {"cn", "cf", "phi", "points"}) out << "," << CsvField(name + "." + q);
  }
  out << ",solver.iterations,solver.residual,solver.time_us,solver.status\n";
  const auto number = [](double x) { return ExactNumber(x); };
  for (const Row& row : rows_) {
    out << number(row.t);
    for (double v : row.bodies) out << "," << number(v);
    for (double v : row.actuators) out << "," << number(v);
    for (const auto& entry : pair_column) {
      const auto it = row.pairs.find(entry.first);
      if (it == row.pairs.end()) {
        out << ",,,,";
        continue;
      }
      out << "," << number(it->second.normal) << "," << number(it->second.friction) << ","
          << number(it->second.distance) << "," << it->second.count;
    }
    out << "," << row.iterations << "," << number(row.residual) << "," << number(row.time_us) << ","
        << row.status << "\n";
  }
}

void TrajectoryTable::Add(const StepRecord& record, const SceneRunner& runner) {
  const auto& bodies = runner.stepper().bodies();
  if (body_names_.empty()) {
    for (const Body& b : bodies) body_names_.push_back(b.fixed ? "" : b.name);
  }
  Row row;
  row.t = record.time;
  for (const Body& b : bodies) {
    if (b.fixed) continue;
    const RigidBodyState& s = b.state;
    const double values[13] = {
        s.position.x(),        s.position.y(),         s.position.z(),
        s.orientation.w(),     s.orientation.x(),      s.orientation.y(),
        s.orientation.z(),     s.linear_velocity.x(),  s.linear_velocity.y(),
        s.linear_velocity.z(), s.angular_velocity.x(), s.angular_velocity.y(),
        s.angular_velocity.z()};
    row.bodies.insert(row.bodies.end(), values, values + 13);
  }
  row.contacts = record.contacts;
  const ImplicitStepperOptions& options = runner.stepper().options();
  row.energy = 0.0;
  for (const Body& b : bodies) {
    if (!b.fixed) row.energy += MechanicalEnergy(b.mass, b.state, options.gravity);
  }
  row.impulse = !runner.fired().empty();  // a scripted impulse acted in this step
  row.iterations = record.summary.iterations;
  row.residual = record.summary.natural_residual;
  row.time_us = record.step_seconds * 1e6;
  row.status = ToString(record.summary.status);
  rows_.push_back(std::move(row));
  if (all_names_.empty()) {
    for (const Body& b : bodies) all_names_.push_back(b.name);
  }
}

void TrajectoryTable::WriteCsv(std::ostream& out) const {
  // Pairs that were ever active, in order of (F, G).
  std::map<std::pair<int, int>, int> pair_column;
  for (const Row& row : rows_) {
    for (const ContactRecord& c : row.contacts) pair_column[{c.body_f, c.body_g}] = 0;
  }
  int column = 0;
  for (auto& entry : pair_column) entry.second = column++;
  out << "t";
  for (const std::string& name : body_names_) {
    if (name.empty()) continue;
    for (const char* q :
         {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"}) {
      out << "," << CsvField(name + "." + q);
    }
  }
  for (const auto& entry : pair_column) {
    const std::string name = all_names_[entry.first.first] + "-" + all_names_[entry.first.second];
    for (const char* q : {"ax", "ay", "az", "pn", "pt", "po", "pr", "n_active", "gap"}) {
      out << "," << CsvField(name + "." + q);
    }
  }
  out << ",solver.iterations,solver.residual,solver.time_us,solver.status,energy,impulse\n";
  const auto number = [](double x) { return ExactNumber(x); };
  for (const Row& row : rows_) {
    out << number(row.t);
    for (double v : row.bodies) out << "," << number(v);
    std::vector<const ContactRecord*> by_column(pair_column.size(), nullptr);
    for (const ContactRecord& c : row.contacts)
      by_column[pair_column.at({c.body_f, c.body_g})] = &c;
    for (const ContactRecord* c : by_column) {
      if (c == nullptr) {
        out << ",,,,,,,,,";
        continue;
      }
      out << "," << number(c->ecp.x()) << "," << number(c->ecp.y()) << "," << number(c->ecp.z())
          << "," << number(c->p_n) << "," << number(c->p_t) << "," << number(c->p_o) << ","
          << number(c->p_r) << "," << c->n_active_f << "," << number(c->gap);
    }
    out << "," << row.iterations << "," << number(row.residual) << "," << number(row.time_us) << ","
        << row.status << "," << ExactNumber(row.energy) << "," << (row.impulse ? 1 : 0) << "\n";
  }
}

void PrintStatsTable(const std::vector<SimulationStats>& stats, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s %-16s %6s %6s %9s %9s %11s %11s %10s %11s\n", "scene",
                "solver", "steps", "failed", "it(med)", "it(max)", "us/step(med)", "us/step(max)",
                "max resid", "max penetr");
  out << line;
  for (const SimulationStats& s : stats) {
    std::snprintf(line, sizeof(line),
                  "%-22s %-16s %6lld %6lld %9d %9d %11.1f %11.1f %10.2e %11.2e\n", s.scene.c_str(),
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
  // Strings escaped by nlohmann::json; a non-finite number is written as null (JSON has no inf).
  const auto text = [](const std::string& value) {
    return nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const auto number = [](double value) {
    if (!std::isfinite(value)) return std::string("null");
    std::ostringstream os;
    os.precision(6);
    os << value;
    return os.str();
  };
  std::ostringstream os;
  os << "{\"scene\": " << text(s.scene) << ", \"solver\": " << text(s.variant)
     << ", \"steps\": " << s.steps << ", \"failed_steps\": " << s.failed_steps
     << ", \"max_natural_residual\": " << number(s.max_residual)
     << ", \"max_penetration\": " << number(s.max_penetration)
     << ", \"median_us_per_step\": " << number(s.median_us)
     << ", \"max_us_per_step\": " << number(s.max_us)
     << ", \"median_iterations\": " << s.median_iterations
     << ", \"max_iterations\": " << s.max_iterations
     << ", \"first_failure\": " << text(s.first_failure)
     << ", \"peak_rss_kb\": " << (s.peak_rss_kb >= 0 ? std::to_string(s.peak_rss_kb) : "null")
     << "}";
  return os.str();
}

std::string SceneDirectory() {
  if (const char* dir = std::getenv("NCPKIT_SCENES")) return dir;
  return NCPKIT_SCENE_DIR;
}

}  // namespace ncpkit
