// MJCF files as scenes: every supported element read with MuJoCo's meaning (sizes, frames in every
// orientation form, defaults, masses, friction, includes, meshes), a scene written as MJCF read
// back the same, and everything outside the subset refused with the file, the line and the
// element. (tests/integrators/mjcf_mujoco_test.cc checks the same files against MuJoCo itself.)
#include "integrators/mjcf.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"
#include "tests/integrators/mjcf_scenes.h"
#include "tests/integrators/random_columns.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace mjcf_test {

using Eigen::Quaterniond;
using Eigen::Vector3d;

constexpr double kPi = 3.14159265358979323846;

// A folder of files for one test, removed with it.
class Folder {
 public:
  explicit Folder(const std::string& name) : path_(testing::TemporaryPath(name)) {
    std::filesystem::create_directories(path_);
  }
  ~Folder() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

Scene Parse(const std::string& text) { return ParseMjcfScene(text, "model.xml"); }

std::string World(const std::string& inside, const std::string& before = "") {
  return "<mujoco model=\"m\">" + before + "<worldbody>" + inside + "</worldbody></mujoco>";
}

// The error message of parsing `text` ("" if it parses).
std::string Refusal(const std::string& text, const std::string& source = "model.xml") {
  try {
    ParseMjcfScene(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const Body& Named(const Scene& scene, const std::string& name) {
  const int k = scene.FindBody(name);
  REQUIRE(k >= 0);
  return scene.bodies[k];
}

double Angle(const Quaterniond& a, const Quaterniond& b) { return a.angularDistance(b); }

std::string Digits(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

TEST_CASE("MJCF shapes: sizes are half-sizes, capsules and cylinders turn from z to x") {
  const Scene scene = Parse(World(
      "<geom name='floor' type='plane' size='5 5 .1'/>"
      "<body name='box' pos='0 0 1'><freejoint/><geom type='box' size='.1 .2 .3'/></body>"
      "<body name='ball' pos='1 0 1'><freejoint/><geom size='.25'/></body>"
      "<body name='egg' pos='2 0 1'><freejoint/><geom type='ellipsoid' size='.1 .2 .3'/></body>"
      "<body name='cap' pos='3 0 1'><freejoint/><geom type='capsule' size='.05 .2'/></body>"
      "<body name='can' pos='4 0 1'><freejoint/><geom type='cylinder' size='.1 .15'/></body>"));
  CHECK(scene.stepper() == "explicit");
  CHECK(scene.name == "m");
  CHECK(scene.h() == doctest::Approx(0.002));
  CHECK(scene.gravity().isApprox(Vector3d(0, 0, -9.81)));
  CHECK(scene.laws.default_law.mu == 1.0);
  CHECK(Named(scene, "floor").shape.kind == ShapeKind::HalfSpace);
  CHECK(Named(scene, "floor").fixed);
  const Body& box = Named(scene, "box");
  CHECK(box.shape.size.head<3>().isApprox(Vector3d(0.2, 0.4, 0.6)));
  // MuJoCo's default density, 1000 kg/m^3.
  CHECK(box.mass.mass == doctest::Approx(1000 * 0.2 * 0.4 * 0.6));
  CHECK(Named(scene, "ball").mass.mass ==
        doctest::Approx(1000 * 4.0 / 3.0 * kPi * 0.25 * 0.25 * 0.25));
  CHECK(Named(scene, "egg").shape.size.head<3>().isApprox(Vector3d(0.1, 0.2, 0.3)));
  const Body& cap = Named(scene, "cap");
  CHECK(cap.shape.kind == ShapeKind::Capsule);
  CHECK(cap.shape.size.head<2>().isApprox(Eigen::Vector2d(0.05, 0.4)));
  CHECK(cap.mass.mass ==
        doctest::Approx(1000 * (kPi * 0.05 * 0.05 * 0.4 + 4.0 / 3.0 * kPi * std::pow(0.05, 3))));
  // The capsule's axis (body x) along the geom's z.
  CHECK((cap.state.orientation * Vector3d::UnitX()).isApprox(Vector3d::UnitZ(), 1e-12));
  const Body& can = Named(scene, "can");
  CHECK(can.shape.kind == ShapeKind::Cylinder);
  CHECK(can.shape.size.head<2>().isApprox(Eigen::Vector2d(0.1, 0.3)));
  CHECK((can.state.orientation * Vector3d::UnitX()).isApprox(Vector3d::UnitZ(), 1e-12));
}

TEST_CASE("MJCF fromto places a capsule between its two points") {
  const Scene scene =
      Parse(World("<body name='c'><freejoint/>"
                  "<geom type='capsule' fromto='1 2 3  1 2 4' size='.1'/></body>"));
  const Body& c = scene.bodies[0];
  CHECK(c.state.position.isApprox(Vector3d(1, 2, 3.5)));
  CHECK(c.shape.size[1] == doctest::Approx(1.0));
  CHECK((c.state.orientation * Vector3d::UnitX()).isApprox(Vector3d::UnitZ(), 1e-12));
  const Scene slanted =
      Parse(World("<body name='c'><freejoint/>"
                  "<geom type='cylinder' fromto='0 0 1  1 1 1' size='.1'/></body>"));
  CHECK((slanted.bodies[0].state.orientation * Vector3d::UnitX())
            .isApprox(Vector3d(1, 1, 0).normalized(), 1e-12));
  CHECK(slanted.bodies[0].shape.size[1] == doctest::Approx(std::sqrt(2.0)));
}

// The body's orientation given one way in the file.
Quaterniond Turned(const std::string& attribute, const std::string& compiler = "") {
  const Scene scene = Parse(World(
      "<body name='b' " + attribute + "><freejoint/><geom type='box' size='.1 .2 .3'/></body>",
      compiler));
  return scene.bodies[0].state.orientation;
}

TEST_CASE("MJCF orientations: quat, axisangle, euler (degrees by default), xyaxes, zaxis") {
  const Quaterniond expected = Quaterniond(Eigen::AngleAxisd(0.3, Vector3d::UnitZ())) *
                               Quaterniond(Eigen::AngleAxisd(-0.7, Vector3d::UnitY())) *
                               Quaterniond(Eigen::AngleAxisd(1.1, Vector3d::UnitX()));
  const std::string q = Digits(expected.w()) + " " + Digits(expected.x()) + " " +
                        Digits(expected.y()) + " " + Digits(expected.z());
  CHECK(Angle(Turned("quat='" + q + "'"), expected) < 1e-12);
  // Unnormalized quaternions are normalized, as MuJoCo does.
  CHECK(Angle(Turned("quat='2 0 0 0'"), Quaterniond::Identity()) < 1e-12);
  const Eigen::AngleAxisd aa(expected);
  const std::string axis =
      Digits(aa.axis().x()) + " " + Digits(aa.axis().y()) + " " + Digits(aa.axis().z());
  CHECK(Angle(Turned("axisangle='" + axis + " " + Digits(aa.angle() * 180 / kPi) + "'"), expected) <
        1e-12);
  CHECK(Angle(Turned("axisangle='" + axis + " " + Digits(aa.angle()) + "'",
                     "<compiler angle='radian'/>"),
              expected) < 1e-12);
  // Intrinsic x, y', z'' (MuJoCo's default "xyz") is extrinsic Z, Y, X.
  const Quaterniond xyz = Quaterniond(Eigen::AngleAxisd(1.1, Vector3d::UnitX())) *
                          Quaterniond(Eigen::AngleAxisd(-0.7, Vector3d::UnitY())) *
                          Quaterniond(Eigen::AngleAxisd(0.3, Vector3d::UnitZ()));
  CHECK(Angle(Turned("euler='1.1 -0.7 0.3'", "<compiler angle='radian'/>"), xyz) < 1e-12);
  CHECK(Angle(Turned("euler='0.3 -0.7 1.1'", "<compiler angle='radian' eulerseq='ZYX'/>"), xyz) <
        1e-12);
  CHECK(Angle(Turned("euler='0.3 -0.7 1.1'", "<compiler angle='radian' eulerseq='zyx'/>"),
              expected) < 1e-12);
  CHECK(Angle(Turned("euler='90 0 0'"),
              Quaterniond(Eigen::AngleAxisd(kPi / 2, Vector3d::UnitX()))) < 1e-12);
  // xyaxes: the frame's x and y (y made orthogonal to x).
  const Quaterniond xy = Turned("xyaxes='0 1 0  -1 0.3 0'");
  CHECK((xy * Vector3d::UnitX()).isApprox(Vector3d::UnitY(), 1e-12));
  CHECK((xy * Vector3d::UnitY()).isApprox(-Vector3d::UnitX(), 1e-12));
  CHECK(((Turned("zaxis='1 0 0'")) * Vector3d::UnitZ()).isApprox(Vector3d::UnitX(), 1e-12));
}

TEST_CASE("MJCF frames compose: a geom offset in its body, bodies welded to the world") {
  const Scene scene =
      Parse(World("<body name='b' pos='1 0 1' euler='0 0 90'><freejoint/>"
                  "<geom type='box' size='.1 .1 .1' pos='0.5 0 0'/></body>"
                  "<body name='shelf' pos='0 5 0' euler='0 0 90'>"
                  "<geom name='board' type='box' size='1 .1 .1' pos='1 0 0.5'/>"
                  "<body pos='0 0 1'><geom name='top' type='sphere' size='.2'/></body></body>"));
  CHECK(Named(scene, "b").state.position.isApprox(Vector3d(1, 0.5, 1), 1e-12));
  CHECK(Named(scene, "board").fixed);
  CHECK(Named(scene, "board").state.position.isApprox(Vector3d(0, 6, 0.5), 1e-12));
  CHECK(Named(scene, "top").fixed);
  CHECK(Named(scene, "top").state.position.isApprox(Vector3d(0, 5, 1), 1e-12));
}

TEST_CASE("MJCF defaults: the main class, nested classes, childclass, class") {
  const Scene scene =
      Parse(World("<geom name='floor' type='plane' size='1 1 1'/>"
                  "<body name='a' pos='0 0 1'><freejoint/><geom/></body>"
                  "<body name='b' pos='1 0 1' childclass='heavy'><freejoint/><geom/></body>"
                  "<body name='c' pos='2 0 1' childclass='heavy'><freejoint/><geom class='light' "
                  "size='.2'/></body>"
                  "<body name='d' pos='3 0 1'><freejoint/><geom class='rough'/></body>",
                  "<default><geom type='box' size='.1 .1 .1' density='100' friction='.4'/>"
                  "<default class='heavy'><geom density='2000'/>"
                  "<default class='light'><geom density='10' type='sphere'/></default></default>"
                  "<default class='rough'><geom friction='.9 .01 .001'/></default></default>"));
  CHECK(Named(scene, "a").mass.mass == doctest::Approx(100 * 0.008));
  CHECK(Named(scene, "b").mass.mass == doctest::Approx(2000 * 0.008));
  CHECK(Named(scene, "c").shape.kind == ShapeKind::Sphere);
  CHECK(Named(scene, "c").mass.mass == doctest::Approx(10 * 4.0 / 3.0 * kPi * 0.008));
  // A pair's friction is the larger of its geoms'.
  CHECK(scene.laws.default_law.mu == doctest::Approx(0.4));
  CHECK(scene.laws.Get("a", "b").mu == doctest::Approx(0.4));
  CHECK(scene.laws.Get("a", "d").mu == doctest::Approx(0.9));
  CHECK(scene.laws.Get("floor", "d").mu == doctest::Approx(0.9));
}

TEST_CASE("MJCF friction: condim 1 on both geoms is frictionless") {
  const Scene scene = Parse(World(
      "<geom name='ice' type='plane' size='1 1 1' condim='1'/>"
      "<geom name='rug' type='plane' size='1 1 1' pos='0 0 -5' friction='.3'/>"
      "<body name='puck' pos='0 0 1'><freejoint/><geom size='.1' condim='1' friction='.2'/></body>"
      "<body name='ball' pos='1 0 1'><freejoint/><geom size='.1' friction='.5'/></body>"));
  CHECK(scene.laws.Get("ice", "puck").mu == 0.0);
  CHECK(scene.laws.Get("ice", "ball").mu == doctest::Approx(1.0));
  CHECK(scene.laws.Get("rug", "puck").mu == doctest::Approx(0.3));
  CHECK(scene.laws.Get("ball", "puck").mu == doctest::Approx(0.5));
}

TEST_CASE("MJCF masses: mass, density, and an <inertial> at the geom's centre") {
  const Scene scene = Parse(World(
      "<body name='m' pos='0 0 1'><freejoint/><geom type='box' size='.1 .2 .3' mass='3'/></body>"
      "<body name='i' pos='1 0 1'><freejoint/>"
      "<inertial pos='0 0 0' quat='0.7071067811865476 0 0 0.7071067811865476' mass='2' "
      "diaginertia='2 3 4'/><geom type='box' size='.1 .2 .3'/></body>"
      "<body name='f' pos='2 0 1'><freejoint/>"
      "<inertial pos='0 0 0' mass='2' fullinertia='2 2.5 3 0.1 0.2 0.3'/>"
      "<geom type='sphere' size='.1'/></body>"));
  const Body& m = Named(scene, "m");
  CHECK(m.mass.mass == doctest::Approx(3.0));
  CHECK(m.mass.body_inertia(0, 0) == doctest::Approx(3.0 / 12.0 * (0.16 + 0.36)));
  const Body& i = Named(scene, "i");
  CHECK(i.mass.mass == 2.0);
  // The principal axes turned 90 degrees about z: Ixx and Iyy swap.
  CHECK(i.mass.body_inertia.isApprox(Vector3d(3, 2, 4).asDiagonal().toDenseMatrix(), 1e-12));
  Eigen::Matrix3d full;
  full << 2, 0.1, 0.2, 0.1, 2.5, 0.3, 0.2, 0.3, 3;
  CHECK(Named(scene, "f").mass.body_inertia.isApprox(full, 1e-12));
  // The inertial of a capsule is read in MJCF's frame (axis z) and turned into ncpkit's (axis x).
  const Scene capsule = Parse(World(
      "<body name='c' pos='0 0 1'><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='2 2 1'/>"
      "<geom type='capsule' size='.1 .3'/></body>"));
  CHECK(capsule.bodies[0].mass.body_inertia.isApprox(Vector3d(1, 2, 2).asDiagonal().toDenseMatrix(),
                                                     1e-12));
}

TEST_CASE("MJCF option: timestep and gravity; MuJoCo's solver settings are left to MuJoCo") {
  const Scene scene = Parse(World("<body name='b'><freejoint/><geom size='.1'/></body>",
                                  "<option timestep='0.01' gravity='0 -1 -2' integrator='RK4' "
                                  "cone='elliptic' iterations='50' tolerance='1e-10'/>"
                                  "<size nconmax='100' njmax='500'/><visual/><statistic/>"));
  CHECK(scene.h() == 0.01);
  CHECK(scene.gravity().isApprox(Vector3d(0, -1, -2)));
}

const char* const kTetrahedron = "0 0 0  1 0 0  0 1 0  0 0 1";

TEST_CASE("MJCF meshes: a vertex list or a file, scaled, placed at its centroid") {
  Folder folder("mjcf_mesh");
  folder.Write("meshes/tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n");
  const std::string model = folder.Write(
      "model.xml",
      World("<body name='listed' pos='0 0 1'><freejoint/><geom type='mesh' mesh='tet'/></body>"
            "<body name='filed' pos='3 0 1'><freejoint/><geom type='mesh' mesh='tetfile'/></body>"
            "<geom name='rock' type='mesh' mesh='big' pos='0 0 -5'/>",
            "<compiler meshdir='meshes'/><asset><mesh name='tet' vertex='" +
                std::string(kTetrahedron) +
                "'/><mesh name='tetfile' file='tet.obj'/>"
                "<mesh name='big' file='tet.obj' scale='2 2 2'/></asset>"));
  const Scene scene = LoadScene(model);
  const Body& listed = Named(scene, "listed");
  CHECK(listed.shape.kind == ShapeKind::Polyhedron);
  // The tetrahedron's centroid is (1/4, 1/4, 1/4) of its corner frame.
  CHECK(listed.state.position.isApprox(Vector3d(0.25, 0.25, 1.25), 1e-12));
  CHECK(listed.mass.mass == doctest::Approx(1000.0 / 6.0));
  CHECK(Named(scene, "filed").state.position.isApprox(Vector3d(3.25, 0.25, 1.25), 1e-12));
  CHECK(Named(scene, "rock").state.position.isApprox(Vector3d(0.5, 0.5, -4.5), 1e-12));
  CHECK(Named(scene, "rock").shape.polyhedron->volume == doctest::Approx(8.0 / 6.0));
}

TEST_CASE("MJCF include: the included file's elements in place, errors at its lines") {
  Folder folder("mjcf_include");
  folder.Write("parts/ground.xml",
               "<mujoco><worldbody>\n<geom name='floor' type='plane' size='1 1 1'/>"
               "</worldbody></mujoco>");
  folder.Write("parts/defaults.xml", "<mujoco><default><geom density='50'/></default></mujoco>");
  const std::string model = folder.Write(
      "model.xml",
      "<mujoco><include file='parts/defaults.xml'/><include file='parts/ground.xml'/>"
      "<worldbody><body name='b' pos='0 0 1'><freejoint/><geom size='.1'/></body></worldbody>"
      "</mujoco>");
  const Scene scene = LoadScene(model);
  CHECK(scene.bodies.size() == 2);
  CHECK(Named(scene, "b").mass.mass == doctest::Approx(50 * 4.0 / 3.0 * kPi * 0.001));
  folder.Write("parts/bad.xml",
               "<mujoco>\n<worldbody>\n<geom type='hfield'/></worldbody></mujoco>");
  const std::string bad =
      folder.Write("bad.xml", "<mujoco><include file='parts/bad.xml'/></mujoco>");
  try {
    LoadScene(bad);
    FAIL("an hfield geom was read");
  } catch (const InputError& e) {
    CHECK(e.source().find("parts/bad.xml") != std::string::npos);
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()).find("hfield") != std::string::npos);
  }
}

TEST_CASE("MJCF include cycles and missing files are refused with the chain") {
  Folder folder("mjcf_cycle");
  folder.Write("a.xml", "<mujoco>\n<include file='b.xml'/></mujoco>");
  folder.Write("b.xml", "<mujoco>\n\n<include file='./a.xml'/></mujoco>");
  const std::string self = folder.Write("self.xml", "<mujoco><include file='self.xml'/></mujoco>");
  try {
    LoadScene(folder.Write("main.xml", "<mujoco><include file='a.xml'/></mujoco>"));
    FAIL("a cyclic include was read");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("cyclic include") != std::string::npos);
    CHECK(e.line() == 3);
    CHECK(e.source().find("b.xml") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(LoadScene(self), doctest::Contains("cyclic include"), InputError);
  CHECK_THROWS_WITH_AS(
      LoadScene(folder.Write("lost.xml", "<mujoco><include file='none.xml'/></mujoco>")),
      doctest::Contains("none.xml"), InputError);
}

TEST_CASE("MJCF outside the subset is refused with its line and the element") {
  struct Case {
    std::string text;
    int line;
    std::string says;
  };
  const Case cases[] = {
      {World("\n<body name='arm'>\n<joint type='hinge'/><geom size='.1'/></body>"), 3,
       "a hinge joint"},
      {World("\n<body name='arm'>\n<joint/><geom size='.1'/></body>"), 3, "a hinge joint"},
      {World("<body><joint type='slide'/><geom size='.1'/></body>"), 1, "slide"},
      {"<mujoco>\n<tendon/></mujoco>", 2, "<tendon>"},
      {"<mujoco>\n<actuator><motor joint='j'/></actuator></mujoco>", 2, "<actuator>"},
      {"<mujoco>\n<equality/></mujoco>", 2, "<equality>"},
      {"<mujoco>\n<sensor/></mujoco>", 2, "<sensor>"},
      {"<mujoco>\n<contact><exclude body1='a' body2='b'/></contact></mujoco>", 2, "<contact>"},
      {World("<body><freejoint/><geom size='.1'/>\n<body><geom size='.1'/></body></body>"), 2,
       "compound"},
      {World("<body><freejoint/><geom size='.1'/><geom size='.2'/></body>"), 1, "2 geoms"},
      {World("<body><freejoint/></body>"), 1, "0 geoms"},
      {World("<body><body><freejoint/><geom size='.1'/></body></body>"), 1, "inside another"},
      {World("\n<geom size='.1' contype='0'/>"), 2, "collision filtering"},
      {World("<geom size='.1' margin='0.01'/>"), 1, "margin"},
      {World("<geom size='.1' spin='3'/>"), 1, "attribute 'spin'"},
      {World("<geom type='hfield' size='.1'/>"), 1, "hfield"},
      {World("<body mocap='true'><geom size='.1'/></body>"), 1, "mocap"},
      {World("<body><freejoint/><geom size='.1' condim='6'/></body>"), 1, "condim 6"},
      {World("<geom type='box' size='.1 .1'/>"), 1, "size needs 3"},
      {World("<geom type='box' size='.1 -1 .1'/>"), 1, "must be positive"},
      {World("<geom size='.1' pos='0 nan 0'/>"), 1, "finite"},
      {World("<geom size='.1' pos='0 1e999 0'/>"), 1, "finite"},
      {World("<geom size='.1' pos='0 x 0'/>"), 1, "not a list of numbers"},
      {World("<geom size='.1' euler='0 0'/>"), 1, "expected 3 numbers"},
      {World("<geom size='.1' quat='0 0 0 0'/>"), 1, "must not be zero"},
      {World("<geom size='.1' quat='1 0 0 0' euler='0 0 0'/>"), 1, "give one of"},
      {World("<geom class='none' size='.1'/>"), 1, "no default class 'none'"},
      {World("<geom type='mesh' mesh='none'/>"), 1, "no mesh asset"},
      {World("<body><freejoint/><geom type='plane' size='1 1 1'/></body>"), 1, "cannot move"},
      {World("<body><freejoint/><geom size='.1' density='0'/></body>"), 1, "mass must be positive"},
      {World("<body><freejoint/><inertial pos='0 0 1' mass='1' diaginertia='1 1 1'/>"
             "<geom size='.1'/></body>"),
       1, "centre of mass"},
      {World("<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 3'/>"
             "<geom size='.1'/></body>"),
       1, "triangle"},
      {World("<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>\n"
             "<inertial pos='0 0 0' mass='2' diaginertia='1 1 1'/><geom size='.1'/></body>"),
       2, "one <inertial>"},
      {World("<body name='a'><freejoint/><geom size='.1'/></body>"
             "<body name='a' pos='1 0 0'><freejoint/><geom size='.1'/></body>"),
       1, "used twice"},
      {World("<geom size='.1'/>", "<compiler coordinate='global'/>"), 1, "coordinate"},
      {World("<geom size='.1'/>", "<option><flag gravity='disable'/></option>"), 1, "<flag>"},
      {World("<geom size='.1'/>", "<option viscosity='0.1'/>"), 1, "vacuum"},
      {"<mujoco>\n<worldbody>\n<geom size='.1'>\n</worldbody></mujoco>", 3, "not valid XML"},
      {"<robot/>", 1, "root element"},
      {"", 0, "not valid XML"},
      {"<mujoco><worldbody/></mujoco>", 0, "no geoms"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    try {
      Parse(c.text);
      FAIL("was read");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.source() == "model.xml");
      CHECK(e.line() == c.line);
      CHECK(what.find(c.says) != std::string::npos);
    }
  }
}

TEST_CASE("MJCF bodies overlapping at the start are refused") {
  const std::string what = Refusal(World(
      "<geom name='floor' type='plane' size='1 1 1'/>"
      "<body name='sunk' pos='0 0 0.05'><freejoint/><geom type='box' size='.1 .1 .1'/></body>"));
  CHECK(what.find("sunk") != std::string::npos);
  CHECK(what.find("move them apart") != std::string::npos);
}

TEST_CASE("MJCF text goes through ParseScene and LoadScene") {
  const std::string text =
      "  \n" + World("<body name='b' pos='0 0 1'><freejoint/><geom size='.1'/></body>");
  CHECK(ParseScene(text, "inline").stepper() == "explicit");
  CHECK(IsMjcfPath("a/b.XML"));
  CHECK(IsMjcfPath("b.mjcf"));
  CHECK_FALSE(IsMjcfPath("b.json"));
  CHECK_FALSE(IsMjcfPath("a.xml/b"));
}

TEST_CASE("a scene written as MJCF reads back as the same scene") {
  const Scene scene = ParseScene(testing::kMixedShapesScene, "mixed.json");
  const std::string xml = WriteMjcf(scene);
  const Scene back = ParseMjcfScene(xml, "mixed.xml");
  CHECK(back.h() == scene.h());
  CHECK(back.gravity() == scene.gravity());
  CHECK(back.laws.default_law.mu == scene.laws.default_law.mu);
  CHECK(back.laws.overrides().empty());
  REQUIRE(back.bodies.size() == scene.bodies.size());
  for (const Body& b : scene.bodies) {
    CAPTURE(b.name);
    const Body& r = Named(back, b.name);
    CHECK(r.fixed == b.fixed);
    CHECK(r.shape.kind == b.shape.kind);
    CHECK((r.state.position - b.state.position).norm() < 1e-12);
    CHECK(Angle(r.state.orientation, b.state.orientation) < 1e-12);
    if (b.shape.kind == ShapeKind::Polyhedron) {
      CHECK(r.shape.polyhedron->volume ==
            doctest::Approx(b.shape.polyhedron->volume).epsilon(1e-12));
    } else {
      CHECK((r.shape.size - b.shape.size).norm() < 1e-12);
    }
    if (b.fixed) continue;
    CHECK(r.mass.mass == b.mass.mass);
    CHECK((r.mass.body_inertia - b.mass.body_inertia).norm() < 1e-12 * b.mass.body_inertia.norm());
  }
  // The initial velocities go in a keyframe (MuJoCo starts there by mj_resetDataKeyframe); a
  // model read starts at rest, as MuJoCo's does.
  CHECK(xml.find("<key name=\"initial\"") != std::string::npos);
  CHECK(Named(back, "ball").state.linear_velocity.isZero());
}

TEST_CASE("what MJCF cannot say is refused by the writer") {
  Scene scene = ParseScene(testing::kMixedShapesScene, "mixed.json");
  ContactLaw law = scene.laws.default_law;
  law.mu = 0.9;
  scene.laws.Set("box", "ball", law);
  CHECK_THROWS_WITH_AS(WriteMjcf(scene), doctest::Contains("ball, box"), InputError);
  scene.laws = ContactLawTable();
  scene.laws.default_law.restitution = 0.5;
  CHECK_THROWS_WITH_AS(WriteMjcf(scene), doctest::Contains("restitution"), InputError);
}

TEST_CASE("an MJCF capsule comes to rest on its side on the floor, at its middle") {
  Scene scene =
      Parse(World("<geom name='floor' type='plane' size='1 1 1'/>"
                  "<body name='cap' pos='0.1 0.2 0.3' euler='0 90 10'><freejoint/>"
                  "<geom type='capsule' size='0.05 0.2'/></body>",
                  "<option timestep='0.005'/>"));
  // The stepper's default variant, Coulomb's cone, at the tolerance every MJCF model takes.
  CHECK(scene.variant() == "cone/auto");
  CHECK(scene.settings().tolerance == kMjcfTolerance);
  scene.duration = 1.5;
  SceneRunner runner(scene);
  while (!runner.Done()) REQUIRE(runner.Step().summary.IsSolved());
  const Body& cap = runner.stepper().bodies()[scene.FindBody("cap")];
  CHECK(cap.state.position.z() == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(cap.state.linear_velocity.norm() < 1e-6);
  CHECK(std::abs((cap.state.orientation * Vector3d::UnitX()).z()) < 1e-6);
}

TEST_CASE("MJCF towers of unequal boxes: every step solved at the MJCF tolerance") {
  // Random towers (rods, plates and slabs of 0.05-20 kg, most toppling) whose explicit runs at
  // the stepper's default tolerance, FCLib error 1e-8, fail steps (docs/reliability.md: errors
  // of 1.2e-8-2.0e-8), written as MJCF and read back: at an MJCF model's tolerance, 1e-6, every
  // step is solved.
  for (const unsigned seed : {110u, 145u, 221u}) {
    CAPTURE(seed);
    const Scene json = ParseScene(testing::RandomTowerScene(seed, "explicit"), "tower.json");
    const Scene scene = ParseMjcfScene(WriteMjcf(json), "tower.xml");
    REQUIRE(scene.variant() == "cone/auto");
    REQUIRE(scene.settings().tolerance == kMjcfTolerance);
    REQUIRE(scene.bodies.size() == json.bodies.size());
    SceneRunner runner(scene);
    int failed = 0;
    while (!runner.Done()) failed += runner.Step().summary.IsSolved() ? 0 : 1;
    CHECK(failed == 0);
  }
}

TEST_CASE("ncpkit mjcf writes a scene that ncpkit simulate and compare run; refusals exit 2") {
  Folder folder("mjcf_cli");
  const std::string model = testing::TemporaryPath("mjcf_cli/stack.xml");
  const testing::Run written =
      testing::RunNcpkit("mjcf " + SceneDirectory() + "/engine/stack50.json --out " + model);
  CHECK(written.status == 0);
  const testing::Run run = testing::RunNcpkit("simulate " + model + " --duration 0.05 --json");
  CHECK(run.status == 0);
  CHECK(run.output.find("\"steps\": 5,") != std::string::npos);
  CHECK(testing::RunNcpkit("compare " + model + " --duration 0.01").status == 0);
  const testing::Run printed =
      testing::RunNcpkit("mjcf " + SceneDirectory() + "/sliding_cube.json");
  CHECK(printed.status == 0);
  CHECK(printed.output.rfind("<mujoco", 0) == 0);
  const testing::Run impulses =
      testing::RunNcpkit("mjcf " + SceneDirectory() + "/toppling_cube.json");
  CHECK(impulses.status == 2);
  CHECK(impulses.output.find("impulses") != std::string::npos);
  const std::string hinge = folder.Write(
      "hinge.xml", World("\n<body name='arm'>\n<joint type='hinge'/><geom size='.1'/></body>"));
  const testing::Run refused = testing::RunNcpkit("simulate " + hinge);
  CHECK(refused.status == 2);
  CHECK(refused.output.find("hinge.xml:3: <joint>: a hinge joint is not supported") !=
        std::string::npos);
}

TEST_CASE("MJCF meshes that span no volume, repeat a point, hold NaN or are missing are refused") {
  auto model = [](const std::string& mesh) {
    return World("<body pos='0 0 1'><freejoint/><geom type='mesh' mesh='m'/></body>",
                 "<asset>\n\n" + mesh + "</asset>");
  };
  struct Case {
    std::string mesh, says;
  };
  const Case cases[] = {
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0  1 1 0  0.5 0.5 0'/>", "volume"},
      {"<mesh name='m' vertex='0 0 0  0 0 0  0 0 0  0 0 0'/>", "all one point"},
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 nan'/>", "finite"},
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 1  0 0'/>", "multiple of 3"},
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0'/>", "at least 12 numbers"},
      {"<mesh name='m' file='none.obj'/>", "none.obj"},
      {"<mesh name='m' file='mesh.ply'/>", "mesh.ply"},
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 1' scale='1 0 1'/>", "scale"},
      {"<mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 1' refpos='1 0 0'/>", "refpos"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mesh);
    try {
      Parse(model(c.mesh));
      FAIL("was read");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.line() == 3);  // the <mesh> element's
      CHECK(what.find("<mesh name=\"m\">") != std::string::npos);
      CHECK(what.find(c.says) != std::string::npos);
    }
  }
}

}  // namespace mjcf_test
}  // namespace ncpkit
