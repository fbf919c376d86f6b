// Scenes written as MJCF (integrators/mjcf.h).
#include <sstream>
#include <string>

#include "dynamics/shapes/polyhedron.h"
#include "integrators/mjcf.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// A capsule's or cylinder's axis is x in ncpkit, z in MJCF: this turns z onto x.
const Eigen::Quaterniond kZToX(Eigen::AngleAxisd(3.14159265358979323846 / 2.0,
                                                 Eigen::Vector3d::UnitY()));

std::string Text(const Eigen::VectorXd& v) {
  std::ostringstream s;
  s.precision(17);
  for (Eigen::Index k = 0; k < v.size(); ++k) s << (k == 0 ? "" : " ") << v[k];
  return s.str();
}

std::string Text(const Eigen::Quaterniond& q) {
  return Text(Eigen::Vector4d(q.w(), q.x(), q.y(), q.z()));
}

std::string Escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void RequireWritable(const Scene& scene) {
  if (!scene.impulses.empty() || !scene.actuators.empty()) {
    throw InputError("MJCF: scripted impulses and actuators have no MJCF form here");
  }
  const ContactLaw& d = scene.laws.default_law;
  if (d.restitution != 0.0 || d.compliant()) {
    throw InputError("MJCF: restitution and compliance have no MJCF form here");
  }
  for (const auto& [pair, law] : scene.laws.overrides()) {
    if (law.mu != d.mu || law.restitution != 0.0 || law.compliant()) {
      throw InputError("MJCF: the pair " + pair.first + ", " + pair.second +
                       " has a law of its own (MJCF here takes the default law's friction)");
    }
  }
}

// type, size and the orientation of the geom within its body.
std::string GeomShape(const Body& body, Eigen::Quaterniond* turn) {
  const Shape& shape = body.shape;
  *turn = Eigen::Quaterniond::Identity();
  switch (shape.kind) {
    case ShapeKind::HalfSpace:
      return "type=\"plane\" size=\"0 0 1\"";
    case ShapeKind::Box:
      return "type=\"box\" size=\"" + Text(0.5 * shape.size.head<3>()) + "\"";
    case ShapeKind::Sphere:
      return "type=\"sphere\" size=\"" + Text(shape.size.head<1>()) + "\"";
    case ShapeKind::Ellipsoid:
      return "type=\"ellipsoid\" size=\"" + Text(shape.size.head<3>()) + "\"";
    case ShapeKind::Capsule:
    case ShapeKind::Cylinder:
      *turn = kZToX;
      return std::string("type=\"") + (shape.kind == ShapeKind::Capsule ? "capsule" : "cylinder") +
             "\" size=\"" + Text(Eigen::Vector2d(shape.size[0], 0.5 * shape.size[1])) + "\"";
    case ShapeKind::Polyhedron:
      return "type=\"mesh\" mesh=\"" + Escaped(body.name) + "\"";
    default:
      throw InputError("MJCF: body '" + body.name + "' has a shape MuJoCo has no geom for");
  }
}

std::string Geom(const Body& body, const Eigen::Vector3d& p, const Eigen::Quaterniond& q) {
  Eigen::Quaterniond turn;
  const std::string shape = GeomShape(body, &turn);
  return "<geom name=\"" + Escaped(body.name) + "\" " + shape + " pos=\"" + Text(p) + "\" quat=\"" +
         Text((q * turn).normalized()) + "\"/>";
}

void WriteAssets(const Scene& scene, std::ostringstream* s) {
  bool any = false;
  for (const Body& body : scene.bodies) {
    if (body.shape.kind != ShapeKind::Polyhedron) continue;
    *s << (any ? "" : "  <asset>\n") << "    <mesh name=\"" << Escaped(body.name) << "\" vertex=\"";
    const auto& vertices = body.shape.polyhedron->vertices;
    for (size_t k = 0; k < vertices.size(); ++k) {
      *s << (k == 0 ? "" : "  ") << Text(vertices[k]);
    }
    *s << "\"/>\n";
    any = true;
  }
  if (any) *s << "  </asset>\n";
}

void WriteBody(const Body& body, std::ostringstream* s) {
  if (body.fixed) {
    *s << "    " << Geom(body, body.state.position, body.state.orientation) << "\n";
    return;
  }
  const Eigen::Matrix3d& I = body.mass.body_inertia;
  *s << "    <body name=\"" << Escaped(body.name) << "\" pos=\"" << Text(body.state.position)
     << "\" quat=\"" << Text(body.state.orientation) << "\">\n      <freejoint/>\n"
     << "      <inertial pos=\"0 0 0\" mass=\"" << Text(Eigen::Matrix<double, 1, 1>(body.mass.mass))
     << "\" fullinertia=\""
     << Text(
            (Eigen::VectorXd(6) << I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)).finished())
     << "\"/>\n      " << Geom(body, Eigen::Vector3d::Zero(), Eigen::Quaterniond::Identity())
     << "\n    </body>\n";
}

// qpos [p, q] and qvel [v (world), omega (body frame)] of every free joint, if any body moves.
void WriteKeyframe(const Scene& scene, std::ostringstream* s) {
  std::ostringstream qpos, qvel;
  bool moving = false;
  for (const Body& body : scene.bodies) {
    if (body.fixed) continue;
    const RigidBodyState& x = body.state;
    moving = moving || !x.linear_velocity.isZero(0.0) || !x.angular_velocity.isZero(0.0);
    qpos << " " << Text(x.position) << " " << Text(x.orientation);
    qvel << " " << Text(x.linear_velocity) << " "
         << Text(x.orientation.conjugate() * x.angular_velocity);
  }
  if (!moving) return;
  *s << "  <keyframe>\n    <key name=\"initial\" qpos=\"" << qpos.str().substr(1) << "\" qvel=\""
     << qvel.str().substr(1) << "\"/>\n  </keyframe>\n";
}

}  // namespace

std::string WriteMjcf(const Scene& scene) {
  RequireWritable(scene);
  std::ostringstream s;
  s.precision(17);
  int moving = 0;
  for (const Body& body : scene.bodies) moving += body.fixed ? 0 : 1;
  const double mu = scene.laws.default_law.mu;
  s << "<mujoco model=\"" << Escaped(scene.name) << "\">\n  <compiler angle=\"radian\"/>\n"
    << "  <option timestep=\"" << scene.h() << "\" gravity=\"" << Text(scene.gravity())
    << "\"/>\n"
    // Room for 12 contact points a body and 4 rows a contact (pyramidal cone, condim 3: 2 per
    // friction direction); mjData holds dense njmax x njmax matrices, so no more than that.
    << "  <size nconmax=\"" << 12 * (moving + 4) << "\" njmax=\"" << 4 * 12 * (moving + 4)
    << "\"/>\n  <default>\n    <geom "
    << (mu > 0.0 ? "friction=\"" + Text(Eigen::Vector3d(mu, 0.005, 0.0001)) + "\""
                 : std::string("condim=\"1\""))
    << "/>\n  </default>\n";
  WriteAssets(scene, &s);
  s << "  <worldbody>\n";
  for (const Body& body : scene.bodies) WriteBody(body, &s);
  s << "  </worldbody>\n";
  WriteKeyframe(scene, &s);
  s << "</mujoco>\n";
  return s.str();
}

}  // namespace ncpkit
