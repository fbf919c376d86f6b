// The vertices of a mesh file, for the convex hull of a shape (dynamics/shapes/polyhedron.h):
// Wavefront OBJ (by tinyobjloader) and STL, binary or ASCII (read here). Only the vertices are
// kept: a convex shape is the hull of them, whatever the faces say.
#ifndef NCPKIT_DYNAMICS_MESH_FILE_H_
#define NCPKIT_DYNAMICS_MESH_FILE_H_

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace ncpkit {

// Files larger than this are refused before they are read (a mesh of two million vertices is
// about 60 MB of OBJ text or 100 MB of binary STL).
constexpr int64_t kMaxMeshFileBytes = 256LL << 20;

// The vertices of `path` by its extension (.obj or .stl, any case). Throws InputError naming the
// file (and the line, where the format has lines) for a missing or unreadable file, an unknown
// extension, a malformed file, a coordinate that is not finite, no vertices, or more than
// kMaxHullPoints of them.
std::vector<Eigen::Vector3d> ReadMeshVertices(const std::string& path);

// The same from the file's contents (`name` for messages and its extension): what the fuzz
// target drives.
std::vector<Eigen::Vector3d> ParseMeshVertices(const std::string& contents,
                                               const std::string& name);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_MESH_FILE_H_
