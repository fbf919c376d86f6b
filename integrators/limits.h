// Limits on what a scene may ask for, and the step count of a run, computed without overflow.
#ifndef NCPKIT_INTEGRATORS_LIMITS_H_
#define NCPKIT_INTEGRATORS_LIMITS_H_

#include <cstdint>

#include "dynamics/body.h"

namespace ncpkit {

// Largest iteration count a scene file may give a step's solver.
constexpr int64_t kMaxSolverIterations = 10'000'000;
// Largest number of friction directions per contact (quasistatic DLC/QP pyramids).
constexpr int64_t kMaxFrictionDirections = 256;
// Steps a run may take unless the caller raises the cap explicitly (`--max-steps`): ten
// million steps, e.g. 28 hours of simulated time at h = 0.01 s.
constexpr int64_t kDefaultMaxSteps = 10'000'000;
// kMaxCoordinate, the largest coordinate a scene may hold: dynamics/body.h.

// Number of steps of length h that cover `duration` (the last may end past it by less than
// h). Throws std::invalid_argument, quoting duration, h and the count, if either is not
// positive and finite or the count exceeds max_steps.
int64_t CountSteps(double duration, double h, int64_t max_steps = kDefaultMaxSteps);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_LIMITS_H_
