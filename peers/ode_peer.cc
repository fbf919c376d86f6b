// ODE 0.16 (Debian libode-dev, double precision) as a peer of planes, boxes, spheres, capsules
// and convex hulls (dCreateConvex, its faces and vertices): dWorldQuickStep (its iterative
// solver, 20 sweeps by default), a hash space, up to 8 contact points per pair from dCollide, and
// Coulomb friction as ODE's pyramid scaled by the normal force (dContactApprox1). Everything else
// at ODE's defaults (ERP 0.2, CFM 1e-5).
#include <ode/ode.h>

#include <deque>
#include <stdexcept>
#include <vector>

#include "dynamics/shapes/polyhedron.h"
#include "peers/engine_peers.h"

namespace ncpkit::peers {
namespace {

constexpr int kMaxContactsPerPair = 8;
// A capsule's axis is x in ncpkit, z in ODE: this turns z onto x.
const Eigen::Quaterniond kTurn(Eigen::AngleAxisd(0.5 * 3.14159265358979323846,
                                                 Eigen::Vector3d::UnitY()));

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
    RequirePeerScene(scene, "ode",
                     {ShapeKind::HalfSpace, ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Capsule,
                      ShapeKind::Polyhedron},
                     false);
    InitializeOde();
    world_ = dWorldCreate();
    space_ = dHashSpaceCreate(nullptr);
    contact_group_ = dJointGroupCreate(0);
    const Eigen::Vector3d g = scene.gravity();
    dWorldSetGravity(world_, g.x(), g.y(), g.z());
    for (const Body& body : scene.bodies) {
      const Eigen::Matrix3d R = body.state.orientation.toRotationMatrix();
      dGeomID geom = MakeGeom(body, R);
      dBodyID id = nullptr;
      if (!body.fixed) {
        id = dBodyCreate(world_);
        dMass mass;
        const Eigen::Matrix3d& I = body.mass.body_inertia;
        dMassSetParameters(&mass, body.mass.mass, 0, 0, 0, I(0, 0), I(1, 1), I(2, 2), I(0, 1),
                           I(0, 2), I(1, 2));
        dBodySetMass(id, &mass);
        dGeomSetBody(geom, id);
        if (body.shape.kind == ShapeKind::Capsule) {
          const dQuaternion turn = {kTurn.w(), kTurn.x(), kTurn.y(), kTurn.z()};
          dGeomSetOffsetQuaternion(geom, turn);
        }
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
        const Eigen::Quaterniond q = body.shape.kind == ShapeKind::Capsule
                                         ? body.state.orientation * kTurn
                                         : body.state.orientation;
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
  dGeomID MakeGeom(const Body& body, const Eigen::Matrix3d& R) {
    const Eigen::VectorXd& size = body.shape.size;
    switch (body.shape.kind) {
      case ShapeKind::HalfSpace: {
        const Eigen::Vector3d n = R.col(2);
        return dCreatePlane(space_, n.x(), n.y(), n.z(), n.dot(body.state.position));
      }
      case ShapeKind::Box:
        return dCreateBox(space_, size.x(), size.y(), size.z());
      case ShapeKind::Sphere:
        return dCreateSphere(space_, size[0]);
      case ShapeKind::Capsule:  // ODE's axis is z: the geom is turned by kTurn
        return dCreateCapsule(space_, size[0], size[1]);
      case ShapeKind::Polyhedron:
        return MakeConvex(*body.shape.polyhedron);
      default:
        throw std::invalid_argument("ode: unsupported shape");
    }
  }

  // ODE keeps pointers to the planes, points and polygons: they live as long as the world.
  dGeomID MakeConvex(const ConvexPolyhedron& p) {
    std::vector<dReal>& planes = planes_.emplace_back();
    std::vector<dReal>& points = points_.emplace_back();
    std::vector<unsigned int>& polygons = polygons_.emplace_back();
    for (const ConvexPolyhedron::Face& face : p.faces) {
      planes.insert(planes.end(), {face.normal.x(), face.normal.y(), face.normal.z(), face.offset});
      polygons.push_back(static_cast<unsigned int>(face.vertices.size()));
      for (int v : face.vertices) polygons.push_back(static_cast<unsigned int>(v));
    }
    for (const Eigen::Vector3d& v : p.vertices) points.insert(points.end(), {v.x(), v.y(), v.z()});
    return dCreateConvex(space_, planes.data(), static_cast<unsigned int>(p.faces.size()),
                         points.data(), static_cast<unsigned int>(p.vertices.size()),
                         polygons.data());
  }

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
  // The convex geoms' data, by geom (a deque keeps each in place as more are added).
  std::deque<std::vector<dReal>> planes_, points_;
  std::deque<std::vector<unsigned int>> polygons_;
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
