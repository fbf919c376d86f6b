#include "apps/viewer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "dynamics/shape_registry.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

// The bundled page script (viewer/, built with npm and esbuild); size 0 when the build had no
// npm (viewer_bundle_none.cc).
extern const unsigned char kViewerBundle[];
extern const std::size_t kViewerBundle_size;

bool ViewerAvailable() { return kViewerBundle_size > 0; }

namespace {

const char* const kPoseColumns[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};

// A shape's mesh for the page: flat arrays of vertex coordinates (rounded to 0.1 micrometre,
// which keeps the page small) and of triangle corners.
nlohmann::json MeshJson(const ShapeMesh& mesh) {
  nlohmann::json vertices = nlohmann::json::array(), triangles = nlohmann::json::array();
  for (const Eigen::Vector3d& v : mesh.vertices) {
    for (int k = 0; k < 3; ++k) vertices.push_back(std::round(v[k] * 1e7) / 1e7);
  }
  for (const std::array<int, 3>& t : mesh.triangles) {
    for (const int corner : t) triangles.push_back(corner);
  }
  return {{"vertices", vertices}, {"triangles", triangles}};
}

// One CSV record (RFC 4180: quoted fields with doubled quotes) of a line.
std::vector<std::string> CsvRecord(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

// A CSV cell as a number; empty: NaN (a pair without contact in that step).
double Cell(const std::vector<std::string>& row, int column, const std::string& path, int line,
            const std::string& name) {
  const std::string& text = row[column];
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  double value = 0.0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    throw InputError(path + ":" + std::to_string(line) + ": column " + internal::Printable(name) +
                     ": '" + internal::Printable(text) + "' is not a number");
  }
  return value;
}

// Text for an HTML element: &, < and > escaped.
std::string HtmlText(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c == '&'   ? std::string("&amp;")
           : c == '<' ? std::string("&lt;")
           : c == '>' ? std::string("&gt;")
                      : std::string(1, c);
  }
  return out;
}

}  // namespace

ViewerRun::ViewerRun(const Scene& scene, const std::string& variant)
    : scene_(scene.name), stepper_(scene.stepper()), variant_(variant), bodies_(scene.bodies) {
  const Eigen::Vector3d g = scene.gravity();
  if (g.norm() > 0.0 && g.allFinite()) up_ = -g.normalized();
  for (size_t b = 0; b < bodies_.size(); ++b) {
    if (!bodies_[b].fixed) moving_.push_back(static_cast<int>(b));
  }
}

void ViewerRun::Add(const StepRecord& record, const Stepper& stepper) {
  ViewerFrame frame;
  frame.t = record.time;
  for (int b : moving_) {
    const RigidBodyState& s = stepper.bodies()[b].state;
    frame.poses.insert(frame.poses.end(),
                       {s.position.x(), s.position.y(), s.position.z(), s.orientation.w(),
                        s.orientation.x(), s.orientation.y(), s.orientation.z()});
  }
  stepper.ContactMarkers(record, &markers_);
  for (const ContactMarker& m : markers_) {
    frame.markers.push_back({m.point.x(), m.point.y(), m.point.z(), m.normal.x(), m.normal.y(),
                             m.normal.z(), m.magnitude});
  }
  frame.iterations = record.summary.iterations;
  frame.residual = record.summary.natural_residual;
  frame.us = record.step_seconds * 1e6;
  frame.status = ToString(record.summary.status);
  frames_.push_back(std::move(frame));
}

ViewerRun ViewerRun::FromCsv(const Scene& scene, const std::string& path) {
  return FromCsvText(scene, internal::ReadTextFile(path), path);
}

