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

#include "integrators/quasistatic_scene.h"
#include "integrators/scene.h"

namespace ncpkit {

// The solver variants `compare` runs by default (see ApplySolverVariant in scene.h).
const std::vector<std::string>& DefaultCompareVariants();

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

// Runs `scene` (its duration and solver may have been overridden by the caller); `on_step`
// (optional) sees every record and the runner after the step.
SimulationStats RunScene(const Scene& scene, const std::string& variant,
                         const std::function<void(const StepRecord&, const SceneRunner&)>& on_step);

// Runs a quasistatic scene with a variant "<model>/<solver>[-cold]" (quasistatic_scene.h).
SimulationStats RunQuasistaticScene(
    const QuasistaticScene& scene, const std::string& variant,
    const std::function<void(const QuasistaticStepRecord&, const QuasistaticStepper&)>& on_step);

// A quasistatic trajectory as CSV: t; per moving body x, y, z, qw, qx, qy, qz; per actuator q
// and q_cmd; per body pair that ever had contact points the sums cn (normal force, N) and cf
// (friction force magnitudes, N), phi (smallest signed distance at the end of the step, m) and
// the number of points (empty while the pair has none); solver iterations, residual, time_us,
// status.
class QuasistaticTrajectoryTable {
 public:
  void Add(const QuasistaticStepRecord& record, const QuasistaticStepper& stepper);
  void WriteCsv(std::ostream& out) const;

 private:
  struct PairSum {
    double normal = 0.0, friction = 0.0;
    double distance = std::numeric_limits<double>::infinity();
    int count = 0;
  };
  struct Row {
    double t;
    std::vector<double> bodies, actuators;
    std::map<std::pair<int, int>, PairSum> pairs;
    int iterations;
    double residual, time_us;
    std::string status;
  };
  std::vector<std::string> names_, actuators_;
  std::vector<bool> moving_;
  std::vector<Row> rows_;
};

// Collects a trajectory and writes it as CSV: t; per body x, y, z, qw, qx, qy, qz, vx, vy, vz,
// wx, wy, wz; per contact pair that was ever active ax, ay, az, pn, pt, po, pr, n_active, gap
// (empty while the pair is not active); solver iterations, residual, time_us, status; energy
// (kinetic + gravitational potential of the moving bodies, J) and impulse (1 if a scripted
// impulse acted in the step).
class TrajectoryTable {
 public:
  void Add(const StepRecord& record, const SceneRunner& runner);
  void WriteCsv(std::ostream& out) const;

 private:
  struct Row {
    double t;
    std::vector<double> bodies;
    std::vector<ContactRecord> contacts;
    double energy;  // kinetic + gravitational potential of the moving bodies (J)
    bool impulse;   // a scripted impulse acted in the step
    int iterations;
    double residual, time_us;
    std::string status;
  };
  std::vector<std::string> body_names_;  // empty for fixed bodies
  std::vector<std::string> all_names_;
  std::vector<Row> rows_;
};

// Every scene with every variant; one progress line per run on `progress`.
std::vector<SimulationStats> CompareScenes(const std::vector<Scene>& scenes,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress);

void PrintStatsTable(const std::vector<SimulationStats>& stats, std::ostream& out);
void WriteStatsCsv(const std::vector<SimulationStats>& stats, std::ostream& out);
std::string StatsJson(const SimulationStats& stats);

// Folder of the bundled scene files (the source tree's scenes/, or $NCPKIT_SCENES).
std::string SceneDirectory();

}  // namespace ncpkit

#endif  // NCPKIT_APPS_SIMULATION_H_
