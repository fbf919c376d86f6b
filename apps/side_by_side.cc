#include "apps/side_by_side.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <string>

#include "integrators/scene_runner.h"
#include "peers/engine_peers.h"

namespace ncpkit {

TrajectoryQualityMeter MakeQualityMeter(const Scene& scene) {
  TrajectoryQualityMeter meter(scene.bodies, scene.gravity());
  const int64_t steps = CountSteps(scene.duration, scene.h(), scene.max_steps);
  meter.SetSettleStart(static_cast<int>(std::ceil(0.75 * static_cast<double>(steps))));
  return meter;
}

namespace {

QualityRow RunPeer(const peers::PeerEngine& engine, const std::string& path, const Scene& scene) {
  QualityRow row;
  row.scene = scene.name;
  row.who = engine.name;
  TrajectoryQualityMeter meter = MakeQualityMeter(scene);
  const int64_t steps = CountSteps(scene.duration, scene.h(), scene.max_steps);
  std::vector<RigidBodyState> states;
  double seconds = 0.0, contacts = 0.0;
  try {
    const std::unique_ptr<peers::PeerWorld> world = engine.make_from_mjcf(path, scene);
    row.differences = world->Differences();
    for (; row.steps < steps; ++row.steps) {
      const auto start = std::chrono::steady_clock::now();
      world->Step();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      contacts += world->Contacts();
      world->ReadStates(&states);
      meter.Add(states);
    }
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  const double n = static_cast<double>(std::max<int64_t>(1, row.steps));
  row.us_per_step = 1e6 * seconds / n;
  row.contacts_per_step = contacts / n;
  row.quality = meter.Result();
  return row;
}

}  // namespace

std::vector<QualityRow> RunPeersOnMjcf(const std::string& path, const Scene& scene,
                                       std::ostream& progress) {
  std::vector<QualityRow> rows;
  for (const peers::PeerEngine& engine : peers::PeerEngines()) {
    if (!engine.make_from_mjcf) continue;
    progress << scene.name << " with " << engine.name << " (" << path << ") ..." << std::flush;
    rows.push_back(RunPeer(engine, path, scene));
    progress << (rows.back().error.empty() ? " done\n" : " stopped: " + rows.back().error + "\n");
  }
  return rows;
}

void PrintQualityTable(const std::vector<QualityRow>& rows, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s %-19s %6s %6s %11s %9s %12s %13s %10s\n", "scene", "who",
                "steps", "failed", "us/step", "contacts", "deepest(mm)", "energy rise(J)",
                "drift(mm)");
  out << line;
  for (const QualityRow& r : rows) {
    const TrajectoryQuality& q = r.quality;
    std::snprintf(line, sizeof(line), "%-22s %-19s %6lld %6lld %11.1f %9.1f %12.3g %13.3g %10.3g\n",
                  r.scene.c_str(), r.who.c_str(), static_cast<long long>(r.steps),
                  static_cast<long long>(r.failed_steps), r.us_per_step, r.contacts_per_step,
                  1e3 * q.max_penetration, q.max_energy_rise, 1e3 * q.settled_drift);
    out << line;
    if (!r.error.empty()) out << "  " << r.who << " stopped: " << r.error << "\n";
    std::istringstream differences(r.differences);
    for (std::string text; std::getline(differences, text);) {
      out << "  " << r.who << " differs: " << text << "\n";
    }
  }
}

}  // namespace ncpkit
