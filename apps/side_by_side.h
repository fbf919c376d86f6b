// `compare` on one footing for every run: each ncpkit variant, and each peer engine that reads
// MJCF (MuJoCo, when built in) stepping the very file the scene was read from, measured by one
// trajectory meter (integrators/trajectory_quality.h): deepest overlap, largest energy rise in a
// step, drift over the last quarter of the run, and the cost per step.
#ifndef NCPKIT_APPS_SIDE_BY_SIDE_H_
#define NCPKIT_APPS_SIDE_BY_SIDE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/trajectory_quality.h"

namespace ncpkit {

struct QualityRow {
  std::string scene, who;  // who: an ncpkit variant or an engine's name
  int64_t steps = 0, failed_steps = 0;
  double us_per_step = 0.0, contacts_per_step = 0.0;
  TrajectoryQuality quality;
  std::string error;  // why a peer stopped (a warning of its own), else ""
  // Where a peer's model of the scene differs from ncpkit's (PeerWorld::Differences).
  std::string differences;
};

// The meter for a run of `scene`: drift measured from three quarters of its steps.
TrajectoryQualityMeter MakeQualityMeter(const Scene& scene);

// Every built-in engine that reads MJCF, stepping the file `path` for the scene's duration (the
// scene: `path` as ncpkit read it, with the command's overrides); one progress line per run.
std::vector<QualityRow> RunPeersOnMjcf(const std::string& path, const Scene& scene,
                                       std::ostream& progress);

void PrintQualityTable(const std::vector<QualityRow>& rows, std::ostream& out);

}  // namespace ncpkit

#endif  // NCPKIT_APPS_SIDE_BY_SIDE_H_
