// MuJoCo's MJCF model files as ncpkit scenes, and ncpkit scenes written as MJCF, so that the
// scenes people already have run through ncpkit's steppers and MuJoCo runs ncpkit's.
//
// Read: free bodies (a <freejoint/>, or a <joint type="free"/>) of one geom each, and fixed geoms
// (in <worldbody> or in bodies without joints, welded to it): plane, box, sphere, capsule,
// cylinder, ellipsoid, and mesh as its convex hull (a file's vertices, or the asset's vertex
// list); sizes from size or fromto; positions and orientations (quat, euler, axisangle, xyaxes,
// zaxis, under the compiler's angle and eulerseq); mass, density or an <inertial>; friction
// (a pair's coefficient the larger of its geoms', as MuJoCo combines them) and condim 1 or 3;
// <option> timestep and gravity; <default> classes, childclass and class; <include>. The scene
// is stepped by the explicit stepper (the formulation MuJoCo's is one of) for 1 s unless told,
// with its default variant (cone/auto) solved to kMjcfTolerance.
// What MuJoCo alone reads (its solver's settings, contact softness, buffer sizes) and what has no
// mechanics (visuals, sites, cameras, lights, keyframes: a model starts at rest, as in MuJoCo)
// is accepted and left to MuJoCo; every other element or attribute (hinge and slide joints,
// tendons, actuators, equality constraints, sensors, collision filtering, compound bodies) is
// refused with the file, the line and what is supported. docs/steppers.md lists the subset.
#ifndef NCPKIT_INTEGRATORS_MJCF_H_
#define NCPKIT_INTEGRATORS_MJCF_H_

#include <string>

#include "integrators/scene.h"

namespace ncpkit {

// The tolerance of an MJCF model's steps (the FCLib error of each step's problem): 1e-6, as the
// engine scenes', instead of the explicit stepper's default 1e-8.
constexpr double kMjcfTolerance = 1e-6;

// True if `path` names an MJCF file (extension .xml or .mjcf, any case).
bool IsMjcfPath(const std::string& path);
// True if `text` starts, after white space, with '<' (an XML document, not JSON).
bool LooksLikeXml(const std::string& text);

// The scene of an MJCF document read from `source` (its includes and mesh files are found
// relative to the folder of `source`). Throws InputError naming the file, the line and the
// element for anything outside the subset above, malformed XML, include cycles, bad numbers and
// bodies overlapping at the start.
Scene ParseMjcfScene(const std::string& text, const std::string& source);
Scene LoadMjcfScene(const std::string& path);

// The scene as an MJCF model MuJoCo 2.2 loads: free bodies with the scene's mass and inertia,
// fixed geoms, convex shapes as mesh assets (their vertices inline), the default law's friction,
// the stepper's time step and gravity, and, when bodies move at the start, a keyframe "initial"
// with their velocities (mj_resetDataKeyframe starts MuJoCo there). Throws InputError for what
// MJCF cannot say: a shape kind MuJoCo lacks, per-pair laws other than the default one,
// restitution, compliance, impulses, actuators.
std::string WriteMjcf(const Scene& scene);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_MJCF_H_
