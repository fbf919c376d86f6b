#include "dynamics/mesh_file.h"

#define TINYOBJLOADER_USE_DOUBLE
#include <tiny_obj_loader.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "dynamics/shapes/polyhedron.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

using Eigen::Vector3d;

namespace {

[[noreturn]] void FailMesh(const std::string& name, const std::string& why) {
  throw InputError(name + ": " + why);
}

std::string Extension(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  std::string extension = dot == std::string::npos ? "" : name.substr(dot + 1);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

void CheckVertices(const std::vector<Vector3d>& vertices, const std::string& name) {
  if (vertices.empty()) FailMesh(name, "no vertices");
  if (vertices.size() > static_cast<size_t>(kMaxHullPoints)) {
    FailMesh(name, std::to_string(vertices.size()) + " vertices, more than " +
                       std::to_string(kMaxHullPoints));
  }
  for (size_t k = 0; k < vertices.size(); ++k) {
    if (!vertices[k].allFinite()) {
      FailMesh(name, "vertex " + std::to_string(k + 1) + " is not finite");
    }
  }
}

// tinyobjloader reads a coordinate it cannot parse ("nan", "1e999", a word) as 0: each vertex
// line ("v x y z", with an optional w or colour) is checked first to hold only finite numbers.
void CheckObjVertexLines(const std::string& contents, const std::string& name) {
  std::istringstream in(contents);
  std::string line, word;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    if (!(words >> word) || word != "v") continue;
    int count = 0;
    while (words >> word) {
      char* end = nullptr;
      const double value = std::strtod(word.c_str(), &end);
      if (end != word.c_str() + word.size() || !std::isfinite(value)) {
        FailMesh(name,
                 "line " + std::to_string(number) + ": '" + word + "' is not a finite number");
      }
      ++count;
    }
    if (count < 3) {
      FailMesh(name, "line " + std::to_string(number) + ": expected 'v x y z'");
    }
  }
}

std::vector<Vector3d> ParseObj(const std::string& contents, const std::string& name) {
  CheckObjVertexLines(contents, name);
  tinyobj::ObjReader reader;
  tinyobj::ObjReaderConfig config;
  config.triangulate = false;  // only the vertices are kept
  // From the text, with no material library: an OBJ file's "mtllib" names other files, which a
  // hull does not need.
  if (!reader.ParseFromString(contents, "", config)) {
    std::string why = reader.Error();
    while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
    FailMesh(name, "not a valid OBJ file (" + why + ")");
  }
  const std::vector<tinyobj::real_t>& xyz = reader.GetAttrib().vertices;
  std::vector<Vector3d> vertices;
  vertices.reserve(xyz.size() / 3);
  for (size_t k = 0; k + 2 < xyz.size(); k += 3)
    vertices.emplace_back(xyz[k], xyz[k + 1], xyz[k + 2]);
  return vertices;
}

// Binary STL: an 80-byte header, a 32-bit little-endian triangle count, then 50 bytes a
// triangle (a normal and three vertices as 32-bit floats, two bytes of attributes).
bool IsBinaryStl(const std::string& contents) {
  if (contents.size() < 84) return false;
  uint32_t count;
  std::memcpy(&count, contents.data() + 80, 4);
  return contents.size() == 84 + 50 * static_cast<uint64_t>(count);
}

std::vector<Vector3d> ParseBinaryStl(const std::string& contents) {
  uint32_t count;
  std::memcpy(&count, contents.data() + 80, 4);
  std::vector<Vector3d> vertices;
  vertices.reserve(3 * static_cast<size_t>(count));
  for (uint32_t t = 0; t < count; ++t) {
    const char* triangle = contents.data() + 84 + 50 * static_cast<size_t>(t);
    for (int v = 1; v <= 3; ++v) {
      float xyz[3];
      std::memcpy(xyz, triangle + 12 * v, 12);
      vertices.emplace_back(xyz[0], xyz[1], xyz[2]);
    }
  }
  return vertices;
}

// ASCII STL: "solid", then facets of "vertex x y z" lines; only the vertex lines are read, each
// checked to hold three numbers.
std::vector<Vector3d> ParseAsciiStl(const std::string& contents, const std::string& name) {
  std::istringstream in(contents);
  std::string line, word;
  std::vector<Vector3d> vertices;
  int number = 0;
  bool solid = false;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    if (!(words >> word)) continue;
    if (!solid) {
      if (word != "solid") FailMesh(name, "line " + std::to_string(number) + ": not an STL file");
      solid = true;
      continue;
    }
    if (word != "vertex") continue;
    Vector3d x;
    std::string rest;
    if (!(words >> x[0] >> x[1] >> x[2]) || (words >> rest)) {
      FailMesh(name, "line " + std::to_string(number) + ": expected 'vertex x y z'");
    }
    if (vertices.size() >= static_cast<size_t>(kMaxHullPoints)) {
      FailMesh(name, "more than " + std::to_string(kMaxHullPoints) + " vertices");
    }
    vertices.push_back(x);
  }
  if (!solid) FailMesh(name, "empty file");
  return vertices;
}

}  // namespace

std::vector<Vector3d> ParseMeshVertices(const std::string& contents, const std::string& name) {
  const std::string extension = Extension(name);
  std::vector<Vector3d> vertices;
  if (extension == "obj") {
    vertices = ParseObj(contents, name);
  } else if (extension == "stl") {
    vertices = IsBinaryStl(contents) ? ParseBinaryStl(contents) : ParseAsciiStl(contents, name);
  } else {
    FailMesh(name, "unknown mesh format '." + extension + "' (expected .obj or .stl)");
  }
  CheckVertices(vertices, name);
  return vertices;
}

std::vector<Vector3d> ReadMeshVertices(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) FailMesh(path, "cannot open the mesh file");
  const std::streamoff size = file.tellg();
  if (size < 0) FailMesh(path, "cannot read the mesh file");
  if (size > kMaxMeshFileBytes) {
    FailMesh(path, std::to_string(size) + " bytes, more than the " +
                       std::to_string(kMaxMeshFileBytes) + " a mesh file may have");
  }
  std::string contents(static_cast<size_t>(size), '\0');
  file.seekg(0);
  if (!file.read(contents.data(), size)) FailMesh(path, "cannot read the mesh file");
  return ParseMeshVertices(contents, path);
}

}  // namespace ncpkit
