// The simulate, compare and demo commands' runs: every scene with its variants, the statistics
// as a table, CSV or JSON, and a long run's progress line.
#ifndef NCPKIT_APPS_SIMULATION_H_
#define NCPKIT_APPS_SIMULATION_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "apps/side_by_side.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"

namespace ncpkit {

// Every scene with every variant its stepper takes (empty `variants`: each scene's
// DefaultVariants()); one progress line per run on `progress`. With `quality`, each run is also
// measured by the trajectory meter (apps/side_by_side.h), one row per run.
std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress,
                                           std::vector<QualityRow>* quality = nullptr);

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

}  // namespace ncpkit

#endif  // NCPKIT_APPS_SIMULATION_H_
