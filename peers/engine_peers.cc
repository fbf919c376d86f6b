#include "peers/engine_peers.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ncpkit::peers {

void RequirePeerScene(const Scene& scene, const std::string& engine,
                      const std::vector<ShapeKind>& shapes, bool principal_axes) {
  if (!scene.impulses.empty() || !scene.actuators.empty()) {
    throw std::invalid_argument(engine + " takes no scripted impulses or actuators");
  }
  for (const Body& body : scene.bodies) {
    const ShapeKind kind = body.shape.kind;
    if (std::find(shapes.begin(), shapes.end(), kind) == shapes.end()) {
      throw std::invalid_argument(engine + " has no counterpart of the shape of " + body.name);
    }
    if (kind == ShapeKind::HalfSpace && !body.fixed) {
      throw std::invalid_argument("a moving plane: " + body.name);
    }
    const Eigen::Matrix3d& I = body.mass.body_inertia;
    if (principal_axes && !body.fixed && !I.isDiagonal(0.0)) {
      throw std::invalid_argument(engine + " here takes principal body axes: " + body.name);
    }
  }
  const double mu = scene.laws.default_law.mu;
  for (size_t i = 0; i < scene.bodies.size(); ++i) {
    for (size_t j = i + 1; j < scene.bodies.size(); ++j) {
      const ContactLaw& law = scene.laws.Get(scene.bodies[i].name, scene.bodies[j].name);
      if (law.mu != mu || law.restitution != 0.0 || law.compliant()) {
        throw std::invalid_argument(engine +
                                    " takes one friction coefficient, no restitution "
                                    "and no compliance: pair " +
                                    scene.bodies[i].name + ", " + scene.bodies[j].name);
      }
    }
  }
}

const std::vector<PeerEngine>& PeerEngines() {
  static const std::vector<PeerEngine> engines = [] {
    std::vector<PeerEngine> list;
#ifdef NCPKIT_HAVE_ODE
    list.push_back(OdeEngine());
#endif
#ifdef NCPKIT_HAVE_BULLET
    list.push_back(BulletEngine());
#endif
#ifdef NCPKIT_HAVE_MUJOCO
    list.push_back(MujocoEngine());
#endif
    return list;
  }();
  return engines;
}

}  // namespace ncpkit::peers
