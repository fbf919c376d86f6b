// The physics engines built in as peers (peers/engine_peers.h; none when no engine was found):
// each reports the scene's bodies in ncpkit's frames at the start, and keeps a capsule lying on
// its side and a convex rock lying on a face where they lie, so that the figures quoted against
// them measure their contacts, not a mistaken frame.
#include "peers/engine_peers.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "integrators/scene.h"

namespace ncpkit {
namespace engine_peers_test {

// A capsule on its side (turned about z), a box, and a rock: a wedge lying on its largest face
// (its centroid, the body's position, a third of its height up), its inertia not diagonal in its
// body frame.
const char* const kResting = R"({
  "stepper": "explicit", "h": 0.005, "duration": 1.0, "contact": {"mu": 0.8},
  "bodies": [
    {"name": "capsule", "shape": "capsule", "size": [0.05, 0.3], "mass": 1,
     "position": [0, 0, 0.05], "orientation": [0.9659258, 0, 0, 0.2588190]},
    {"name": "box", "shape": "box", "size": [0.2, 0.1, 0.1], "mass": 1,
     "position": [1, 0, 0.05]},
    {"name": "rock", "shape": "convex", "mass": 1, "position": [2.1, 0.1, 0.0333333333333333],
     "vertices": [[0, 0, 0], [0.3, 0, 0], [0, 0.2, 0], [0.3, 0.2, 0], [0, 0, 0.1], [0, 0.2, 0.1]]}
  ],
  "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]}]
})";

TEST_CASE("every built-in engine holds resting capsules, boxes and rocks where they lie") {
  const Scene scene = ParseScene(kResting, "resting.json");
  MESSAGE(peers::PeerEngines().size(), " engines built in");
  for (const peers::PeerEngine& engine : peers::PeerEngines()) {
    CAPTURE(engine.name);
    const std::unique_ptr<peers::PeerWorld> world = engine.make(scene);
    std::vector<RigidBodyState> states;
    world->ReadStates(&states);
    for (size_t i = 0; i < states.size(); ++i) {
      CAPTURE(scene.bodies[i].name);
      CHECK((states[i].position - scene.bodies[i].state.position).norm() < 1e-6);
      CHECK(states[i].orientation.angularDistance(scene.bodies[i].state.orientation) < 1e-6);
    }
    for (int k = 0; k < 200; ++k) world->Step();
    world->ReadStates(&states);
    for (size_t i = 0; i < states.size(); ++i) {
      if (scene.bodies[i].fixed) continue;
      CAPTURE(scene.bodies[i].name);
      // Each engine rests its bodies in contact with some overlap or gap of its own (soft
      // contacts, margins), millimetres at most; a mistaken frame would stand a capsule on its
      // end or tip the rock over, decimetres.
      CHECK((states[i].position - scene.bodies[i].state.position).norm() < 5e-3);
      CHECK(states[i].orientation.angularDistance(scene.bodies[i].state.orientation) < 0.02);
      CHECK(states[i].linear_velocity.norm() < 0.05);
    }
  }
}

}  // namespace engine_peers_test
}  // namespace ncpkit
