"""Trajectory derivatives from Python: simulate(..., derivatives=True), Trajectory.gradient with
a column, a dict of column weights and a function of the columns, Trajectory.jacobian, against
central differences of whole runs; refused input; the examples in examples/derivatives run."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ncpkit

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "derivatives")

SCENE = {
    "name": "pushed-box", "stepper": "explicit", "solver": "auto", "tolerance": 1e-12,
    "max_iterations": 200, "h": 0.01, "duration": 0.25, "gravity": [0, 0, -9.8],
    "bodies": [{"name": "box", "shape": "box", "size": [0.4, 0.3, 0.2], "mass": 1.5,
                "position": [0, 0, 0.1], "velocity": [1.0, 0.3, 0.0]}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "impulses": [{"body": "box", "at": 0.05, "impulse": [0.8, 0.2, 0, 0, 0, 0]}],
    "contact": {"mu": 0.3},
}


def run(mu=0.3, mass=1.5, vx=1.0, derivatives=False, solver=None):
    scene = json.loads(json.dumps(SCENE))
    scene["contact"]["mu"] = mu
    scene["bodies"][0]["mass"] = mass
    scene["bodies"][0]["velocity"][0] = vx
    options = {} if solver is None else {"solver": solver}
    return ncpkit.simulate(ncpkit.parse_scene(json.dumps(scene)), derivatives=derivatives,
                           **options)


def central(column, step=1e-6, solver=None, **base):
    """Central differences of a column (every row) with respect to one keyword of run()."""
    (name, value), = base.items()
    up = run(solver=solver, **{name: value + step})[column]
    down = run(solver=solver, **{name: value - step})[column]
    return (up - down) / (2 * step)


@pytest.fixture(scope="module")
def traj():
    return run(derivatives=True)


def test_gradient_of_a_column_against_whole_run_differences(traj):
    g = traj.gradient("box.x", wrt=["mu", "box.mass", "box.velocity"])
    assert set(g) == {"mu", "box.mass", "box.velocity"}
    assert isinstance(g["mu"], float)
    assert g["box.velocity"].shape == (3,)
    assert g["mu"] == pytest.approx(central("box.x", mu=0.3)[-1], rel=1e-5)
    assert g["box.mass"] == pytest.approx(central("box.x", mass=1.5)[-1], rel=1e-5)
    assert g["box.velocity"][0] == pytest.approx(central("box.x", vx=1.0)[-1], rel=1e-5)
    # step=: another row.
    assert traj.gradient("box.y", wrt="mu", step=10)["mu"] == pytest.approx(
        central("box.y", mu=0.3)[10], rel=1e-5)
    assert traj.undetermined_steps == []


@pytest.mark.parametrize("solver", ["pyramid/lemke", "relaxed/lemke", "convex/convex-newton"])
def test_other_contact_models_gradients_against_whole_run_differences(solver):
    traj = run(derivatives=True, solver=solver)
    g = traj.gradient("box.x", wrt=["mu", "box.mass", "box.velocity"])
    assert g["mu"] == pytest.approx(central("box.x", solver=solver, mu=0.3)[-1], rel=1e-5)
    assert g["box.mass"] == pytest.approx(central("box.x", solver=solver, mass=1.5)[-1],
                                          rel=1e-5, abs=1e-9)
    assert g["box.velocity"][0] == pytest.approx(central("box.x", solver=solver, vx=1.0)[-1],
                                                 rel=1e-5)
    assert traj.undetermined_steps == []


def run_soft(mu=0.3, mass=1.5, vx=1.0, stiffness=3e3, damping=10.0, derivatives=False):
    """The pushed box on the soft model's springs (it carries their anchors from step to step)."""
    scene = json.loads(json.dumps(SCENE))
    scene["contact"]["mu"] = mu
    scene["bodies"][0]["mass"] = mass
    scene["bodies"][0]["velocity"][0] = vx
    scene["model"] = "soft"
    scene["soft"] = {"stiffness": stiffness, "damping": damping}
    return ncpkit.simulate(ncpkit.parse_scene(json.dumps(scene)), derivatives=derivatives)


def test_soft_model_gradients_against_whole_run_differences():
    traj = run_soft(derivatives=True)
    assert all(traj.step_modes(k)[1] == "llll" for k in range(1, len(traj)))
    g = traj.gradient("box.x", wrt=["mu", "box.mass", "box.velocity", "soft_stiffness",
                                    "soft_damping"])
    for name, value, step, got in [("mu", 0.3, 1e-6, g["mu"]),
                                   ("mass", 1.5, 1e-6, g["box.mass"]),
                                   ("vx", 1.0, 1e-6, g["box.velocity"][0]),
                                   ("stiffness", 3e3, 1e-3, g["soft_stiffness"]),
                                   ("damping", 10.0, 1e-5, g["soft_damping"])]:
        up = run_soft(**{name: value + step})["box.x"][-1]
        down = run_soft(**{name: value - step})["box.x"][-1]
        assert got == pytest.approx((up - down) / (2 * step), rel=1e-5), name


