"""Plots: the files are written and non-empty, the performance profile's numbers are right,
and the command line works in a fresh interpreter."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ncpkit
from ncpkit import plot


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 5000


def is_svg(path):
    with open(path) as f:
        text = f.read()
    return "<svg" in text and "</svg>" in text and len(text) > 5000


def test_trajectory_and_solver_plots_from_a_run(tmp_path):
    traj = ncpkit.simulate(ncpkit.scene_path("toppling_cube"), duration=0.5)
    assert is_png(plot.plot_trajectory(traj, str(tmp_path / "traj.png")))
    assert is_svg(plot.plot_solver_stats(traj, str(tmp_path / "solver.svg")))


def test_plots_from_a_trajectory_csv_and_a_quasistatic_scene(tmp_path):
    traj = ncpkit.simulate(ncpkit.scene_path("gripper_sphere"), duration=0.2)
    assert is_svg(plot.plot_trajectory(traj, str(tmp_path / "gripper.svg")))
    # A CSV as the program writes it: read back with the same columns.
    csv_path = tmp_path / "t.csv"
    with open(csv_path, "w") as f:
        f.write("t,cube.x,cube.y,cube.z,cube.qw,cube.qx,cube.qy,cube.qz,"
                "cube-ground.pn,cube-ground.n_active,cube-ground.gap,"
                "solver.iterations,solver.residual,solver.time_us,solver.status\n")
        for k in range(1, 30):
            f.write("%g,%g,0,0.5,1,0,0,0,%s,%s,%s,2,1e-12,20,converged\n"
                    % (0.01 * k, 0.01 * k, "0.1" if k > 10 else "", "1" if k > 10 else "",
                       "0" if k > 10 else ""))
    back = plot.read_trajectory_csv(str(csv_path))
    assert back.bodies == ["cube"] and back.pairs == ["cube-ground"]
    assert np.isnan(back["cube-ground.pn"][0]) and back["cube-ground.pn"][-1] == 0.1
    assert is_png(plot.plot_trajectory(back, str(tmp_path / "csv.png")))
    assert is_png(plot.plot_solver_stats(back, str(tmp_path / "csv_solver.png")))


def test_the_performance_profile_numbers():
    # Two problems: A is best on p1 (time 1 vs 2), B on p2 (1 vs 4); C fails p2.
    rows = [("p1", "A", 1.0, True), ("p1", "B", 2.0, True), ("p1", "C", 1.0, True),
            ("p2", "A", 4.0, True), ("p2", "B", 1.0, True), ("p2", "C", 3.0, False)]
    solvers, taus, rho = plot.performance_profile(rows)
    assert solvers == ["A", "B", "C"]
    at = {tau: k for k, tau in enumerate(taus)}
    assert rho["A"][at[1.0]] == 0.5 and rho["A"][at[4.0]] == 1.0
    assert rho["B"][at[1.0]] == 0.5 and rho["B"][at[2.0]] == 1.0
    assert rho["C"][at[1.0]] == 0.5 and rho["C"][-1] == 0.5  # never solves p2
    assert all(np.all(np.diff(rho[s]) >= 0) for s in solvers)


def test_profiles_from_compare_and_benchmark_csvs(tmp_path):
    compare = tmp_path / "compare.csv"
    compare.write_text(
        "scene,solver,steps,failed_steps,median_iterations,max_iterations,median_us,max_us,"
        "max_residual,max_penetration,first_failure\n"
        "cube,fb-newton,10,0,1,2,20,30,1e-12,0,\n"
        "cube,minmap-newton,10,0,1,2,40,50,1e-12,0,\n"
        "cyl,fb-newton,10,0,1,2,100,130,1e-12,0,\n"
        "cyl,minmap-newton,10,2,1,2,50,90,1e-12,0,step 3\n")
    rows = plot.read_results(str(compare))
    assert ("cyl", "minmap-newton", 50.0, False) in rows
    assert is_svg(plot.plot_profile(rows, str(tmp_path / "compare.svg")))
    bench = tmp_path / "bench.csv"
    bench.write_text(
        "2026-01-01T00:00:00+00:00\nRunning ncpkit_bench\n"
        "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,"
        "error_occurred,error_message\n"
        '"Lemke/contact/100",10,5,5,us,,,,,\n"PGS/contact/100",10,2,2,us,,,,,\n'
        '"Lemke/contact/300",10,50,50,us,,,,,\n"PGS/contact/300",10,0,0,us,,,,true,"diverged"\n')
    rows = plot.read_results(str(bench))
    assert ("contact/300", "PGS", float("inf"), False) in rows
    assert ("contact/100", "Lemke", 5.0, True) in rows
    assert is_png(plot.plot_profile(str(bench), str(tmp_path / "bench.png")))


def test_the_command_line_in_a_fresh_interpreter(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    out = tmp_path / "cli.svg"
    run = subprocess.run([sys.executable, "-m", "ncpkit.plot", "trajectory",
                          ncpkit.scene_path("sliding_cube"), "--duration", "0.3", "-o", str(out)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert is_svg(out)
    run = subprocess.run([sys.executable, "-m", "ncpkit.plot", "solver", "/nonexistent.csv",
                          "-o", str(tmp_path / "x.png")], capture_output=True, text=True, env=env)
    assert run.returncode == 2 and "nonexistent" in run.stderr
    run = subprocess.run([sys.executable, "-m", "ncpkit.plot", "profile", "x.csv", "-o", "x.pdf"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 2 and ".png or .svg" in run.stderr