ViewerRun ViewerRun::FromCsvText(const Scene& scene, const std::string& text,
                                 const std::string& path) {
  ViewerRun run(scene, scene.variant());
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty file (expected a CSV header)");
  const std::vector<std::string> header = CsvRecord(line);
  std::map<std::string, int> column;
  for (size_t c = 0; c < header.size(); ++c) column[header[c]] = static_cast<int>(c);
  const auto find = [&](const std::string& name) {
    const auto it = column.find(name);
    if (it == column.end()) {
      throw InputError(path + ": no column " + internal::Printable(name, 80) + " (a trajectory " +
                       "CSV of scene '" + internal::Printable(scene.name) +
                       "' from simulate --out?)");
    }
    return it->second;
  };
  std::vector<int> pose_columns;
  for (int b : run.moving_) {
    for (const char* q : kPoseColumns) pose_columns.push_back(find(scene.bodies[b].name + "." + q));
  }
  const int t_column = find("t"), iterations = find("solver.iterations");
  const int residual = find("solver.residual"), us = find("solver.time_us");
  const int status = find("solver.status");
  // Implicit pairs: the ECP, the normal and pn (columns a-b.ax ... a-b.nz).
  std::vector<std::array<int, 7>> pairs;
  for (const std::string& name : header) {
    if (name.size() < 4 || name.compare(name.size() - 3, 3, ".nx") != 0) continue;
    const std::string pair = name.substr(0, name.size() - 3);
    std::array<int, 7> c{};
    int k = 0;
    for (const char* q : {".ax", ".ay", ".az", ".nx", ".ny", ".nz", ".pn"}) c[k++] = find(pair + q);
    pairs.push_back(c);
  }
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<std::string> row = CsvRecord(line);
    if (row.size() != header.size()) {
      throw InputError(path + ":" + std::to_string(line_number) + ": " +
                       std::to_string(row.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    }
    const auto cell = [&](int c) { return Cell(row, c, path, line_number, header[c]); };
    ViewerFrame frame;
    frame.t = cell(t_column);
    for (int c : pose_columns) {
      frame.poses.push_back(cell(c));
      if (!std::isfinite(frame.poses.back())) {
        throw InputError(path + ":" + std::to_string(line_number) + ": column " +
                         internal::Printable(header[c]) + " is not a finite number");
      }
    }
    for (const auto& c : pairs) {
      std::array<double, 7> marker{};
      for (int k = 0; k < 7; ++k) marker[k] = cell(c[k]);
      if (std::isfinite(marker[0])) frame.markers.push_back(marker);  // empty: no contact
    }
    const double count = cell(iterations);
    if (!(count >= 0.0 && count <= 1e9) || count != std::floor(count)) {
      throw InputError(path + ":" + std::to_string(line_number) +
                       ": column solver.iterations is not an iteration count");
    }
    frame.iterations = static_cast<int>(count);
    frame.residual = cell(residual);
    frame.us = cell(us);
    frame.status = row[status];
    run.frames_.push_back(std::move(frame));
  }
  return run;
}

void ViewerRun::WriteHtml(std::ostream& out) const {
  if (!ViewerAvailable()) {
    throw InputError(
        "this ncpkit was built without the viewer (npm was not found when it was built; "
        "tools/install-deps.sh installs it)");
  }
  using nlohmann::json;
  json data;
  data["scene"] = scene_;
  data["stepper"] = stepper_;
  data["solver"] = variant_;
  data["moving"] = moving_;
  data["up"] = {up_.x(), up_.y(), up_.z()};
  data["bodies"] = json::array();
  data["meshes"] = json::array();
  // One mesh per kind, size and polyhedron, shared by the bodies that have it.
  std::map<std::tuple<int, std::array<double, 3>, const void*>, int> mesh_of;
  for (const Body& b : bodies_) {
    const RigidBodyState& s = b.state;
    const ShapeType* type = FindShapeType(b.shape.kind);
    int mesh = -1;
    if (type != nullptr && type->mesh != nullptr) {
      const auto key = std::make_tuple(
          static_cast<int>(b.shape.kind),
          std::array<double, 3>{b.shape.size.x(), b.shape.size.y(), b.shape.size.z()},
          static_cast<const void*>(b.shape.polyhedron.get()));
      const auto found = mesh_of.find(key);
      if (found != mesh_of.end()) {
        mesh = found->second;
      } else {
        mesh = static_cast<int>(data["meshes"].size());
        mesh_of.emplace(key, mesh);
        data["meshes"].push_back(MeshJson(type->mesh(b.shape)));
      }
    }
    data["bodies"].push_back(
        {{"name", b.name},
         {"shape", b.shape.Name()},
         {"size", {b.shape.size.x(), b.shape.size.y(), b.shape.size.z()}},
         {"mesh", mesh},
         {"fixed", b.fixed},
         {"radius", b.shape.kind == ShapeKind::HalfSpace ? 0.0 : b.shape.BoundingRadius()},
         {"pose",
          {s.position.x(), s.position.y(), s.position.z(), s.orientation.w(), s.orientation.x(),
           s.orientation.y(), s.orientation.z()}}});
  }
  data["frames"] = json::array();
  for (const ViewerFrame& f : frames_) {
    json markers = json::array();
    for (const auto& m : f.markers) markers.push_back(m);  // NaN (no pn) is written as null
    data["frames"].push_back({{"t", f.t},
                              {"poses", f.poses},
                              {"markers", markers},
                              {"iterations", f.iterations},
                              {"residual", f.residual},
                              {"us", f.us},
                              {"status", f.status}});
  }
  // "<" escaped: the data cannot end its <script> element whatever the names hold.
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) escaped += c == '<' ? std::string("\\u003c") : std::string(1, c);
  std::string script(reinterpret_cast<const char*>(kViewerBundle), kViewerBundle_size);
  for (size_t at = script.find("</script"); at != std::string::npos;
       at = script.find("</script", at + 2)) {
    script.replace(at, 2, "<\\/");
  }
  out << R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ncpkit: )"
      << HtmlText(scene_) << R"(</title>
<style>
html, body { margin: 0; height: 100%; overflow: hidden; font: 14px sans-serif; }
#view { position: absolute; inset: 0; }
#panel { position: absolute; left: 0; right: 0; bottom: 0; padding: 8px 12px;
         background: rgba(255, 255, 255, 0.85); border-top: 1px solid #ccc; }
#panel input[type=range] { width: 50%; vertical-align: middle; }
#title { font-weight: bold; margin-bottom: 4px; }
#stats { margin-top: 4px; color: #333; }
#stats.failed { color: #c00; }
</style>
</head>
<body>
<div id="view"></div>
<div id="panel">
  <div id="title"></div>
  <button id="play" type="button">play</button>
  <input id="time" type="range" min="0" max="0" step="1" value="0" aria-label="time">
  <span id="label"></span>
  <div id="stats"></div>
</div>
<script id="ncpkit-data" type="application/json">)"
      << escaped << "</script>\n<script>\n"
      << script << "\n</script>\n</body>\n</html>\n";
}

}  // namespace ncpkit
