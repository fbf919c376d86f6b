// ODE 0.16 (Debian libode-dev, double precision) as a peer: dWorldQuickStep (its iterative
// solver, 20 sweeps by default), a hash space, up to 8 contact points per pair from dCollide, and
// Coulomb friction as ODE's pyramid scaled by the normal force (dContactApprox1). Everything else
// at ODE's defaults (ERP 0.2, CFM 1e-5).
#include <ode/ode.h>

#include <stdexcept>
#include <vector>

#include "peers/engine_peers.h"

namespace ncpkit::peers {
namespace {

constexpr int kMaxContactsPerPair = 8;

// dInitODE2 once for the program (ODE keeps global state; dCloseODE is left to exit).
void InitializeOde() {
  static const bool initialized = [] {
    dInitODE2(0);
    return true;
  }();
  (void)initialized;
}

class OdeWorld : public PeerWorld {
 public:
  explicit OdeWorld(const Scene& scene) : h_(scene.h()), mu_(scene.laws.default_law.mu) {
    RequirePeerScene(scene, "ode", {ShapeKind::HalfSpace, ShapeKind::Box, ShapeKind::Sphere}, true);
    InitializeOde();
    world_ = dWorldCreate();
    space_ = dHashSpaceCreate(nullptr);
    contact_group_ = dJointGroupCreate(0);
    const Eigen::Vector3d g = scene.gravity();
    dWorldSetGravity(world_, g.x(), g.y(), g.z());
    for (const Body& body : scene.bodies) {
      const Eigen::Matrix3d R = body.state.orientation.toRotationMatrix();
      dGeomID geom = nullptr;
      switch (body.shape.kind) {
        case ShapeKind::HalfSpace: {
          const Eigen::Vector3d n = R.col(2);
          geom = dCreatePlane(space_, n.x(), n.y(), n.z(), n.dot(body.state.position));
          break;
        }
        case ShapeKind::Box:
          geom = dCreateBox(space_, body.shape.size.x(), body.shape.size.y(), body.shape.size.z());
          break;
        case ShapeKind::Sphere:
          geom = dCreateSphere(space_, body.shape.size[0]);
          break;
        default:
          throw std::invalid_argument("ode: unsupported shape");
      }
      dBodyID id = nullptr;
      if (!body.fixed) {
        id = dBodyCreate(world_);
        dMass mass;
        const Eigen::Matrix3d& I = body.mass.body_inertia;
        dMassSetParameters(&mass, body.mass.mass, 0, 0, 0, I(0, 0), I(1, 1), I(2, 2), I(0, 1),
                           I(0, 2), I(1, 2));
        dBodySetMass(id, &mass);
        dGeomSetBody(geom, id);
        const Eigen::Vector3d& p = body.state.position;
        dBodySetPosition(id, p.x(), p.y(), p.z());
        const Eigen::Quaterniond& q = body.state.orientation;
        const dQuaternion quaternion = {q.w(), q.x(), q.y(), q.z()};
        dBodySetQuaternion(id, quaternion);
        const Eigen::Vector3d& v = body.state.linear_velocity;
        const Eigen::Vector3d& w = body.state.angular_velocity;
        dBodySetLinearVel(id, v.x(), v.y(), v.z());
        dBodySetAngularVel(id, w.x(), w.y(), w.z());
      } else if (body.shape.kind != ShapeKind::HalfSpace) {
        const Eigen::Vector3d& p = body.state.position;
        dGeomSetPosition(geom, p.x(), p.y(), p.z());
        const Eigen::Quaterniond& q = body.state.orientation;
        const dQuaternion quaternion = {q.w(), q.x(), q.y(), q.z()};
        dGeomSetQuaternion(geom, quaternion);
      }
      bodies_.push_back(id);
      fixed_states_.push_back(body.state);
    }
  }
  ~OdeWorld() override {
    dJointGroupDestroy(contact_group_);
    dSpaceDestroy(space_);
    dWorldDestroy(world_);
  }

  void Step() override {
    contacts_ = 0;
    dSpaceCollide(space_, this, &OdeWorld::NearCallback);
    dWorldQuickStep(world_, h_);
    dJointGroupEmpty(contact_group_);
  }

  void ReadStates(std::vector<RigidBodyState>* states) const override {
    states->resize(bodies_.size());
    for (size_t i = 0; i < bodies_.size(); ++i) {
      RigidBodyState& s = (*states)[i];
      if (bodies_[i] == nullptr) {
        s = fixed_states_[i];
        continue;
      }
      const dReal* p = dBodyGetPosition(bodies_[i]);
      const dReal* q = dBodyGetQuaternion(bodies_[i]);
      const dReal* v = dBodyGetLinearVel(bodies_[i]);
      const dReal* w = dBodyGetAngularVel(bodies_[i]);
      s.position = Eigen::Vector3d(p[0], p[1], p[2]);
      s.orientation = Eigen::Quaterniond(q[0], q[1], q[2], q[3]);
      s.linear_velocity = Eigen::Vector3d(v[0], v[1], v[2]);
      s.angular_velocity = Eigen::Vector3d(w[0], w[1], w[2]);
    }
  }

  int Contacts() const override { return contacts_; }

 private:
  static void NearCallback(void* data, dGeomID a, dGeomID b) {
    auto* self = static_cast<OdeWorld*>(data);
    const dBodyID body_a = dGeomGetBody(a), body_b = dGeomGetBody(b);
    if (body_a == nullptr && body_b == nullptr) return;
    dContact contact[kMaxContactsPerPair];
    const int n = dCollide(a, b, kMaxContactsPerPair, &contact[0].geom, sizeof(dContact));
    for (int k = 0; k < n; ++k) {
      contact[k].surface.mode = dContactApprox1;
      contact[k].surface.mu = self->mu_;
      dJointID joint = dJointCreateContact(self->world_, self->contact_group_, &contact[k]);
      dJointAttach(joint, body_a, body_b);
    }
    self->contacts_ += n;
  }

  double h_, mu_;
  dWorldID world_ = nullptr;
  dSpaceID space_ = nullptr;
  dJointGroupID contact_group_ = nullptr;
  std::vector<dBodyID> bodies_;  // null for fixed bodies
  std::vector<RigidBodyState> fixed_states_;
  int contacts_ = 0;
};

}  // namespace

PeerEngine OdeEngine() {
  return {"ode",
          "ODE 0.16 (double): dWorldQuickStep (20 sweeps, SOR 1.3), hash space, <= 8 points per "
          "pair, dContactApprox1 friction, ERP 0.2, CFM 1e-5",
          [](const Scene& scene) -> std::unique_ptr<PeerWorld> {
            return std::make_unique<OdeWorld>(scene);
          },
          nullptr};
}

}  // namespace ncpkit::peers
