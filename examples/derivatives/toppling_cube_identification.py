"""System identification on a shipped scene of the implicit stepper: recover the toppling cube's
friction coefficient and mass from its recorded trajectory.

scenes/toppling_cube.json (Xie & Chakraborty 2016, VI-C): a unit cube starts on a vertex, falls
onto an edge and a face, and is pushed by two scripted impulses (at 1 s and 1.8 s), the second
making it slide. The recording was made with values the fit does not know; the impulses are
fixed (N s), so the mass shows in the speeds they give and the friction in the slide. The fit is
a least-squares problem in (mu, mass) over the recorded x, y and z columns of all 400 steps,
solved by scipy's Levenberg-Marquardt with the exact Jacobian of the columns
(Trajectory.jacobian: one forward pass through the steps' derivatives per parameter), so each
iteration costs one simulation; the script runs the fit with scipy's finite differences too and
prints both counts.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/derivatives/toppling_cube_identification.py
Exit status 0 when both values are recovered to a relative 1e-8 in at most 15 iterations with
fewer simulations than the finite-difference fit.
"""
import json
import os
import sys

import numpy as np
from scipy.optimize import least_squares

import ncpkit

COLUMNS = ["cube.x", "cube.y", "cube.z"]
WRT = ["mu", "cube.mass"]


def load_scene():
    with open(ncpkit.scene_path("toppling_cube")) as f:
        scene = json.load(f)
    # Solved tightly, so that the fit's residuals and Jacobians are exact to rounding.
    scene["tolerance"] = 1e-12
    return scene


class Model:
    """The scene's trajectory as a function of (mu, mass), one simulation per distinct point."""

    def __init__(self, scene):
        self.scene = scene
        self.simulations = 0
        self._cache = {}

    def trajectory(self, p):
        key = tuple(float(v) for v in p)
        if key not in self._cache:
            scene = json.loads(json.dumps(self.scene))
            scene["contact"]["mu"] = key[0]
            scene["bodies"][0]["mass"] = key[1]
            self.simulations += 1
            self._cache = {key: ncpkit.simulate(ncpkit.parse_scene(json.dumps(scene)),
                                                derivatives=True)}
        return self._cache[key]


def fit(scene, recorded, start, exact_jacobian):
    model = Model(scene)

    def residuals(p):
        traj = model.trajectory(p)
        return np.concatenate([traj[c] - recorded[c] for c in COLUMNS])

    def jacobian(p):
        d = model.trajectory(p).jacobian(COLUMNS, wrt=WRT)
        return np.column_stack([np.concatenate([d[name][c] for c in COLUMNS]) for name in WRT])

    result = least_squares(residuals, start, jac=jacobian if exact_jacobian else "2-point",
                           method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return result, model.simulations


def main():
    scene = load_scene()
    hidden = np.array([0.23, 1.3])
    truth = Model(scene).trajectory(hidden)
    recorded = {c: np.array(truth[c]) for c in COLUMNS}
    start = np.array([0.3, 1.0])
    exact, exact_simulations = fit(scene, recorded, start, True)
    fd, fd_simulations = fit(scene, recorded, start, False)
    error = np.max(np.abs(exact.x - hidden) / hidden)
    iterations = exact.njev
    print("scene %s, %d steps" % (os.path.basename(ncpkit.scene_path("toppling_cube")),
                                  len(truth)))
    print("hidden mu = %.10g, mass = %.10g kg" % tuple(hidden))
    print("recovered mu = %.10g, mass = %.10g kg (relative error %.2e) in %d iterations, "
          "%d simulations" % (exact.x[0], exact.x[1], error, iterations, exact_simulations))
    print("finite differences: relative error %.2e, %d simulations" %
          (np.max(np.abs(fd.x - hidden) / hidden), fd_simulations))
    ok = error <= 1e-8 and iterations <= 15 and exact_simulations < fd_simulations
    if not ok:
        print("not recovered as required (error <= 1e-8, <= 15 iterations, fewer simulations)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
