// Bullet 3.24 (Debian libbullet-dev, single precision, as games use it) as a peer of planes,
// boxes, spheres, capsules (btCapsuleShapeX) and convex hulls (btConvexHullShape): a
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

// The body's shape in Bullet, and the turn from ncpkit's body frame to Bullet's (a convex
// hull's principal axes: Bullet takes a diagonal inertia). Convex hulls get a collision margin
// of 1 mm (Bullet's default, 4 cm, would inflate a 10 cm rock by that much).
std::unique_ptr<btCollisionShape> MakeShape(const Body& body, Eigen::Matrix3d* principal,
                                            std::vector<std::unique_ptr<btCollisionShape>>* parts) {
  *principal = Eigen::Matrix3d::Identity();
  const Eigen::Matrix3d R = body.state.orientation.toRotationMatrix();
  switch (body.shape.kind) {
    case ShapeKind::HalfSpace: {
      const Eigen::Vector3d n = R.col(2);
      return std::make_unique<btStaticPlaneShape>(ToBullet(n), n.dot(body.state.position));
    }
    case ShapeKind::Box:
      return std::make_unique<btBoxShape>(ToBullet(0.5 * body.shape.size));
    case ShapeKind::Sphere:
      return std::make_unique<btSphereShape>(body.shape.size[0]);
    case ShapeKind::Capsule:
      return std::make_unique<btCapsuleShapeX>(body.shape.size[0], body.shape.size[1]);
    case ShapeKind::Polyhedron:
      break;
    default:
      throw std::invalid_argument("bullet: unsupported shape");
  }
  auto hull = std::make_unique<btConvexHullShape>();
  for (const Eigen::Vector3d& v : body.shape.polyhedron->vertices) {
    hull->addPoint(ToBullet(v), false);
  }
  hull->recalcLocalAabb();
  hull->setMargin(0.001);
  if (body.fixed || body.mass.body_inertia.isDiagonal(1e-12 * body.mass.body_inertia.norm())) {
    return hull;
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(body.mass.body_inertia);
  *principal = eigen.eigenvectors();
  if (principal->determinant() < 0.0) principal->col(2) *= -1.0;
  // The hull in the principal frame: a compound of one child turned by principal^T.
  const Eigen::Quaterniond turn(principal->transpose());
  auto compound = std::make_unique<btCompoundShape>();
  btTransform child;
  child.setIdentity();
  child.setRotation(btQuaternion(turn.x(), turn.y(), turn.z(), turn.w()));
  compound->addChildShape(child, hull.get());
  parts->push_back(std::move(hull));
  return compound;
}

class BulletWorld : public PeerWorld {
 public:
  explicit BulletWorld(const Scene& scene) : h_(scene.h()) {
    RequirePeerScene(scene, "bullet",
                     {ShapeKind::HalfSpace, ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Capsule,
                      ShapeKind::Polyhedron},
                     false);
    configuration_ = std::make_unique<btDefaultCollisionConfiguration>();
    dispatcher_ = std::make_unique<btCollisionDispatcher>(configuration_.get());
    broad_phase_ = std::make_unique<btDbvtBroadphase>();
    solver_ = std::make_unique<btSequentialImpulseConstraintSolver>();
    world_ = std::make_unique<btDiscreteDynamicsWorld>(dispatcher_.get(), broad_phase_.get(),
                                                       solver_.get(), configuration_.get());
    world_->setGravity(ToBullet(scene.gravity()));
    const double friction = std::sqrt(scene.laws.default_law.mu);
    for (const Body& body : scene.bodies) AddBody(body, friction);
  }
  ~BulletWorld() override {
    for (auto& body : bodies_) world_->removeRigidBody(body.get());
  }

  void Step() override { world_->stepSimulation(h_, 0, h_); }

  void ReadStates(std::vector<RigidBodyState>* states) const override { ReadBulletStates(states); }

  int Contacts() const override {
    int n = 0;
    for (int k = 0; k < dispatcher_->getNumManifolds(); ++k) {
      n += dispatcher_->getManifoldByIndexInternal(k)->getNumContacts();
    }
    return n;
  }

 private:
  void AddBody(const Body& body, double friction) {
    Eigen::Matrix3d principal;
    std::unique_ptr<btCollisionShape> shape = MakeShape(body, &principal, &shapes_);
    btTransform transform;
    transform.setIdentity();
    if (body.shape.kind != ShapeKind::HalfSpace) {
      const Eigen::Quaterniond q(body.state.orientation.toRotationMatrix() * principal);
      transform.setOrigin(ToBullet(body.state.position));
      transform.setRotation(btQuaternion(q.x(), q.y(), q.z(), q.w()));
    }
    const double mass = body.fixed ? 0.0 : body.mass.mass;
    btVector3 inertia(0, 0, 0);
    if (!body.fixed) {
      // The principal moments (in the principal frame for a turned hull).
      inertia = ToBullet((principal.transpose() * body.mass.body_inertia * principal).diagonal());
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
    principal_.push_back(principal);
  }

  void ReadBulletStates(std::vector<RigidBodyState>* states) const {
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
      s.orientation = Eigen::Quaterniond(
          Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z()).normalized().toRotationMatrix() *
          principal_[i].transpose());
      s.linear_velocity = Eigen::Vector3d(v.x(), v.y(), v.z());
      s.angular_velocity = Eigen::Vector3d(w.x(), w.y(), w.z());
    }
  }

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
  std::vector<Eigen::Matrix3d> principal_;  // Bullet's body axes in ncpkit's, per body
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
