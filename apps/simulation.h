// Running scenes for the simulate, compare and demo commands: solver variants, per-run
// statistics and the trajectory table.
#ifndef NCPKIT_APPS_SIMULATION_H_
#define NCPKIT_APPS_SIMULATION_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"

namespace ncpkit {

struct SimulationStats {
  std::string scene, variant;
  int64_t steps = 0, failed_steps = 0;
  std::string first_failure;  // "step k (t = ...): <solver message>"
  double max_residual = 0.0;  // natural residual, over all steps
  double max_penetration = 0.0;
  // Whole step (assembly + solve); the median within 0.5 % (a histogram: constant memory).
  double median_us = 0.0, max_us = 0.0;
  int median_iterations = 0, max_iterations = 0;
  double wall_seconds = 0.0;
  // Peak resident memory of the process so far (kB; VmHWM of /proc/self/status, -1 if the
  // system does not say), for checking that long runs keep their memory flat.
  int64_t peak_rss_kb = -1;
};

// Runs `scene` (its duration may have been overridden by the caller) with `variant` (one the
// scene's stepper takes, Scene::TakesVariant); `on_step` (optional) sees every record and the
// runner after the step.
SimulationStats RunScene(const Scene& scene, const std::string& variant,
                         const std::function<void(const StepRecord&, const SceneRunner&)>& on_step);

// Every scene with every variant its stepper takes (empty `variants`: each scene's
// DefaultVariants()); one progress line per run on `progress`.
std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress);

void PrintStatsTable(const std::vector<SimulationStats>& stats, std::ostream& out);
void WriteStatsCsv(const std::vector<SimulationStats>& stats, std::ostream& out);
std::string StatsJson(const SimulationStats& stats);

// Progress of a long run on a stream (stderr): nothing for the first second, then the simulated
// time, the step and the failed steps so far, rewritten in place on a terminal every 0.25 s,
// one line every 5 s otherwise; Finish() ends the line if one was written.
class ProgressLine {
 public:
  ProgressLine(std::ostream& out, bool terminal, double end_time);
  void Update(int64_t step, int64_t total_steps, double time, int64_t failed_steps);
  void Finish();

 private:
  double Elapsed() const;

  std::ostream& out_;
  bool terminal_;
  double end_time_;
  double start_ = 0.0, last_ = -1.0;
  bool written_ = false;
};

// Folder of the bundled scene files: $NCPKIT_SCENES if set; else, for an installed program,
// share/ncpkit/scenes beside its bin/ folder; else the source tree's scenes/.
std::string SceneDirectory();

}  // namespace ncpkit

#endif  // NCPKIT_APPS_SIMULATION_H_
