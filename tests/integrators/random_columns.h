// Scenes a user would write: columns of boxes of different sizes and masses, each turned by a
// random yaw and offset a little, placed touching or dropped from a millimetre, in a row of
// columns that do not touch; and a box pushed into a row of such boxes. Generated from a seed,
// so that tests run many of them.
#ifndef NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_
#define NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_

#include <cmath>
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

// The scene file's text: boxes with sides in [0.3, 0.6] m and masses in [0.5, 3] kg, each
// placed on the one below or `drop` above it; mu 0.5, h 0.01.
inline std::string RandomColumnsScene(const ColumnsSpec& spec) {
  std::mt19937 rng(spec.seed);
  auto uniform = [&rng](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::ostringstream out;
  out.precision(17);
  out << "{\"name\": \"columns " << spec.seed << "\", \"stepper\": \"" << spec.stepper
      << "\", \"h\": 0.01, \"duration\": " << spec.duration << ", " << spec.extra
      << "\"contact\": {\"mu\": 0.5}, \"fixed\": [{\"name\": \"ground\", \"shape\": \"plane\", "
         "\"normal\": [0, 0, 1]}], \"bodies\": [";
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
      out << (column + i > 0 ? ", " : "") << "{\"name\": \"b" << column << "_" << i
          << "\", \"shape\": \"box\", \"size\": [" << sx << ", " << sy << ", " << sz
          << "], \"mass\": " << uniform(0.5, 3.0) << ", \"position\": [" << x << ", " << y << ", "
          << z << "], \"orientation\": [" << std::cos(0.5 * yaw) << ", 0, 0, "
          << std::sin(0.5 * yaw) << "]}";
    }
  }
  out << "]}";
  return out.str();
}

// A box pushed into a row: 3-6 boxes of the same kinds on the ground along x, 0-2 cm apart
// (touching with probability 0.3), each turned by up to +-0.2 rad and offset by up to 2 cm in
// y; the first slides into the others at 0.5-5 m/s; 0.5 s at h = 0.01 s.
inline std::string RandomPushedRowScene(unsigned seed, const std::string& stepper) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::ostringstream out;
  out.precision(17);
  out << "{\"name\": \"pushed row " << seed << "\", \"stepper\": \"" << stepper
      << "\", \"h\": 0.01, \"duration\": 0.5, \"contact\": {\"mu\": 0.5}, \"fixed\": "
         "[{\"name\": \"ground\", \"shape\": \"plane\", \"normal\": [0, 0, 1]}], \"bodies\": [";
  const int boxes = 3 + static_cast<int>(rng() % 4);
  double x = 0.0;
  for (int i = 0; i < boxes; ++i) {
    const double sx = uniform(0.3, 0.6), sy = uniform(0.3, 0.6), sz = uniform(0.3, 0.6);
    const double yaw = uniform(-0.2, 0.2);
    const double gap = uniform(0.0, 1.0) < 0.3 ? 0.0 : uniform(0.0, 0.02);
    const double half = 0.5 * (sx * std::abs(std::cos(yaw)) + sy * std::abs(std::sin(yaw)));
    x += (i > 0 ? gap : 0.0) + half;
    out << (i > 0 ? ", " : "") << "{\"name\": \"b" << i << "\", \"shape\": \"box\", \"size\": ["
        << sx << ", " << sy << ", " << sz << "], \"mass\": " << uniform(0.5, 3.0)
        << ", \"position\": [" << x << ", " << uniform(-0.02, 0.02) << ", " << 0.5 * sz
        << "], \"orientation\": [" << std::cos(0.5 * yaw) << ", 0, 0, " << std::sin(0.5 * yaw)
        << "]";
    if (i == 0) out << ", \"velocity\": [" << uniform(0.5, 5.0) << ", 0, 0]";
    out << "}";
    x += half;
  }
  out << "]}";
  return out.str();
}

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_INTEGRATORS_RANDOM_COLUMNS_H_
