// MuJoCo 2.2 (Debian libmujoco-dev) as a peer: the scene written as an MJCF model (WriteMjcf:
// free bodies with the scene's mass and inertia, their geoms with friction mu) and stepped
// by mj_step at MuJoCo's defaults: semi-implicit Euler, pyramidal cones, the Newton solver (100
// iterations, tolerance 1e-8), soft contacts (solref 0.02 1, solimp 0.9 0.95 0.001). The contact
// and constraint buffers are sized for the scene; every MuJoCo warning (a full buffer drops
// contacts) is checked after every step and makes the benchmark an error.
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/engine_peers.h"
#include "integrators/mjcf.h"

namespace ncpkit::bench {
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

class MujocoWorld : public PeerWorld {
 public:
  explicit MujocoWorld(const Scene& scene) {
    RequirePeerScene(scene);
    mju_user_warning = &KeepWarning;
    // mj_loadXML reads a file: the model goes through a temporary one.
    char path[] = "/tmp/ncpkit-mujoco-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw std::runtime_error("mujoco: cannot create a temporary file");
    close(fd);
    {
      std::ofstream file(path);
      file << WriteMjcf(scene);
    }
    char error[1000] = "";
    model_ = mj_loadXML(path, nullptr, error, sizeof(error));
    std::remove(path);
    if (model_ == nullptr) throw std::runtime_error(std::string("mujoco: ") + error);
    data_ = mj_makeData(model_);
    // Free joints: qpos [p, q], qvel [v (world), omega (body frame)].
    int joint = 0;
    for (const Body& body : scene.bodies) {
      if (body.fixed) {
        fixed_states_.push_back(body.state);
        joint_of_.push_back(-1);
        continue;
      }
      const int qv = model_->jnt_dofadr[joint];
      const Eigen::Vector3d omega_body =
          body.state.orientation.conjugate() * body.state.angular_velocity;
      for (int k = 0; k < 3; ++k) {
        data_->qvel[qv + k] = body.state.linear_velocity[k];
        data_->qvel[qv + 3 + k] = omega_body[k];
      }
      fixed_states_.push_back(body.state);
      joint_of_.push_back(joint++);
    }
    mj_forward(model_, data_);
  }
  ~MujocoWorld() override {
    mj_deleteData(data_);
    mj_deleteModel(model_);
  }

  // A step after which MuJoCo has warned (a full contact or constraint buffer drops contacts;
  // bad numbers in qpos, qvel or qacc reset the state) throws: the run's figures would not be
  // those of the scene.
  void Step() override {
    mj_step(model_, data_);
    CheckWarnings(*data_);
  }

  void ReadStates(std::vector<RigidBodyState>* states) const override {
    states->resize(joint_of_.size());
    for (size_t i = 0; i < joint_of_.size(); ++i) {
      RigidBodyState& s = (*states)[i];
      if (joint_of_[i] < 0) {
        s = fixed_states_[i];
        continue;
      }
      const mjtNum* q = data_->qpos + model_->jnt_qposadr[joint_of_[i]];
      const mjtNum* v = data_->qvel + model_->jnt_dofadr[joint_of_[i]];
      s.position = Eigen::Vector3d(q[0], q[1], q[2]);
      s.orientation = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized();
      s.linear_velocity = Eigen::Vector3d(v[0], v[1], v[2]);
      s.angular_velocity = s.orientation * Eigen::Vector3d(v[3], v[4], v[5]);
    }
  }

  int Contacts() const override { return data_->ncon; }

 private:
  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
  std::vector<RigidBodyState> fixed_states_;
  std::vector<int> joint_of_;  // free joint of each body, -1 for fixed ones
};

}  // namespace

PeerEngine MujocoEngine() {
  return {"mujoco",
          "MuJoCo 2.2 (double): mj_step, Euler, pyramidal cones, Newton solver (100 iterations, "
          "tolerance 1e-8), soft contacts at their defaults",
          [](const Scene& scene) -> std::unique_ptr<PeerWorld> {
            return std::make_unique<MujocoWorld>(scene);
          }};
}

}  // namespace ncpkit::bench
