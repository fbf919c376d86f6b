"""Scenes from Python: loading, stepping with any variant, the trajectory as numpy columns
(the same numbers as the program's CSV), errors as exceptions."""
import csv
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import ncpkit


def program():
    """The ncpkit program beside the package (build tree or install prefix), if any."""
    here = os.path.dirname(ncpkit.__file__)
    for candidate in (os.path.join(here, "..", "..", "apps", "ncpkit"),  # <build>/python/ncpkit
                      os.path.join(here, "..", "..", "..", "..", "bin", "ncpkit")):  # <prefix>
        if os.path.isfile(candidate):
            return candidate
    return shutil.which("ncpkit")


def test_a_bundled_scene_loads_with_its_settings():
    scene = ncpkit.load_scene(ncpkit.scene_path("sliding_cube"))
    assert scene.name == "sliding-cube"
    assert scene.stepper == "implicit"
    assert scene.solver == "auto"
    assert scene.h == pytest.approx(0.01)
    assert "cube" in scene.bodies
    assert "fb-newton-dense" in scene.default_variants
    quasistatic = ncpkit.load_scene(ncpkit.scene_path("gripper_sphere"))
    assert quasistatic.stepper == "quasistatic"
    assert "/" in quasistatic.solver


def test_simulate_returns_numpy_columns_and_statistics():
    traj = ncpkit.simulate(ncpkit.scene_path("sliding_cube"), duration=0.2)
    assert len(traj) == 20
    assert traj.stats["steps"] == 20 and traj.stats["failed_steps"] == 0
    assert traj.stats["max_natural_residual"] <= 1e-10
    assert isinstance(traj["cube.x"], np.ndarray) and traj["cube.x"].shape == (20,)
    assert traj.time[-1] == pytest.approx(0.2)
    assert traj.bodies == ["cube"]
    assert traj.pairs == ["cube-ground"]
    assert "gap" in traj.pair_quantities
    assert set(traj.status) == {"converged"}
    columns = traj.columns()
    assert isinstance(columns, dict) and columns["solver.status"] == traj.status
    assert traj.array().shape == (20, len(traj.names))
    # The cube slides along x and slows down under friction.
    vx = traj["cube.vx"]
    assert np.all(np.diff(vx) <= 1e-12) and vx[0] > vx[-1]
    with pytest.raises(KeyError, match="no column 'cube.speed'"):
        traj["cube.speed"]


def test_threads_solve_the_islands_with_the_same_trajectory():
    stack = os.path.join(ncpkit.scene_directory(), "engine", "stack50.json")
    one = ncpkit.simulate(stack, duration=0.1)
    two = ncpkit.simulate(stack, duration=0.1, threads=2)
    assert one.stats["islands"] == 25 and two.stats["islands"] == 25
    for name in one.names:
        if name != "solver.time_us":
            assert np.array_equal(one[name], two[name], equal_nan=True), name
    with pytest.raises(ValueError, match="threads"):
        ncpkit.simulate(stack, duration=0.1, threads=0)


def test_the_same_numbers_as_the_programs_csv(tmp_path):
    exe = program()
    if exe is None:
        pytest.skip("the ncpkit program is not beside the package")
    out = tmp_path / "traj.csv"
    subprocess.run([exe, "simulate", ncpkit.scene_path("toppling_cube"), "--duration", "0.3",
                    "--out", str(out)], check=True, capture_output=True)
    traj = ncpkit.simulate(ncpkit.scene_path("toppling_cube"), duration=0.3)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(traj)
    for name in traj.names:
        if name.endswith("time_us"):
            continue  # wall clock
        expected = np.array([float(r[name]) if r[name] != "" else np.nan for r in rows])
        assert np.array_equal(expected, traj[name], equal_nan=True), name
    assert [r["solver.status"] for r in rows] == traj.status
    # The statistics by the same names as the program's --json summary.
    summary = subprocess.run([exe, "simulate", ncpkit.scene_path("toppling_cube"), "--duration",
                              "0.3", "--json", "--quiet"], check=True, capture_output=True,
                             text=True)
    written = json.loads(summary.stdout)
    assert list(written) == list(traj.stats)
    for name in ("scene", "solver", "steps", "failed_steps", "max_iterations"):
        assert written[name] == traj.stats[name], name


