"""Trajectory optimisation by shooting, quasistatic: the finger commands that push a box to a
target position.

A sphere finger on two prismatic actuators (fx, fy: impedances of 1000 N/m) pushes a 1 kg box
across the ground (mu 0.4) 5 cm off the centre of its face, commanded along straight ramps from
its start to (X, Y) over one second; the box slides and turns, and the finger slides along its
face. (Pushed at the centre, the box's turn to one side or the other would hinge on rounding.) Newton's method on (X, Y) brings the
box's final (x, y) to the target, its 2 x 2 Jacobian from two reverse passes of
Trajectory.gradient with respect to the command at every step ("fx.q_cmd", "fy.q_cmd"), chained
through the ramps (the command at time t is X min(t / T, 1)). One simulation an iteration.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/derivatives/push.py
"""
import json

import numpy as np

import ncpkit

T = 1.0            # the ramps' length (s)
TARGET = np.array([0.2, 0.03])


def scene(X, Y):
    return ncpkit.parse_scene(json.dumps({
        "name": "push", "stepper": "quasistatic", "model": "qp-lcp", "solver": "lemke",
        "h": 0.05, "duration": T, "gravity": [0, 0, -9.81], "contact": {"mu": 0.4},
        "bodies": [{"name": "ground", "shape": "plane"},
                   {"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
                    "position": [0, 0, 0.05]},
                   {"name": "finger", "shape": "sphere", "size": [0.03], "mass": 0.1,
                    "position": [-0.131, -0.05, 0.05]}],
        "actuators": [{"name": "fx", "axis": [1, 0, 0], "bodies": ["finger"], "stiffness": 1000},
                      {"name": "fy", "axis": [0, 1, 0], "bodies": ["finger"], "stiffness": 1000}],
        "commands": {"fx": [[0, 0], [T, X]], "fy": [[0, 0], [T, Y]]}}))


def final_and_jacobian(X, Y):
    """The box's final (x, y) and its Jacobian with respect to (X, Y)."""
    traj = ncpkit.simulate(scene(X, Y), derivatives=True)
    ramp = np.minimum(np.asarray(traj["t"]) / T, 1.0)   # d(command at row k)/d(end point)
    J = np.empty((2, 2))
    for i, column in enumerate(["box.x", "box.y"]):
        g = traj.gradient(column, wrt=["fx.q_cmd", "fy.q_cmd"])
        J[i] = [g["fx.q_cmd"] @ ramp, g["fy.q_cmd"] @ ramp]
    return np.array([traj["box.x"][-1], traj["box.y"][-1]]), J


def solve(start=(0.25, 0.0), tolerance=1e-10, max_iterations=15):
    """Newton's method from `start`; returns ((X, Y), the box's final (x, y), simulations)."""
    u = np.array(start, dtype=float)
    for simulations in range(1, max_iterations + 1):
        final, J = final_and_jacobian(*u)
        residual = final - TARGET
        if np.linalg.norm(residual) < tolerance:
            return u, final, simulations
        u = u - np.linalg.solve(J, residual)
    raise RuntimeError("no convergence in %d iterations" % max_iterations)


if __name__ == "__main__":
    u, final, simulations = solve()
    assert simulations <= 10, simulations
    print("commands end at X = %.6f m, Y = %.6f m" % tuple(u))
    print("box at (%.9f, %.9f), target (%.3f, %.3f), %d simulations"
          % (final[0], final[1], TARGET[0], TARGET[1], simulations))
