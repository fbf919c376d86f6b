// Bullet 3.24 (Debian libbullet-dev, single precision, as games use it) as a peer: a
// btDiscreteDynamicsWorld with the dynamic AABB tree broad phase and the sequential-impulse
// solver at its defaults (10 iterations, split impulse for penetration recovery), one fixed
// step per Step(). Friction: Bullet multiplies the two bodies' coefficients, so every body gets
// sqrt(mu). Sleeping is off (the stepper solves resting contacts every step; a sleeping stack
// would cost nothing).
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "peers/engine_peers.h"

namespace ncpkit::peers {
namespace {

btVector3 ToBullet(const Eigen::Vector3d& v) { return btVector3(v.x(), v.y(), v.z()); }

class BulletWorld : public PeerWorld {
 public:
  explicit BulletWorld(const Scene& scene) : h_(scene.h()) {
    RequirePeerScene(scene, "bullet", {ShapeKind::HalfSpace, ShapeKind::Box, ShapeKind::Sphere},
                     true);
    configuration_ = std::make_unique<btDefaultCollisionConfiguration>();
    dispatcher_ = std::make_unique<btCollisionDispatcher>(configuration_.get());
    broad_phase_ = std::make_unique<btDbvtBroadphase>();
    solver_ = std::make_unique<btSequentialImpulseConstraintSolver>();
    world_ = std::make_unique<btDiscreteDynamicsWorld>(dispatcher_.get(), broad_phase_.get(),
                                                       solver_.get(), configuration_.get());
    world_->setGravity(ToBullet(scene.gravity()));
    const double friction = std::sqrt(scene.laws.default_law.mu);
    for (const Body& body : scene.bodies) {
      const Eigen::Matrix3d R = body.state.orientation.toRotationMatrix();
      std::unique_ptr<btCollisionShape> shape;
      btTransform transform;
      transform.setIdentity();
      switch (body.shape.kind) {
        case ShapeKind::HalfSpace: {
          const Eigen::Vector3d n = R.col(2);
          shape = std::make_unique<btStaticPlaneShape>(ToBullet(n), n.dot(body.state.position));
          break;
        }
        case ShapeKind::Box:
          shape = std::make_unique<btBoxShape>(ToBullet(0.5 * body.shape.size));
          break;
        case ShapeKind::Sphere:
          shape = std::make_unique<btSphereShape>(body.shape.size[0]);
          break;
        default:
          throw std::invalid_argument("bullet: unsupported shape");
      }
      if (body.shape.kind != ShapeKind::HalfSpace) {
        const Eigen::Quaterniond& q = body.state.orientation;
        transform.setOrigin(ToBullet(body.state.position));
        transform.setRotation(btQuaternion(q.x(), q.y(), q.z(), q.w()));
      }
      const double mass = body.fixed ? 0.0 : body.mass.mass;
      btVector3 inertia(0, 0, 0);
      if (!body.fixed) {
        // The principal moments in the body frame (the shapes here have diagonal inertia).
        inertia = ToBullet(body.mass.body_inertia.diagonal());
      }
      btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape.get(), inertia);
      info.m_startWorldTransform = transform;
      info.m_friction = friction;
      info.m_restitution = 0.0;
      auto rigid = std::make_unique<btRigidBody>(info);
      if (!body.fixed) {
        rigid->setLinearVelocity(ToBullet(body.state.linear_velocity));
        rigid->setAngularVelocity(ToBullet(body.state.angular_velocity));
        rigid->setActivationState(DISABLE_DEACTIVATION);
      }
      world_->addRigidBody(rigid.get());
      shapes_.push_back(std::move(shape));
      bodies_.push_back(std::move(rigid));
      fixed_states_.push_back(body.state);
      fixed_.push_back(body.fixed);
    }
  }
  ~BulletWorld() override {
    for (auto& body : bodies_) world_->removeRigidBody(body.get());
  }

  void Step() override { world_->stepSimulation(h_, 0, h_); }

  void ReadStates(std::vector<RigidBodyState>* states) const override {
    states->resize(bodies_.size());
    for (size_t i = 0; i < bodies_.size(); ++i) {
      RigidBodyState& s = (*states)[i];
      if (fixed_[i]) {
        s = fixed_states_[i];
        continue;
      }
      const btTransform& t = bodies_[i]->getCenterOfMassTransform();
      const btVector3 p = t.getOrigin();
      const btQuaternion q = t.getRotation();
      const btVector3 v = bodies_[i]->getLinearVelocity();
      const btVector3 w = bodies_[i]->getAngularVelocity();
      s.position = Eigen::Vector3d(p.x(), p.y(), p.z());
      s.orientation = Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z()).normalized();
      s.linear_velocity = Eigen::Vector3d(v.x(), v.y(), v.z());
      s.angular_velocity = Eigen::Vector3d(w.x(), w.y(), w.z());
    }
  }

  int Contacts() const override {
    int n = 0;
    for (int k = 0; k < dispatcher_->getNumManifolds(); ++k) {
      n += dispatcher_->getManifoldByIndexInternal(k)->getNumContacts();
    }
    return n;
  }

 private:
  double h_;
  std::unique_ptr<btDefaultCollisionConfiguration> configuration_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btBroadphaseInterface> broad_phase_;
  std::unique_ptr<btSequentialImpulseConstraintSolver> solver_;
  std::unique_ptr<btDiscreteDynamicsWorld> world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<RigidBodyState> fixed_states_;
  std::vector<bool> fixed_;
};

}  // namespace

PeerEngine BulletEngine() {
  return {"bullet",
          "Bullet 3.24 (float): btDiscreteDynamicsWorld, DBVT broad phase, sequential impulses "
          "(10 iterations, split impulse), friction sqrt(mu) per body, sleeping off",
          [](const Scene& scene) -> std::unique_ptr<PeerWorld> {
            return std::make_unique<BulletWorld>(scene);
          },
          nullptr};
}

}  // namespace ncpkit::peers
