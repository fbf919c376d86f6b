// The explicit stepper against physics engines on the same scene files (BM_Engine/<scene>/<who>):
// `who` is an ncpkit variant ("cone/nsgs", ...) or a peer engine built in (peers/engine_peers.h).
// One benchmark iteration steps the whole scene; the counters give the time per step and, from one
// untimed run before the timing (every engine here is deterministic), the quality of that
// trajectory measured the same way for everyone (integrators/trajectory_quality.h): deepest
// overlap, largest energy rise in a step, drift over the last quarter of the run, largest
// rotation, and for the sliding cube the error against the analytic slide.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/peer_guard.h"
#include "integrators/mjcf.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "integrators/trajectory_quality.h"
#include "peers/engine_peers.h"
#include "readers/text_scanner.h"

namespace ncpkit::bench {

using peers::PeerEngine;
using peers::PeerEngines;
using peers::PeerWorld;

namespace {

std::string ScenePath(const std::string& file) {
  return std::string(NCPKIT_SCENE_DIR) + "/" + file;
}

// A scene file as the explicit stepper takes it ("stepper": "explicit" added to a paper scene).
Scene LoadExplicitScene(const std::string& file) {
  if (IsMjcfPath(file)) {
    // An MJCF model is an explicit scene; it has no duration of its own (the piles settle in
    // 2 s).
    Scene scene = LoadScene(ScenePath(file));
    scene.duration = 2.0;
    return scene;
  }
  std::string text = internal::ReadTextFile(ScenePath(file));
  if (text.find("\"explicit\"") == std::string::npos) {
    text.insert(text.find('{') + 1, "\"stepper\": \"explicit\",");
  }
  return ParseScene(text, file);
}

// Whoever steps the scene: the explicit stepper with a variant, or a peer engine.
// `who`: a peer's name, or an ncpkit variant with an optional "@N": at most N sweeps or
// iterations a step (SolverOptions::max_iterations), the fixed budget engines step with; then
// optional ",threads=T" (the step on T threads; the trajectory is the same for any T) and
// ",tolerance=E" (the solver's tolerance instead of the scene's), in that order.
class Runner {
 public:
  // `file`: the scene's file (an engine that reads MJCF steps an MJCF file itself).
  Runner(const Scene& scene, const std::string& file, const std::string& who) : scene_(scene) {
    for (const PeerEngine& engine : PeerEngines()) {
      if (engine.name != who) continue;
      peer_ = engine.make_from_mjcf && IsMjcfPath(file)
                  ? engine.make_from_mjcf(ScenePath(file), scene_)
                  : engine.make(scene_);
    }
    if (peer_ == nullptr) {
      const size_t comma = who.find(',');
      const std::string variant = who.substr(0, comma);
      const size_t at = variant.find('@');
      scene_.ApplyVariant(variant.substr(0, at));
      if (at != std::string::npos) {
        scene_.options<ExplicitStepperOptions>().max_iterations = std::stoi(variant.substr(at + 1));
      }
      const std::string threads_key = ",threads=", tolerance_key = ",tolerance=";
      if (const size_t t = who.find(threads_key); t != std::string::npos) {
        scene_.mutable_settings().threads = std::stoi(who.substr(t + threads_key.size()));
      }
      if (const size_t t = who.find(tolerance_key); t != std::string::npos) {
        scene_.mutable_settings().tolerance = std::stod(who.substr(t + tolerance_key.size()));
      }
      runner_ = std::make_unique<SceneRunner>(scene_);
    }
  }
  int64_t num_steps() const {
    return static_cast<int64_t>(std::llround(scene_.duration / scene_.h()));
  }
  // One step; false if the step's problem was not solved (ncpkit variants).
  bool Step(int* contacts) {
    if (peer_ != nullptr) {
      peer_->Step();
      *contacts = peer_->Contacts();
      return true;
    }
    const StepRecord& record = runner_->Step();
    *contacts = record.num_contacts;
    return record.summary.IsSolved();
  }
  void ReadStates(std::vector<RigidBodyState>* states) const {
    if (peer_ != nullptr) {
      peer_->ReadStates(states);
      return;
    }
    const std::vector<Body>& bodies = runner_->stepper().bodies();
    states->resize(bodies.size());
    for (size_t i = 0; i < bodies.size(); ++i) (*states)[i] = bodies[i].state;
  }

