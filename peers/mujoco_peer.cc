// MuJoCo 2.2 (Debian libmujoco-dev) as a peer: the scene written as an MJCF model (WriteMjcf:
// free bodies with the scene's mass and inertia, their geoms with friction mu), or the MJCF file
// the scene was read from, stepped
// by mj_step at MuJoCo's defaults: semi-implicit Euler, pyramidal cones, the Newton solver (100
// iterations, tolerance 1e-8), soft contacts (solref 0.02 1, solimp 0.9 0.95 0.001). The contact
// and constraint buffers are sized for the scene; every MuJoCo warning (a full buffer drops
// contacts) is checked after every step and makes the benchmark an error.
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "integrators/mjcf.h"
#include "peers/engine_peers.h"

namespace ncpkit::peers {
namespace {

// MuJoCo hands its warnings to mju_user_warning, or, without one, appends them to
// MUJOCO_LOG.TXT in the working directory; this handler keeps the latest for the error message
// instead.
std::string& LatestWarning() {
  static std::string text;
  return text;
}

void KeepWarning(const char* text) { LatestWarning() = text; }

void CheckWarnings(const mjData& data) {
  static const char* const kNames[mjNWARNING] = {"near-singular inertia",
                                                 "contact buffer full (contacts dropped)",
                                                 "constraint buffer full (constraints dropped)",
                                                 "visual geom buffer full",
                                                 "bad qpos",
                                                 "bad qvel",
                                                 "bad qacc",
                                                 "bad ctrl"};
  std::string fired;
  for (int k = 0; k < mjNWARNING; ++k) {
    if (data.warning[k].number <= 0) continue;
    fired += (fired.empty() ? "" : ", ") + std::string(kNames[k]) + " (" +
             std::to_string(data.warning[k].number) + "x)";
  }
  if (!fired.empty()) {
    throw std::runtime_error("mujoco warned at t = " + std::to_string(data.time) + ": " + fired +
                             "; last message: " + LatestWarning());
  }
}

// A model file loaded by MuJoCo, its free bodies reported as the moving bodies of `scene` (in
// order: MJCF bodies are read in the order MuJoCo numbers them), each in ncpkit's frame of it:
// its centre of mass and the orientation of ncpkit's body frame, a fixed turn away from MuJoCo's
// body frame (a geom offset in its body, a capsule's axis z instead of x).
class MujocoWorld : public PeerWorld {
 public:
  // `set_velocities`: start at the scene's velocities (a written model); a user's model starts at
  // rest, as MuJoCo's own does.
  MujocoWorld(const std::string& path, const Scene& scene, bool set_velocities) {
    mju_user_warning = &KeepWarning;
    char error[1000] = "";
    model_ = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
    if (model_ == nullptr) throw std::runtime_error("mujoco: " + std::string(error));
    data_ = mj_makeData(model_);
    MatchBodies(scene);
    if (set_velocities) SetVelocities(scene);
    mj_forward(model_, data_);
  }
  ~MujocoWorld() override {
    mj_deleteData(data_);
    mj_deleteModel(model_);
  }
  MujocoWorld(const MujocoWorld&) = delete;
  MujocoWorld& operator=(const MujocoWorld&) = delete;

  // A step after which MuJoCo has warned (a full contact or constraint buffer drops contacts;
  // bad numbers in qpos, qvel or qacc reset the state) throws: the run's figures would not be
  // those of the scene.
  void Step() override {
    mj_step(model_, data_);
    CheckWarnings(*data_);
  }

  void ReadStates(std::vector<RigidBodyState>* states) const override {
    *states = start_;
    for (size_t i = 0; i < joint_of_.size(); ++i) {
      if (joint_of_[i] >= 0) (*states)[i] = State(i);
    }
  }

  int Contacts() const override { return data_->ncon; }

  std::string Differences() const override { return differences_; }

 private:
  // Free joint j: qpos [p, q] of the body frame, qvel [v of the body origin (world), omega (body
  // frame)].
  const mjtNum* Qpos(int joint) const { return data_->qpos + model_->jnt_qposadr[joint]; }
  mjtNum* Qvel(int joint) const { return data_->qvel + model_->jnt_dofadr[joint]; }

  // The body's frame from its joint's qpos, and its centre of mass in it.
  void Frame(size_t i, Eigen::Vector3d* origin, Eigen::Quaterniond* turn,
             Eigen::Vector3d* com_offset) const {
    const mjtNum* q = Qpos(joint_of_[i]);
    const int body = model_->jnt_bodyid[joint_of_[i]];
    *origin = Eigen::Vector3d(q[0], q[1], q[2]);
    *turn = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized();
    *com_offset = *turn * Eigen::Vector3d(model_->body_ipos + 3 * body);
  }

  RigidBodyState State(size_t i) const {
    Eigen::Vector3d origin, offset;
    Eigen::Quaterniond turn;
    Frame(i, &origin, &turn, &offset);
    const mjtNum* v = Qvel(joint_of_[i]);
    RigidBodyState s;
    s.position = origin + offset;
    s.orientation = (turn * frame_[i]).normalized();
    s.angular_velocity = turn * Eigen::Vector3d(v[3], v[4], v[5]);
    s.linear_velocity = Eigen::Vector3d(v[0], v[1], v[2]) + s.angular_velocity.cross(offset);
    return s;
  }

