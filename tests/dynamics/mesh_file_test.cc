// Mesh files to convex shapes: OBJ (tinyobjloader) and STL (ASCII and binary) cubes give the
// cube's hull, a scene file names one relative to itself and scales it, and hostile files are
// refused with the file, the line where the format has lines, and the reason.
#include "dynamics/mesh_file.h"

#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dynamics/body.h"
#include "dynamics/shapes/polyhedron.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace mesh_file_test {

using Eigen::Vector3d;

std::vector<Vector3d> Cube() {
  std::vector<Vector3d> corners;
  for (int c = 0; c < 8; ++c) {
    corners.emplace_back((c & 1) ? 0.5 : -0.5, (c & 2) ? 0.5 : -0.5, (c & 4) ? 0.5 : -0.5);
  }
  return corners;
}

const int kTriangles[12][3] = {{0, 1, 3}, {0, 3, 2}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                               {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 3, 7}, {1, 7, 5}};

std::string CubeObj() {
  std::string text = "# a unit cube\nmtllib none.mtl\n";
  for (const Vector3d& v : Cube()) {
    text += "v " + std::to_string(v.x()) + " " + std::to_string(v.y()) + " " +
            std::to_string(v.z()) + "\n";
  }
  text += "vn 0 0 1\nf 1 2 4 3\nf 5 6 8 7\nf 1 2 6 5\nf 3 4 8 7\nf 1 3 7 5\nf 2 4 8 6\n";
  return text;
}

std::string CubeAsciiStl() {
  std::string text = "solid cube\n";
  for (const auto& t : kTriangles) {
    text += "  facet normal 0 0 0\n    outer loop\n";
    for (const int i : t) {
      const Vector3d v = Cube()[i];
      text += "      vertex " + std::to_string(v.x()) + " " + std::to_string(v.y()) + " " +
              std::to_string(v.z()) + "\n";
    }
    text += "    endloop\n  endfacet\n";
  }
  return text + "endsolid cube\n";
}

std::string CubeBinaryStl() {
  std::string data(80, ' ');
  const uint32_t count = 12;
  data.append(reinterpret_cast<const char*>(&count), 4);
  for (const auto& t : kTriangles) {
    float values[12] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 3; ++j) values[3 + 3 * k + j] = static_cast<float>(Cube()[t[k]][j]);
    }
    data.append(reinterpret_cast<const char*>(values), sizeof(values));
    data.append(2, '\0');
  }
  return data;
}

// A folder of its own under the system's temporary one, removed at the end.
struct Folder {
  std::filesystem::path path;
  Folder() {
    path = std::filesystem::temp_directory_path() /
           ("ncpkit_mesh_test_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  std::string Write(const std::string& name, const std::string& contents) const {
    std::ofstream(path / name, std::ios::binary) << contents;
    return (path / name).string();
  }
};

TEST_CASE("OBJ and STL cubes give the cube's hull") {
  for (const auto& [label, contents] :
       {std::make_pair("cube.obj", CubeObj()), std::make_pair("cube.STL", CubeAsciiStl()),
        std::make_pair("cube.stl", CubeBinaryStl())}) {
    const std::string name = label;
    CAPTURE(name);
    const std::vector<Vector3d> points = ParseMeshVertices(contents, name);
    CHECK(points.size() == (name == "cube.obj" ? 8 : 36));
    const auto hull = MakeConvexHull(points);
    CHECK(hull->vertices.size() == 8);
    CHECK(hull->faces.size() == 6);
    CHECK(hull->volume == doctest::Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("a scene names a mesh file beside it and scales it") {
  const Folder folder;
  folder.Write("cube.obj", CubeObj());
  const std::string scene_path = folder.Write("drop.json", R"({
    "stepper": "explicit", "h": 0.01, "duration": 0.5, "contact": {"mu": 0.5},
    "fixed": [{"name": "ground", "shape": "plane"}],
    "bodies": [{"name": "brick", "shape": "convex", "mesh": "cube.obj", "scale": [0.4, 0.3, 0.2],
                "mass": 2, "position": [0, 0, 0.101]}]})");
  const Scene scene = LoadScene(scene_path);
  const Body& brick = scene.bodies[0];
  CHECK((brick.mass.body_inertia - MassProperties::Box(2.0, Vector3d(0.4, 0.3, 0.2)).body_inertia)
            .norm() <= 1e-12);
  SceneRunner runner(scene);
  while (!runner.Done()) CHECK(runner.Step().summary.IsSolved());
  CHECK(runner.stepper().bodies()[0].state.position.z() == doctest::Approx(0.1).epsilon(1e-9));
}

TEST_CASE("hostile mesh files: the file, the line and the reason") {
  const auto refused = [](const std::string& contents, const std::string& name, const char* why) {
    CAPTURE(name);
    CAPTURE(why);
    CHECK_THROWS_WITH_AS(ParseMeshVertices(contents, name), doctest::Contains(why), InputError);
  };
  refused(CubeObj(), "cube.ply", "unknown mesh format '.ply'");
  refused("v 1 2 3\nv 1 nan 0\n", "a.obj", "line 2: 'nan' is not a finite number");
  refused("v 1 2 3\nv 1 1e999 0\n", "a.obj", "line 2: '1e999' is not a finite number");
  refused("v 1 2 3\nv 1 two 0\n", "a.obj", "line 2: 'two' is not a finite number");
  refused("v 1 2\n", "a.obj", "line 1: expected 'v x y z'");
  refused("# nothing\nf 1 2 3\n", "a.obj", "no vertices");
  refused("", "a.stl", "empty file");
  refused("solid x\nfacet normal 0 0 1\nvertex 1 2\n", "a.stl", "line 3: expected 'vertex x y z'");
  refused("solid x\nvertex 1 2 inf\n", "a.stl", "line 2: expected 'vertex x y z'");
  refused("garbage\n", "a.stl", "line 1: not an STL file");
  std::string truncated = CubeBinaryStl();
  truncated.resize(truncated.size() - 7);  // no longer 84 + 50 n bytes, and not text
  refused(truncated, "a.stl", "not an STL file");
  std::string infinite = CubeBinaryStl();
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(infinite.data() + 84 + 12, &inf, 4);
  refused(infinite, "a.stl", "vertex 1 is not finite");
  CHECK_THROWS_WITH_AS(ReadMeshVertices("/nonexistent/rock.obj"),
                       doctest::Contains("/nonexistent/rock.obj: cannot open"), InputError);
  // Through a scene: the body's field, the file, and what is wrong with it.
  const Folder folder;
  folder.Write("flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n");
  const std::string scene_path = folder.Write("flat.json", R"({
    "stepper": "explicit", "h": 0.01, "duration": 0.1,
    "bodies": [{"name": "tile", "shape": "convex", "mesh": "flat.obj", "mass": 1,
                "position": [0, 0, 1]}]})");
  CHECK_THROWS_WITH_AS(LoadScene(scene_path), doctest::Contains("bodies[0].mesh"), InputError);
  CHECK_THROWS_WITH_AS(LoadScene(scene_path), doctest::Contains("span no volume"), InputError);
  const std::string both = folder.Write("both.json", R"({
    "stepper": "explicit", "h": 0.01, "duration": 0.1,
    "bodies": [{"name": "tile", "shape": "convex", "mesh": "flat.obj", "vertices": [], "mass": 1,
                "position": [0, 0, 1]}]})");
  CHECK_THROWS_WITH_AS(LoadScene(both), doctest::Contains("\"vertices\" or \"mesh\", one of them"),
                       InputError);
}

}  // namespace mesh_file_test
}  // namespace ncpkit