def test_any_registered_variant_and_the_quasistatic_models():
    traj = ncpkit.simulate(ncpkit.scene_path("sliding_cube"), solver="josephy-newton",
                           duration=0.05)
    assert traj.stats["solver"] == "josephy-newton" and traj.stats["failed_steps"] == 0
    for variant in ("qp-lcp/lemke", "dlc/lemke", "qp-lcp/pgs"):
        traj = ncpkit.simulate(ncpkit.scene_path("gripper_sphere"), solver=variant, duration=0.1)
        assert traj.stats["solver"] == variant
        assert traj.stats["failed_steps"] == 0
        assert traj.pairs == ["ground-sphere", "sphere-left_finger", "sphere-right_finger"]
        assert traj.pair_quantities == ["cn", "cf", "phi", "points"]
        assert np.nanmax(traj["sphere-left_finger.cn"]) > 0.0  # the fingers squeeze


def test_a_scene_from_text_and_its_errors():
    text = open(ncpkit.scene_path("sliding_cube")).read()
    scene = ncpkit.parse_scene(text, "mine.json")
    assert scene.simulate(duration=0.03).stats["steps"] == 3
    with pytest.raises(ncpkit.InputError, match="mine.json"):
        ncpkit.parse_scene(text.replace('"mass"', '"mas"', 1), "mine.json")
    with pytest.raises(ncpkit.InputError, match="cannot open file"):
        ncpkit.load_scene("/nonexistent.json")
    with pytest.raises(ncpkit.InputError):
        scene.simulate(solver="lemke")  # an LCP solver for the implicit stepper's MCP
    with pytest.raises(ncpkit.InputError, match="duration"):
        scene.simulate(duration=-1.0)
    with pytest.raises(ncpkit.InputError):
        scene.simulate(duration=1e9)  # over the step cap: refused before anything runs


MJCF_MODEL = """<mujoco model="drop">
  <option timestep="0.005"/>
  <default><geom friction="0.6 0.005 0.0001" density="500"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="cap" pos="0 0 0.3" euler="0 0 30"><freejoint/>
      <geom type="capsule" fromto="-0.2 0 0 0.2 0 0" size="0.05"/></body>
  </worldbody>
</mujoco>
"""


def test_an_mjcf_model_loads_and_steps(tmp_path):
    path = tmp_path / "drop.xml"
    path.write_text(MJCF_MODEL)
    for scene in (ncpkit.load_scene(path), ncpkit.parse_scene(MJCF_MODEL, "drop.xml")):
        assert scene.name == "drop"
        assert scene.solver == "cone/auto"
        traj = scene.simulate(duration=1.0)
        assert traj.stats["failed_steps"] == 0
        assert abs(traj["cap.z"][-1] - 0.05) < 1e-6  # resting on its side
    path.write_text(MJCF_MODEL.replace("<freejoint/>", '<joint type="hinge"/>'))
    with pytest.raises(ncpkit.InputError, match="drop.xml:6: <joint>: a hinge joint"):
        ncpkit.load_scene(path)


@pytest.mark.parametrize("count", [1, 27, 100, 343, 1000])
def test_generated_piles_start_apart_and_step(tmp_path, count):
    # tools/make_engine_scenes.py --pile N: the cubes are turned, and no two may meet at the
    # start (the loader refuses overlapping bodies) whatever N.
    import sys
    path = tmp_path / ("pile%d.json" % count)
    # Beside this file in the source tree (the tests also run on an installed package).
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                          "make_engine_scenes.py")
    subprocess.run([sys.executable, script, "--pile", str(count), str(path)], check=True)
    scene = ncpkit.load_scene(str(path))
    assert len(scene.bodies) == count + 5  # and the ground and the bin's four walls
    assert scene.simulate(duration=0.01).stats["failed_steps"] == 0


def test_generated_mixed_drops_start_apart_and_step(tmp_path):
    # tools/make_engine_scenes.py --mixed SEED: 27 bodies of five kinds, turned at random, in a bin;
    # the loader refuses bodies that overlap at the start.
    import sys
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                          "make_engine_scenes.py")
    kinds = set()
    for seed in range(1, 6):
        path = tmp_path / ("mixed%d.json" % seed)
        subprocess.run([sys.executable, script, "--mixed", str(seed), str(path)], check=True)
        with open(path) as f:
            data = json.load(f)
        assert len(data["bodies"]) == 27
        kinds |= {b["shape"] for b in data["bodies"]}
        scene = ncpkit.load_scene(str(path))
        assert scene.stepper == "explicit"
        assert len(scene.bodies) == 27 + 5  # and the ground and the bin's four walls
        assert scene.simulate(duration=0.05).stats["failed_steps"] == 0
    assert kinds == {"box", "sphere", "capsule", "cylinder", "ellipsoid"}
    bad = subprocess.run([sys.executable, script, "--mixed", "-1", str(tmp_path / "x.json")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "SEED must be a whole number" in bad.stderr
