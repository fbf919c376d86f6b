"""Trajectory optimisation by shooting with trajectory derivatives: the start speed that makes a
sliding cube stop at a target.

A unit cube slides on the ground along (0.8, 0.6) and friction stops it. Newton's method on the
distance it has covered after 2 s, d(v0) - target = 0, takes d(distance)/d(v0) from one reverse
pass through the steps' derivatives (Trajectory.gradient of the final x and y with respect to the
cube's start velocity).

Run: PYTHONPATH=build/python /usr/bin/python3 examples/derivatives/shooting.py
Exit status 0 when the cube stops within 1e-9 m of the target in at most 10 Newton steps.
"""
import json
import sys

import numpy as np

import ncpkit

DIRECTION = np.array([0.8, 0.6, 0.0])
TARGET = 1.5  # m along DIRECTION
SCENE = {
    "name": "shooting", "stepper": "explicit", "solver": "auto", "tolerance": 1e-12,
    "max_iterations": 200, "h": 0.01, "duration": 2.0, "gravity": [0, 0, -9.8],
    "bodies": [{"name": "cube", "shape": "box", "size": [1, 1, 1], "mass": 1.0,
                "position": [0, 0, 0.5], "velocity": [0, 0, 0]}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "contact": {"mu": 0.12},
}


def distance_and_slope(speed):
    scene = json.loads(json.dumps(SCENE))
    scene["bodies"][0]["velocity"] = list(speed * DIRECTION)
    traj = ncpkit.simulate(ncpkit.parse_scene(json.dumps(scene)), derivatives=True)
    if np.hypot(traj["cube.vx"][-1], traj["cube.vy"][-1]) > 1e-9:
        raise RuntimeError("the cube is still moving after %g s" % traj.time[-1])
    end = np.array([traj["cube.x"][-1], traj["cube.y"][-1], 0.0])
    # d(end . DIRECTION)/d(v0) . DIRECTION: the gradient of the distance along DIRECTION.
    g = traj.gradient({"cube.x": _last(len(traj)) * DIRECTION[0],
                       "cube.y": _last(len(traj)) * DIRECTION[1]}, wrt="cube.velocity")
    return float(end @ DIRECTION), float(g["cube.velocity"] @ DIRECTION)


def _last(n):
    w = np.zeros(n)
    w[-1] = 1.0
    return w


def main():
    speed = 1.0
    for step in range(1, 11):
        distance, slope = distance_and_slope(speed)
        print("Newton step %d: v0 = %.12f m/s stops at %.12f m (slope %.6f s)" %
              (step, speed, distance, slope))
        if abs(distance - TARGET) <= 1e-9:
            print("v0 = %.12f m/s stops the cube %.2e m from the target, after %d simulations" %
                  (speed, abs(distance - TARGET), step))
            return 0
        speed -= (distance - TARGET) / slope
    print("not converged in 10 Newton steps")
    return 1


if __name__ == "__main__":
    sys.exit(main())
