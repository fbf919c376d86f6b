"""System identification with trajectory derivatives: recover a box's friction coefficient and
mass from a recorded trajectory.

A box rests on the ground; a scripted impulse pushes it at t = 0.05 s and it slides until
friction stops it. The recording was made with values the fit does not know. The
fit is a least-squares problem in (mu, mass) over the recorded x and y columns, solved by
scipy's Levenberg-Marquardt with the exact Jacobian of the columns (Trajectory.jacobian: one
forward pass through the steps' derivatives per parameter), so that each iteration costs one
simulation. With finite differences each Jacobian costs two simulations more; the script runs
that fit too and prints both counts.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/derivatives/system_identification.py
Exit status 0 when both values are recovered to a relative 1e-8 in at most 15 iterations with
fewer simulations than the finite-difference fit.
"""
import json
import sys

import numpy as np
from scipy.optimize import least_squares

import ncpkit

SCENE = {
    "name": "pushed-box", "stepper": "explicit", "solver": "auto", "tolerance": 1e-12,
    "max_iterations": 200, "h": 0.01, "duration": 0.6, "gravity": [0, 0, -9.8],
    "bodies": [{"name": "box", "shape": "box", "size": [0.4, 0.3, 0.2], "mass": 1.0,
                "position": [0, 0, 0.1]}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "impulses": [{"body": "box", "at": 0.05, "impulse": [2.0, 0.6, 0, 0, 0, 0]}],
    "contact": {"mu": 0.3},
}
COLUMNS = ["box.x", "box.y"]


class Model:
    """The scene's trajectory as a function of (mu, mass), one simulation per distinct point."""

    def __init__(self):
        self.simulations = 0
        self._cache = {}

    def trajectory(self, p):
        key = tuple(float(v) for v in p)
        if key not in self._cache:
            scene = json.loads(json.dumps(SCENE))
            scene["contact"]["mu"] = key[0]
            scene["bodies"][0]["mass"] = key[1]
            self.simulations += 1
            self._cache = {key: ncpkit.simulate(ncpkit.parse_scene(json.dumps(scene)),
                                                derivatives=True)}
        return self._cache[key]


def fit(recorded, start, exact_jacobian):
    model = Model()

    def residuals(p):
        traj = model.trajectory(p)
        return np.concatenate([traj[c] - recorded[c] for c in COLUMNS])

    def jacobian(p):
        d = model.trajectory(p).jacobian(COLUMNS, wrt=["mu", "box.mass"])
        return np.column_stack([np.concatenate([d[name][c] for c in COLUMNS])
                                for name in ["mu", "box.mass"]])

    result = least_squares(residuals, start, jac=jacobian if exact_jacobian else "2-point",
                           method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return result, model.simulations


def main():
    hidden = np.array([0.37, 1.6])
    truth = Model().trajectory(hidden)
    recorded = {c: np.array(truth[c]) for c in COLUMNS}
    start = np.array([0.25, 1.2])
    exact, exact_simulations = fit(recorded, start, True)
    fd, fd_simulations = fit(recorded, start, False)
    error = np.max(np.abs(exact.x - hidden) / hidden)
    iterations = exact.njev
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