  // The k-th free joint is the k-th moving body's; its centre of mass must be where the scene's
  // body is.
  void MatchBodies(const Scene& scene) {
    std::vector<int> free;
    for (int j = 0; j < model_->njnt; ++j) {
      if (model_->jnt_type[j] == mjJNT_FREE) free.push_back(j);
    }
    size_t next = 0;
    for (const Body& body : scene.bodies) {
      start_.push_back(body.state);
      frame_.emplace_back(Eigen::Quaterniond::Identity());
      joint_of_.push_back(body.fixed ? -1 : next < free.size() ? free[next++] : -2);
    }
    if (next != free.size() || std::count(joint_of_.begin(), joint_of_.end(), -2) > 0) {
      throw std::invalid_argument("mujoco: the model has " + std::to_string(free.size()) +
                                  " free joints, the scene " + std::to_string(next) +
                                  " moving bodies");
    }
    for (size_t i = 0; i < joint_of_.size(); ++i) {
      if (joint_of_[i] < 0) continue;
      Eigen::Vector3d origin, offset;
      Eigen::Quaterniond turn;
      Frame(i, &origin, &turn, &offset);
      const Body& body = scene.bodies[i];
      if ((origin + offset - body.state.position).norm() > 1e-6 * (1.0 + origin.norm())) {
        throw std::invalid_argument("mujoco: body " + body.name +
                                    ": MuJoCo puts its centre of mass elsewhere than ncpkit");
      }
      frame_[i] = turn.conjugate() * body.state.orientation;
      NoteMass(body, model_->body_mass[model_->jnt_bodyid[joint_of_[i]]]);
    }
  }

  // MuJoCo 2.2 takes a mesh's mass from an approximation of its inertia unless the compiler's
  // exactmeshinertia is true; ncpkit's is the hull's, exactly.
  void NoteMass(const Body& body, double mass) {
    if (std::abs(mass - body.mass.mass) <= 1e-6 * body.mass.mass) return;
    std::ostringstream s;
    s.precision(6);
    s << "body " << body.name << ": MuJoCo's mass " << mass << " kg, ncpkit's " << body.mass.mass
      << " kg"
      << (body.shape.kind == ShapeKind::Polyhedron
              ? " (MuJoCo 2.2 approximates a mesh's inertia unless <compiler "
                "exactmeshinertia=\"true\"/>)"
              : "")
      << "\n";
    differences_ += s.str();
  }

  void SetVelocities(const Scene& scene) {
    for (size_t i = 0; i < joint_of_.size(); ++i) {
      if (joint_of_[i] < 0) continue;
      const RigidBodyState& x = scene.bodies[i].state;
      Eigen::Vector3d origin, offset;
      Eigen::Quaterniond turn;
      Frame(i, &origin, &turn, &offset);
      const Eigen::Vector3d v = x.linear_velocity - x.angular_velocity.cross(offset);
      const Eigen::Vector3d w = turn.conjugate() * x.angular_velocity;
      mjtNum* qvel = Qvel(joint_of_[i]);
      for (int k = 0; k < 3; ++k) {
        qvel[k] = v[k];
        qvel[3 + k] = w[k];
      }
    }
  }

  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
  std::vector<RigidBodyState> start_;
  std::vector<Eigen::Quaterniond> frame_;  // ncpkit's body frame in MuJoCo's
  std::vector<int> joint_of_;              // free joint of each body, -1 for fixed ones
  std::string differences_;
};

// A scene written as MJCF (WriteMjcf) to a temporary file: mj_loadXML reads files.
std::unique_ptr<PeerWorld> WrittenWorld(const Scene& scene) {
  RequirePeerScene(scene, "mujoco",
                   {ShapeKind::HalfSpace, ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Ellipsoid,
                    ShapeKind::Capsule, ShapeKind::Cylinder, ShapeKind::Polyhedron},
                   false);
  char path[] = "/tmp/ncpkit-mujoco-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mujoco: cannot create a temporary file");
  close(fd);
  {
    std::ofstream file(path);
    file << WriteMjcf(scene);
  }
  try {
    auto world = std::make_unique<MujocoWorld>(path, scene, true);
    std::remove(path);
    return world;
  } catch (...) {
    std::remove(path);
    throw;
  }
}

}  // namespace

PeerEngine MujocoEngine() {
  return {"mujoco",
          "MuJoCo 2.2 (double): mj_step, Euler, pyramidal cones, Newton solver (100 iterations, "
          "tolerance 1e-8), soft contacts at their defaults",
          WrittenWorld,
          [](const std::string& path, const Scene& scene) -> std::unique_ptr<PeerWorld> {
            return std::make_unique<MujocoWorld>(path, scene, false);
          }};
}

}  // namespace ncpkit::peers
