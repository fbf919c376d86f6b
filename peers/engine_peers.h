// Physics engines as peers of the explicit stepper in the benchmarks and in `ncpkit compare`
// (optional, see CMakeLists.txt): ODE (libode-dev), Bullet (libbullet-dev) and MuJoCo
// (libmujoco-dev) step the same scene files, each with its own defaults but for what the scene
// fixes (time step, gravity, friction coefficient, no restitution, no sleeping), so that cost per
// step and the quality of the trajectory (integrators/trajectory_quality.h) are compared in one
// run. MuJoCo also steps an MJCF file itself, the file ncpkit read the scene from.
#ifndef NCPKIT_PEERS_ENGINE_PEERS_H_
#define NCPKIT_PEERS_ENGINE_PEERS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynamics/body.h"
#include "integrators/scene.h"

namespace ncpkit::peers {

// One engine's world built from a scene.
class PeerWorld {
 public:
  virtual ~PeerWorld() = default;
  // One time step of the scene's h.
  virtual void Step() = 0;
  // The states of the scene's bodies, in the scene's order (fixed bodies keep their state).
  virtual void ReadStates(std::vector<RigidBodyState>* states) const = 0;
  // Contact points the engine used in its latest step.
  virtual int Contacts() const = 0;
  // Where the engine's model of the scene differs from ncpkit's (a body's mass, ...), one line
  // each; empty when they agree.
  virtual std::string Differences() const { return ""; }
};

struct PeerEngine {
  std::string name;     // "ode", "bullet", "mujoco"
  std::string details;  // the engine's settings, as the README quotes them
  // Throws std::invalid_argument for scenes the adapter does not take (shapes it has no
  // counterpart of; scripted impulses; actuators; a moving plane).
  std::function<std::unique_ptr<PeerWorld>(const Scene&)> make;
  // The engine's world from the MJCF file `path` read by the engine itself, its bodies reported
  // as those of `scene` (LoadMjcfScene of the same file): empty for engines that read no MJCF.
  std::function<std::unique_ptr<PeerWorld>(const std::string& path, const Scene& scene)>
      make_from_mjcf;
};

// The engines this benchmark program was built with (possibly none).
const std::vector<PeerEngine>& PeerEngines();

// Checks what every adapter needs of a scene; throws std::invalid_argument, naming `engine`,
// otherwise: shapes among `shapes`, no impulses or actuators, every pair's friction the scene's
// default mu (the adapters set one coefficient), and, with `principal_axes`, moving bodies'
// inertia diagonal in their body frames.
void RequirePeerScene(const Scene& scene, const std::string& engine,
                      const std::vector<ShapeKind>& shapes, bool principal_axes);

#ifdef NCPKIT_HAVE_ODE
PeerEngine OdeEngine();
#endif
#ifdef NCPKIT_HAVE_BULLET
PeerEngine BulletEngine();
#endif
#ifdef NCPKIT_HAVE_MUJOCO
PeerEngine MujocoEngine();
#endif

}  // namespace ncpkit::peers

#endif  // NCPKIT_PEERS_ENGINE_PEERS_H_
