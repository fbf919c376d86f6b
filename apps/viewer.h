// The trajectory viewer: one self-contained HTML page (three.js and the player bundled in at
// build time, viewer/) that plays a run with the scene's shapes, a time slider, play / pause,
// contact points and normals, and the solver statistics of the step shown.
#ifndef NCPKIT_APPS_VIEWER_H_
#define NCPKIT_APPS_VIEWER_H_

#include <array>
#include <ostream>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/stepper.h"

namespace ncpkit {

struct ViewerFrame {
  double t = 0.0;
  std::vector<double> poses;                   // 7 per moving body: x y z qw qx qy qz
  std::vector<std::array<double, 7>> markers;  // point, normal, magnitude
  int iterations = 0;
  double residual = 0.0, us = 0.0;
  std::string status;
};

// A run as the page plays it. Made from a live run (Add per step) or from a trajectory CSV.
class ViewerRun {
 public:
  // The scene's bodies (shapes, initial poses) and the variant run.
  ViewerRun(const Scene& scene, const std::string& variant);
  void Add(const StepRecord& record, const Stepper& stepper);
  // The run of a trajectory CSV written by `simulate --out` for this scene: poses, solver
  // statistics and, where the CSV has them (implicit scenes), contact points and normals.
  // Throws InputError for a CSV that does not fit the scene (a missing body column, a number
  // that does not parse), naming the file, line and column.
  static ViewerRun FromCsv(const Scene& scene, const std::string& path);
  // The same from the CSV's text; `name` for messages.
  static ViewerRun FromCsvText(const Scene& scene, const std::string& text,
                               const std::string& name);
  const std::vector<ViewerFrame>& frames() const { return frames_; }

  // The page. Throws InputError if this program was built without the viewer (npm missing).
  void WriteHtml(std::ostream& out) const;

 private:
  std::string scene_, stepper_, variant_;
  std::vector<Body> bodies_;
  std::vector<int> moving_;  // indices of the bodies whose poses the frames hold
  Eigen::Vector3d up_ = Eigen::Vector3d::UnitZ();  // against gravity: the camera's up
  std::vector<ViewerFrame> frames_;
  std::vector<ContactMarker> markers_;  // scratch
};

// True if the page's script was bundled into this program at build time.
bool ViewerAvailable();

}  // namespace ncpkit

#endif  // NCPKIT_APPS_VIEWER_H_