def test_dict_and_function_losses_agree_with_the_column(traj):
    n = len(traj)
    target = 0.1 + 0.01 * np.arange(n)

    def loss(columns):
        return float(np.sum((columns["box.x"] - target) ** 2))

    weights = {"box.x": 2.0 * (traj["box.x"] - target)}
    by_dict = traj.gradient(weights, wrt=["mu", "box.mass"])
    by_function = traj.gradient(loss, wrt=["mu", "box.mass"])
    for name in ("mu", "box.mass"):
        assert by_function[name] == pytest.approx(by_dict[name], rel=1e-7)
    by_differences = sum(2.0 * (traj["box.x"] - target) * central("box.x", mu=0.3))
    assert by_dict["mu"] == pytest.approx(by_differences, rel=1e-5)


def test_jacobian_matches_differences_on_every_row(traj):
    d = traj.jacobian(["box.x", "box.qz"], wrt=["mu", "box.velocity"])
    assert d["mu"]["box.x"].shape == (len(traj),)
    assert d["box.velocity"]["box.x"].shape == (len(traj), 3)
    np.testing.assert_allclose(d["mu"]["box.x"], central("box.x", mu=0.3), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(d["mu"]["box.qz"], central("box.qz", mu=0.3), rtol=1e-5,
                               atol=1e-9)
    single = traj.jacobian("box.x", wrt="mu")
    np.testing.assert_array_equal(single["mu"], d["mu"]["box.x"])
    impulse = traj.gradient("box.x", wrt="box.impulse")["box.impulse"]
    assert impulse.shape == (len(traj), 6)


def test_step_modes_name_sliding_contacts(traj):
    determined, modes, degenerate = traj.step_modes(len(traj) - 1)
    assert determined
    assert set(modes) <= set("asl") and "l" in modes
    assert isinstance(degenerate, list)


def test_refused_input(traj):
    with pytest.raises(ncpkit.InputError, match="no derivatives"):
        run().gradient("box.x")
    with pytest.raises(ncpkit.InputError, match="'friction'; there are: h, mu"):
        traj.gradient("box.x", wrt=["friction"])
    with pytest.raises(ncpkit.InputError, match="no state column 'box.q'"):
        traj.gradient("box.q")
    with pytest.raises(IndexError):
        traj.gradient("box.x", step=len(traj))
    with pytest.raises(ncpkit.InputError, match="not finite"):
        traj.gradient(lambda c: float(np.sum(np.sqrt(c["box.x"] - 10.0))), wrt="mu")
    with pytest.raises(ncpkit.InputError, match="3 rows"):
        traj.gradient({"box.x": np.ones(3)})
    # The quasistatic dqc model has no step derivatives: the run says so.
    with pytest.raises(ncpkit.InputError, match="not dqc"):
        ncpkit.simulate(push_scene(), solver="dqc/fb-newton", derivatives=True)


def push_scene(mu=0.4, X=0.25, Y=0.05, ball=False):
    pushed = ({"name": "box", "shape": "sphere", "size": [0.08], "mass": 1.3,
               "position": [0, 0.01, 0.08]} if ball else
              {"name": "box", "shape": "box", "size": [0.2, 0.16, 0.1], "mass": 1.3,
               "position": [0, 0.01, 0.05]})
    finger = [-0.1105, 0.01, 0.08] if ball else [-0.1305, -0.03, 0.05]
    return ncpkit.parse_scene(json.dumps({
        "name": "push", "stepper": "quasistatic", "model": "qp-lcp", "solver": "lemke",
        "h": 0.05, "duration": 1.0, "gravity": [0, 0, -9.81], "contact": {"mu": mu},
        "bodies": [{"name": "ground", "shape": "plane"}, pushed,
                   {"name": "finger", "shape": "sphere", "size": [0.03], "mass": 0.1,
                    "position": finger}],
        "actuators": [{"name": "fx", "axis": [1, 0, 0], "bodies": ["finger"], "stiffness": 800},
                      {"name": "fy", "axis": [0, 1, 0], "bodies": ["finger"], "stiffness": 1200}],
        "commands": {"fx": [[0, 0], [1.0, X]], "fy": [[0, 0], [1.0, Y]]}}))


def test_quasistatic_push_gradients_against_whole_run_differences():
    """A box pushed off-centre by a finger for 20 quasistatic steps (qp-lcp), and a ball pushed
    (dlc): the gradients of the final x and y with respect to mu, the mass and the ramps' end
    points (through the commands at every step) against central differences of whole runs."""
    check_push_gradients({})
    check_push_gradients({"solver": "dlc/lemke"}, ball=True)
    # The DLC's box on four corners: the friction's share between the corners, and with it the
    # box's turn, is not fixed by the step's data; the run says so at every step.
    traj = ncpkit.simulate(push_scene(), solver="dlc/lemke", derivatives=True)
    traj.gradient("box.x", wrt="mu")
    assert len(traj.undetermined_steps) == len(traj)


def check_push_gradients(options, ball=False):
    traj = ncpkit.simulate(push_scene(ball=ball), derivatives=True, **options)
    assert "fx.q" in traj.state_columns() and "fx.q_cmd" in traj.wrt_names()
    ramp = np.minimum(np.asarray(traj["t"]) / 1.0, 1.0)
    eps = 1e-6
    for column in ["box.x", "box.y", "fx.q"]:
        g = traj.gradient(column, wrt=["mu", "box.mass", "fx.q_cmd", "fy.q_cmd"])
        assert g["fx.q_cmd"].shape == (len(traj),)
        exact = {"mu": g["mu"], "X": g["fx.q_cmd"] @ ramp, "Y": g["fy.q_cmd"] @ ramp}
        for name, moved in [("mu", lambda d: push_scene(mu=0.4 + d, ball=ball)),
                            ("X", lambda d: push_scene(X=0.25 + d, ball=ball)),
                            ("Y", lambda d: push_scene(Y=0.05 + d, ball=ball))]:
            fd = (ncpkit.simulate(moved(eps), **options)[column][-1] -
                  ncpkit.simulate(moved(-eps), **options)[column][-1]) / (2 * eps)
            assert abs(fd - exact[name]) <= 1e-5 * (1.0 + abs(fd)), (column, name, fd, exact)
        assert traj.undetermined_steps == []
    # The forward pass gives the same derivatives on every row.
    rows = traj.jacobian("box.x", wrt=["mu"])["mu"]
    assert rows[-1] == pytest.approx(traj.gradient("box.x", wrt="mu")["mu"], rel=1e-9)


@pytest.mark.parametrize("example", ["system_identification.py", "toppling_cube_identification.py",
                                     "shooting.py", "push.py"])
def test_example_runs(example):
    env = dict(os.environ)
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, example)], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_implicit_sliding_cube_closed_form():
    # Backward Euler, sliding along (0.8, 0.6) at 5 m/s with mu = 0.12: after N steps
    # x_N = x_0 + N h v_x - mu g h^2 N (N + 1) / 2 * 0.8 and
    # dx_N/dv_0 = N h I - mu g h^2 N (N + 1) / (2 |v_0|) (I - v^ v^T), first row.
    traj = ncpkit.simulate(ncpkit.scene_path("sliding_cube"), duration=0.2, derivatives=True)
    n, h, g, mu = 20, 0.01, 9.8, 0.12
    grad = traj.gradient("cube.x", wrt=["mu", "cube.velocity"])
    assert grad["mu"] == pytest.approx(-0.5 * g * h * h * n * (n + 1) * 0.8, rel=1e-9)
    c = mu * g * h * h * n * (n + 1) / (2 * 5.0)
    assert grad["cube.velocity"][0] == pytest.approx(n * h - c * (1 - 0.64), rel=1e-9)
    assert grad["cube.velocity"][1] == pytest.approx(c * 0.48, rel=1e-9)


def test_implicit_compliant_layer_runs_whole():
    # The quasi-rigid box drops into its layer, settles and is pushed: every step differentiated,
    # the layer's deflection and elastic displacement carried in the state.
    traj = ncpkit.simulate(ncpkit.scene_path("quasi_rigid_drop"), derivatives=True)
    assert "box-ground.deflection" in traj.wrt_names()
    grad = traj.gradient("box.x", wrt=["mu", "stiffness", "damping", "box.velocity"])
    assert all(np.all(np.isfinite(v)) for v in grad.values())
    assert grad["mu"] < 0.0  # more friction, a shorter slide after the push
    # A loss given as a function reads the table's columns (the layer's state is not one).
    f = traj.gradient(lambda c: float(c["box.x"][-1]), wrt="mu")
    assert f["mu"] == pytest.approx(grad["mu"], rel=1e-6)
