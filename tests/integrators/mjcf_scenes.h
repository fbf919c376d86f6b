// A scene of every shape MJCF has, turned, offset and moving, with fixed bodies of three kinds:
// written as MJCF and read back (mjcf_test.cc), and loaded in MuJoCo (mjcf_mujoco_test.cc).
#ifndef NCPKIT_TESTS_INTEGRATORS_MJCF_SCENES_H_
#define NCPKIT_TESTS_INTEGRATORS_MJCF_SCENES_H_

namespace ncpkit::testing {

inline const char* const kMixedShapesScene = R"({
  "stepper": "explicit", "h": 0.004, "gravity": [0, 0.5, -9.81], "duration": 0.2,
  "contact": {"mu": 0.35},
  "bodies": [
    {"name": "box", "shape": "box", "size": [0.2, 0.3, 0.4], "mass": 2,
     "position": [0, 0, 0.5], "orientation": [0.9238795, 0, 0.3826834, 0]},
    {"name": "ball", "shape": "sphere", "size": [0.1], "mass": 1, "position": [1, 0, 0.3],
     "velocity": [0.5, 0, 0], "angular_velocity": [0, 0, 3]},
    {"name": "egg", "shape": "ellipsoid", "size": [0.1, 0.15, 0.2], "mass": 1,
     "position": [2, 0, 0.5], "orientation": [0.5, 0.5, 0.5, 0.5]},
    {"name": "cap", "shape": "capsule", "size": [0.05, 0.3], "mass": 1,
     "position": [3, 0, 0.5], "orientation": [0.7071068, 0.7071068, 0, 0]},
    {"name": "can", "shape": "cylinder", "size": [0.1, 0.2], "mass": 1, "position": [4, 0, 0.5],
     "orientation": [0.9238795, 0, 0, 0.3826834]},
    {"name": "rock", "shape": "convex",
     "vertices": [[0,0,0],[0.3,0,0],[0,0.2,0],[0,0,0.25],[0.2,0.2,0.2]],
     "mass": 1.5, "position": [5, 0, 0.5], "orientation": [0.8, 0.6, 0, 0]}
  ],
  "fixed": [
    {"name": "ground", "shape": "plane", "normal": [0, 0.1, 1]},
    {"name": "step", "shape": "box", "size": [1, 1, 0.1], "position": [0, 3, 0.05],
     "orientation": [0.9659258, 0, 0, 0.258819]},
    {"name": "bar", "shape": "capsule", "size": [0.05, 1], "position": [0, -3, 0.3]}
  ]
})";

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_INTEGRATORS_MJCF_SCENES_H_
