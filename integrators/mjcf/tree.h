// The element tree of an MJCF file (MuJoCo's XML model format) with its <include>s expanded, each
// element keeping the file and line it came from, for the scene reader's messages
// (integrators/mjcf/reader.cc). XML is parsed by TinyXML-2.
#ifndef NCPKIT_INTEGRATORS_MJCF_TREE_H_
#define NCPKIT_INTEGRATORS_MJCF_TREE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ncpkit::internal {

// Bounds on what a model may make the reader hold: elements over all files, nested includes,
// element depth (counted across includes), and the bytes of all files together.
constexpr int64_t kMaxMjcfElements = 1'000'000;
constexpr int kMaxMjcfIncludeDepth = 16;
constexpr int kMaxMjcfElementDepth = 200;
constexpr int64_t kMaxMjcfBytes = int64_t{256} << 20;

struct MjcfElement {
  std::string name;  // the tag: "geom", "body", ...
  std::string file;  // where it was written
  int line = 0;
  std::vector<std::pair<std::string, std::string>> attributes;  // in the file's order
  std::vector<MjcfElement> children;

  // The attribute's value, or nullptr.
  const std::string* Find(const std::string& key) const;
};

// The root <mujoco> element of `text` (read from `source`), each <include file="F"/> replaced by
// the children of F's root <mujoco> element; F is relative to the folder of `source` (the main
// file's, as MuJoCo reads them). Throws InputError with the file and line for malformed XML, a
// root that is not <mujoco>, an include without a file, an include cycle (naming the chain), a
// file that cannot be read, and when a bound above is passed.
MjcfElement ParseMjcfTree(const std::string& text, const std::string& source);

// The folder of `path` with a trailing '/', or "" for a bare file name.
std::string FolderOf(const std::string& path);

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_MJCF_TREE_H_