 private:
  Scene scene_;
  std::unique_ptr<PeerWorld> peer_;
  std::unique_ptr<SceneRunner> runner_;
};

// What the untimed run measures, in the order Measure returns it.
enum Measure {
  kFailed,
  kContacts,
  kPenetration,
  kEnergyRise,
  kDrift,
  kRotation,
  kSlideError,
  kNumMeasures
};

// The untimed run that measures the trajectory; throws what the runner throws.
std::vector<double> MeasureRun(const Scene& scene, const std::string& file,
                               const std::string& who) {
  Runner runner(scene, file, who);
  const int64_t steps = runner.num_steps();
  TrajectoryQualityMeter meter(scene.bodies, scene.gravity());
  meter.SetSettleStart(static_cast<int>(std::ceil(0.75 * static_cast<double>(steps))));
  std::vector<RigidBodyState> states;
  std::vector<double> times;
  std::vector<Eigen::Vector3d> positions;
  const int cube = scene.FindBody("cube");  // the sliding cube's, sampled at whole seconds
  int64_t failed = 0, contacts = 0;
  for (int64_t k = 1; k <= steps; ++k) {
    int n = 0;
    failed += runner.Step(&n) ? 0 : 1;
    contacts += n;
    runner.ReadStates(&states);
    meter.Add(states);
    const double t = static_cast<double>(k) * scene.h();
    if (cube >= 0 && std::abs(t - std::round(t)) < 0.5 * scene.h()) {
      times.push_back(t);
      positions.push_back(states[static_cast<size_t>(cube)].position);
    }
  }
  const TrajectoryQuality& quality = meter.Result();
  std::vector<double> measures(kNumMeasures, std::nan(""));
  measures[kFailed] = static_cast<double>(failed);
  measures[kContacts] = static_cast<double>(contacts) / static_cast<double>(steps);
  measures[kPenetration] = quality.max_penetration;
  measures[kEnergyRise] = quality.max_energy_rise;
  measures[kDrift] = quality.settled_drift;
  measures[kRotation] = quality.max_rotation;
  if (file == "sliding_cube.json" && cube >= 0) {
    const Body& body = scene.bodies[static_cast<size_t>(cube)];
    measures[kSlideError] =
        SlideError(body.state.position, body.state.linear_velocity, scene.laws.default_law.mu,
                   -scene.gravity().z(), times, positions);
  }
  return measures;
}

bool IsPeer(const std::string& who) {
  for (const PeerEngine& engine : PeerEngines()) {
    if (engine.name == who) return true;
  }
  return false;
}

void BM_Engine(benchmark::State& state, const std::string& file, const std::string& who) {
  const Scene scene = LoadExplicitScene(file);
  // The untimed run that measures the trajectory. A peer's runs first in a child process under
  // the peer limits (peer_guard.h), since a peer may grow or run without bound; once it is known
  // to end within them it runs again here, so that the timed runs start as warm as ncpkit's.
  if (IsPeer(who)) {
    const bench::GuardedResult guarded = bench::RunGuarded(
        [&]() { return MeasureRun(scene, file, who); }, bench::PeerLimits::FromEnvironment());
    if (!guarded.ok) {
      state.SkipWithError(guarded.why.c_str());
      return;
    }
  }
  std::vector<double> measures;
  try {
    measures = MeasureRun(scene, file, who);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::unique_ptr<Runner> runner;
  int64_t steps = 0;
  double step_seconds = 0.0;
  int64_t timed_steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    runner = std::make_unique<Runner>(scene, file, who);
    steps = runner->num_steps();
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    int n = 0;
    try {
      for (int64_t k = 0; k < steps; ++k) runner->Step(&n);
    } catch (const std::exception& e) {  // a peer's warning in a timed run too
      state.SkipWithError(e.what());
      break;
    }
    step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timed_steps += steps;
  }
  if (state.error_occurred()) return;
  state.counters["us/step"] =
      1e6 * step_seconds / static_cast<double>(std::max<int64_t>(1, timed_steps));
  state.counters["contacts/step"] = measures[kContacts];
  state.counters["failed"] = measures[kFailed];
  state.counters["penetration_mm"] = 1e3 * measures[kPenetration];
  state.counters["energy_rise_J"] = measures[kEnergyRise];
  state.counters["drift_mm"] = 1e3 * measures[kDrift];
  state.counters["rotation_deg"] = measures[kRotation] * 180.0 / M_PI;
  if (!std::isnan(measures[kSlideError])) {
    state.counters["slide_error_pct"] = 100.0 * measures[kSlideError];
  }
}

int RegisterEngineBenchmarks() {
  struct Entry {
    const char* file;
    std::vector<std::string> variants;
  };
  const Entry entries[] = {
      {"sliding_cube.json",
       {"cone/nsgs-velocity", "cone/nsgs", "cone/auto", "pyramid/lemke", "relaxed/lemke"}},
      {"engine/stack50.json",
       {"cone/nsgs-velocity", "cone/nsgs-velocity@10", "cone/nsgs-velocity@20", "cone/nsgs",
        "cone/fc-newton-fb", "convex/convex-newton,tolerance=1e-8"}},
      {"engine/pile200.json",
       {"cone/nsgs-velocity@5", "cone/nsgs-velocity@5,threads=2", "cone/nsgs-velocity@10",
        "cone/nsgs-velocity@20", "convex/convex-newton,tolerance=1e-8"}},
      {"engine/wall100.json",
       {"cone/nsgs-velocity", "cone/nsgs-velocity@20", "cone/nsgs-velocity@20,threads=2",
        "convex/convex-newton,tolerance=1e-8"}},
      // MJCF models: MuJoCo steps the file itself; ODE and Bullet the scene ncpkit reads.
      {"engine/capsules200.xml",
       {"cone/nsgs-velocity@20", "convex/convex-newton", "convex/convex-newton,tolerance=1e-8"}},
      {"engine/rocks200.xml",
       {"cone/nsgs-velocity@20", "convex/convex-newton", "convex/convex-newton,tolerance=1e-8"}},
  };
  for (const Entry& entry : entries) {
    std::vector<std::string> who = entry.variants;
    for (const PeerEngine& engine : PeerEngines()) who.push_back(engine.name);
    for (const std::string& w : who) {
      const std::string name = std::string("BM_Engine/") + entry.file + "/" + w;
      benchmark::RegisterBenchmark(name.c_str(), BM_Engine, std::string(entry.file), w)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return 0;
}
const int kEngineRegistered = RegisterEngineBenchmarks();

}  // namespace
}  // namespace ncpkit::bench
