// Scenes a user would write: columns of boxes of different sizes and masses, each turned by a
// random yaw and offset a little, placed touching or dropped from a millimetre, in a row of
// columns that do not touch; a box pushed into a row of such boxes; brick pyramids; towers of
// rods, plates and slabs of very different masses. Generated from a seed, so that tests run many
// of them.
#ifndef NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_
#define NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_

#include <cmath>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

namespace ncpkit::testing {

struct ColumnsSpec {
  unsigned seed = 0;
  int columns = 1;  // in a row along x, 1 m apart (boxes are at most 0.6 m wide)
  int boxes = 3;    // per column
  std::string stepper = "explicit";
  double duration = 1.0;       // s
  double max_yaw = 0.4;        // rad, each box turned by a uniform yaw in [-max_yaw, max_yaw]
  double max_offset = 0.03;    // m, each box's centre moved by up to this in x and y
  double drop = 0.001;         // m, half the boxes are placed this far above the one below
  bool uniform_drops = false;  // ... or a uniform height in [0, drop]
  std::string extra;           // more top-level keys, e.g. "\"threads\": 2, " (with the comma)
};

// Uniform draws from a seeded generator: a seed names one scene (for one standard library,
// whose uniform_real_distribution may differ from another's).
class UniformDraw {
 public:
  explicit UniformDraw(unsigned seed) : rng_(seed) {}
  double operator()(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  unsigned Raw() { return static_cast<unsigned>(rng_()); }

 private:
  std::mt19937 rng_;
};

// A scene file's text up to its "bodies" list: h = 0.01 s, the ground plane, friction `mu`
// (as written), and `extra` top-level keys (each with its comma).
inline void WriteSceneHead(std::ostream& out, const std::string& name, const std::string& stepper,
                           double duration, const std::string& extra, const std::string& mu) {
  out.precision(17);
  out << "{\"name\": \"" << name << "\", \"stepper\": \"" << stepper
      << "\", \"h\": 0.01, \"duration\": " << duration << ", " << extra
      << "\"contact\": {\"mu\": " << mu
      << "}, \"fixed\": [{\"name\": \"ground\", \"shape\": \"plane\", "
      << "\"normal\": [0, 0, 1]}], \"bodies\": [";
}

// One box of a scene file's "bodies" list, turned by `yaw` about z; `velocity_x`, if given,
// sets it sliding along x. A list's first box has no comma before it.
struct BoxText {
  std::string name;
  double size[3];
  double mass;
  double position[3];
  double yaw;
  std::optional<double> velocity_x;
};

inline void WriteBox(std::ostream& out, bool first, const BoxText& box) {
  out << (first ? "" : ", ") << "{\"name\": \"" << box.name << "\", \"shape\": \"box\", \"size\": ["
      << box.size[0] << ", " << box.size[1] << ", " << box.size[2] << "], \"mass\": " << box.mass
      << ", \"position\": [" << box.position[0] << ", " << box.position[1] << ", "
      << box.position[2] << "], \"orientation\": [" << std::cos(0.5 * box.yaw) << ", 0, 0, "
      << std::sin(0.5 * box.yaw) << "]";
  if (box.velocity_x) out << ", \"velocity\": [" << *box.velocity_x << ", 0, 0]";
  out << "}";
}

// The scene file's text: boxes with sides in [0.3, 0.6] m and masses in [0.5, 3] kg, each
// placed on the one below or `drop` above it; mu 0.5, h 0.01.
inline std::string RandomColumnsScene(const ColumnsSpec& spec) {
  UniformDraw uniform(spec.seed);
  std::ostringstream out;
  WriteSceneHead(out, "columns " + std::to_string(spec.seed), spec.stepper, spec.duration,
                 spec.extra, "0.5");
  for (int column = 0; column < spec.columns; ++column) {
    double top = 0.0;
    for (int i = 0; i < spec.boxes; ++i) {
      const double sx = uniform(0.3, 0.6), sy = uniform(0.3, 0.6), sz = uniform(0.3, 0.6);
      const double yaw = uniform(-spec.max_yaw, spec.max_yaw);
      const double draw = uniform(0.0, 1.0);
      const double drop =
          draw < 0.5 ? 0.0 : (spec.uniform_drops ? spec.drop * (2.0 * draw - 1.0) : spec.drop);
      const double x = column * 1.0 + uniform(-spec.max_offset, spec.max_offset);
      const double y = uniform(-spec.max_offset, spec.max_offset);
      const double z = top + drop + 0.5 * sz;
      top += drop + sz;
      const std::string name = "b" + std::to_string(column) + "_" + std::to_string(i);
      WriteBox(out, column + i == 0, {name, {sx, sy, sz}, uniform(0.5, 3.0), {x, y, z}, yaw, {}});
    }
  }
  out << "]}";
  return out.str();
}

// A box pushed into a row: 3-6 boxes of the same kinds on the ground along x, 0-2 cm apart
// (touching with probability 0.3), each turned by up to +-0.2 rad and offset by up to 2 cm in
// y; the first slides into the others at 0.5-5 m/s; 0.5 s at h = 0.01 s.
inline std::string RandomPushedRowScene(unsigned seed, const std::string& stepper) {
  UniformDraw uniform(seed);
  std::ostringstream out;
  WriteSceneHead(out, "pushed row " + std::to_string(seed), stepper, 0.5, "", "0.5");
  const int boxes = 3 + static_cast<int>(uniform.Raw() % 4);
  double x = 0.0;
  for (int i = 0; i < boxes; ++i) {
    const double sx = uniform(0.3, 0.6), sy = uniform(0.3, 0.6), sz = uniform(0.3, 0.6);
    const double yaw = uniform(-0.2, 0.2);
    const double gap = uniform(0.0, 1.0) < 0.3 ? 0.0 : uniform(0.0, 0.02);
    const double half = 0.5 * (sx * std::abs(std::cos(yaw)) + sy * std::abs(std::sin(yaw)));
    x += (i > 0 ? gap : 0.0) + half;
    const double mass = uniform(0.5, 3.0);
    const double y = uniform(-0.02, 0.02);
    std::optional<double> velocity_x;
    if (i == 0) velocity_x = uniform(0.5, 5.0);
    WriteBox(out, i == 0,
             {"b" + std::to_string(i), {sx, sy, sz}, mass, {x, y, 0.5 * sz}, yaw, velocity_x});
    x += half;
  }
  out << "]}";
  return out.str();
}

// A brick pyramid: a base of `layers` boxes side by side along x, 0.48 m apart, and above it
// layers of one box fewer, each box over the joint of two below. Boxes 0.37-0.40 m along x and
// 0.3-0.5 m along y, each layer of one height in [0.2, 0.3] m, masses 0.5-3 kg, turned by up to
// +-0.1 rad, offset by up to 1 cm in x and y, dropped from up to 1 mm; layers 1.5 mm apart, more
// than a drop, and neighbours apart too (half-widths of at most (0.40 + 0.5 sin 0.1) / 2 =
// 0.225 m, and 2 cm of offsets): no box starts inside another. Each box rests on two, and its
// contacts are many and degenerate.
inline std::string RandomPyramidScene(unsigned seed, int layers, const std::string& stepper,
                                      double duration) {
  UniformDraw uniform(seed);
  std::ostringstream out;
  WriteSceneHead(out, "pyramid " + std::to_string(seed), stepper, duration, "", "0.6");
  const double pitch = 0.48;
  double base = 0.0;
  for (int layer = 0; layer < layers; ++layer) {
    const double sz = uniform(0.2, 0.3);
    for (int i = 0; i < layers - layer; ++i) {
      const double sx = uniform(0.37, 0.40), sy = uniform(0.3, 0.5);
      const double yaw = uniform(-0.1, 0.1);
      const double x = (0.5 * layer + i) * pitch + uniform(-0.01, 0.01);
      const double y = uniform(-0.01, 0.01);
      const double z = base + 0.5 * sz + uniform(0.0, 0.001);
      const std::string name = "b" + std::to_string(layer) + "_" + std::to_string(i);
      WriteBox(out, layer + i == 0, {name, {sx, sy, sz}, uniform(0.5, 3.0), {x, y, z}, yaw, {}});
    }
    base += sz + 0.0015;
  }
  out << "]}";
  return out.str();
}

// A tower a user might stack without thinking of its balance: 3-5 boxes, each side drawn
// log-uniformly in [3 cm, 1 m] (rods, plates and slabs) and each mass log-uniformly in
// [0.05, 20] kg (ratios of up to 400 between neighbours), one on another as in the columns
// above (yaws up to +-0.4 rad, offsets up to 3 cm, half dropped from up to 1 mm). Most such
// towers topple within the second: boxes fall off and strike the others at up to some 3 m/s.
inline std::string RandomTowerScene(unsigned seed, const std::string& stepper) {
  UniformDraw uniform(seed);
  const auto log_uniform = [&uniform](double lo, double hi) {
    return std::exp(uniform(std::log(lo), std::log(hi)));
  };
  std::ostringstream out;
  WriteSceneHead(out, "tower " + std::to_string(seed), stepper, 1.0, "", "0.5");
  const int boxes = 3 + static_cast<int>(uniform.Raw() % 3);
  double top = 0.0;
  for (int i = 0; i < boxes; ++i) {
    const double sx = log_uniform(0.03, 1.0), sy = log_uniform(0.03, 1.0),
                 sz = log_uniform(0.03, 1.0);
    const double yaw = uniform(-0.4, 0.4);
    const double drop = uniform(0.0, 1.0) < 0.5 ? uniform(0.0, 0.001) : 0.0;
    const double x = uniform(-0.03, 0.03), y = uniform(-0.03, 0.03);
    const double z = top + drop + 0.5 * sz;
    top += drop + sz;
    WriteBox(out, i == 0,
             {"b" + std::to_string(i), {sx, sy, sz}, log_uniform(0.05, 20.0), {x, y, z}, yaw, {}});
  }
  out << "]}";
  return out.str();
}

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_
