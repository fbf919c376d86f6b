#!/usr/bin/python3
"""Soak test: every shipped scene run for FACTOR times its duration with its default solver.

Checks, per scene:
  * no NaN or infinite number anywhere in the trajectory;
  * no failed step;
  * energy (implicit scenes: kinetic + gravitational potential, the CSV's `energy` column) never
    rises, between scripted impulses, by more than the scene's stated tolerance (ENERGY_RISE);
  * flat memory: the peak RSS of a run without --out (its --json peak_rss_kb) grows by less
    than 512 kB from a run a tenth as long, or as long as the scene if that is longer (the
    shorter run must pass through every phase of the scene: a scene's problems may grow later
    in it, and the solvers keep workspaces sized to the largest one so far); a growth above
    that is measured up to twice more and the smallest peaks compared (RSS_GROWTH_KB); these
    runs are made without address-space randomisation where the machine allows it (NO_ASLR);
  * flat cost: the median us per step of the last quarter is at most 2x that of the second
    quarter plus 20 us (the machines are shared and noisy).
Usage: tools/soak.py [--factor 100] [--ncpkit build/apps/ncpkit] [SCENE.json ...]
Exit status 0 if every check holds, 1 otherwise.
"""
import argparse
import csv
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Largest energy rise (J) between scripted impulses, per implicit scene. The scheme is first
# order: while a body pivots on a vertex or an edge, the energy of the discrete solution drifts
# by O(h) (measured on the toppling cube's vertex phase: 6.8e-3 J at h = 0.01 s, 3.5e-3 at
# 0.005, 1.8e-3 at 0.0025, 8.9e-4 at 0.00125; cylinder_manipulation 0.60, 0.30, 0.15 J at
# 0.01, 0.005, 0.0025 s) and the next impact dissipates it. These bounds are twice the rise
# measured at the scene's own h. quasi_rigid_drop's layer stores elastic energy that the
# column does not count, so its energy is not checked.
# Failed steps expected in a long run, by scene, with the reason; reported, not counted.
EXPECTED_FAILED_STEPS = {
    "fence_particle.json":
        "dqc/fb-newton (Trinkle, Berard & Pang's (2005) model, as the paper) fails 11 steps in 10^5 from t = 20.42 s "
        "(natural residual 6.9e-8): the fence grazes the particle at the end of its swing and "
        "the step's solution has the particle slide 1e-7 m under a 4.4 N fence force; Newton "
        "stalls from the warm, the cold and the DLC start (5 of 40 random starts converge) "
        "because the wall contact, 0.1 m away but in the problem (the paper's threshold), has "
        "friction rows c sigma = -mu c_n g that vanish at c_n = 0: the Newton matrix is "
        "singular there. Not a matter of coordinates: it fails the same with the fence held at "
        "y = 0. dlc/lemke and qp/lemke solve every step of the long run.",
}

ENERGY_RISE = {
    "sliding_cube.json": 1e-9,
    "rolling_cylinder.json": 1e-9,
    "toppling_cube.json": 1.4e-2,
    "cylinder_manipulation.json": 1.2,
}


def duration_of(scene_path):
    with open(scene_path) as f:
        return float(json.load(f)["duration"])


# The peak RSS of one binary, scene and duration moves from run to run: up to 0.48 MB apart
# over five runs of the rolling cylinder for 10 s and for 20 s, and the cube stacking's 9 s runs
# from 22588 to 23084 kB over eight (measured). That spread is the address-space randomisation:
# without it the same runs give one figure each (cube stacking: 22668 kB for 9 s, 23020 kB for
# 18 s, eight runs each, with the default two threads or with one). So the memory runs are made
# without it where the machine allows (`setarch -R`), and a growth above the allowance is still
# measured twice more with each duration's smallest peak counting: a leak grows in every run.
RSS_GROWTH_KB = 512


def no_aslr_prefix():
    """["setarch", "-R"] if this machine runs a program so (its personality call may be
    refused in a container), else []."""
    try:
        ok = subprocess.run(["setarch", "-R", "true"], capture_output=True).returncode == 0
    except OSError:
        ok = False
    return ["setarch", "-R"] if ok else []


NO_ASLR = None


def peak_rss_pair(ncpkit, scene, short, duration):
    """Peak RSS (kB) of a run of `short` and of `duration` seconds (see RSS_GROWTH_KB)."""
    global NO_ASLR
    if NO_ASLR is None:
        NO_ASLR = no_aslr_prefix()
        if not NO_ASLR:
            print("memory runs with address-space randomisation (setarch -R refused)")
    rss_short = run(ncpkit, scene, short, prefix=NO_ASLR)[2]
    rss_long = run(ncpkit, scene, duration, prefix=NO_ASLR)[2]
    for _ in range(2):
        if rss_long <= rss_short + RSS_GROWTH_KB:
            break
        rss_short = min(rss_short, run(ncpkit, scene, short, prefix=NO_ASLR)[2])
        rss_long = min(rss_long, run(ncpkit, scene, duration, prefix=NO_ASLR)[2])
    return rss_short, rss_long


def run(ncpkit, scene, duration, out=None, prefix=()):
    """Runs simulate (after `prefix`, a command that runs it); returns (exit status, stderr,
    peak RSS of the run in kB, from its --json)."""
    args = [*prefix, ncpkit, "simulate", scene, "--duration", repr(duration), "--max-steps", "100000000",
            "--json"]
    if out:
        args += ["--out", out]
    proc = subprocess.run(args, capture_output=True, text=True)
    rss = 0
    if proc.stdout.strip():
        rss = json.loads(proc.stdout).get("peak_rss_kb") or 0
    return proc.returncode, proc.stderr, rss


def check_trajectory(name, path, failures):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        failures.append(f"{name}: empty trajectory")
        return
    bad = 0
    for row in rows:
        for key, value in row.items():
            if value in ("", None) or key == "solver.status":
                continue
            if not math.isfinite(float(value)):
                bad += 1
                if bad == 1:
                    failures.append(f"{name}: non-finite {key} = {value} at t = {row['t']}")
    failed = [r for r in rows if r["solver.status"] != "converged"]
    if failed:
        what = (f"{name}: {len(failed)} failed steps of {len(rows)}, first at t = "
                f"{failed[0]['t']} (residual {failed[0]['solver.residual']})")
        if name in EXPECTED_FAILED_STEPS:
            print(f"  expected failure: {what}: {EXPECTED_FAILED_STEPS[name]}")
        else:
            failures.append(what)
    if "energy" in rows[0] and name in ENERGY_RISE:
        energy = [float(r["energy"]) for r in rows]
        lowest, rise, where = energy[0], 0.0, rows[0]["t"]
        for k in range(1, len(rows)):
            if rows[k]["impulse"] == "1":
                lowest = energy[k]
                continue
            lowest = min(lowest, energy[k - 1])
            if energy[k] - lowest > rise:
                rise, where = energy[k] - lowest, rows[k]["t"]
        status = "ok" if rise <= ENERGY_RISE[name] else "TOO LARGE"
        print(f"  energy: largest rise between impulses {rise:.3e} J at t = {where} "
              f"(tolerance {ENERGY_RISE[name]:.1e}) {status}")
        if rise > ENERGY_RISE[name]:
            failures.append(f"{name}: energy rose by {rise:.3e} J at t = {where}")
    us = [float(r["solver.time_us"]) for r in rows]
    quarter = max(1, len(us) // 4)
    early = statistics.median(us[quarter:2 * quarter])
    late = statistics.median(us[-quarter:])
    print(f"  cost: median {early:.1f} us/step in the second quarter, {late:.1f} in the last")
    if late > 2.0 * early + 20.0:
        failures.append(f"{name}: cost grew from {early:.1f} to {late:.1f} us per step")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--factor", type=float, default=100.0)
    parser.add_argument("--ncpkit", default=os.path.join(ROOT, "build/apps/ncpkit"))
    parser.add_argument("scenes", nargs="*")
    options = parser.parse_args()
    scenes = options.scenes or sorted(glob.glob(os.path.join(ROOT, "scenes/*.json")))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene in scenes:
            name = os.path.basename(scene)
            duration = options.factor * duration_of(scene)
            print(f"{name}: {duration:g} s ({options.factor:g}x)", flush=True)
            csv_path = os.path.join(tmp, "trajectory.csv")
            status, err, _ = run(options.ncpkit, scene, duration, csv_path)
            if status not in (0, 1):
                failures.append(f"{name}: exit status {status}: {err.strip()}")
                continue
            check_trajectory(name, csv_path, failures)
            short = max(duration / 10, duration_of(scene))
            rss_short, rss_long = peak_rss_pair(options.ncpkit, scene, short, duration)
            print(f"  memory: peak RSS {rss_short} kB at {short:g} s, {rss_long} kB at "
                  f"{duration:g} s")
            if rss_long > rss_short + RSS_GROWTH_KB:
                failures.append(f"{name}: peak RSS grew from {rss_short} to {rss_long} kB")
    print()
    for failure in failures:
        print("SOAK FAILURE: " + failure)
    print(f"soak: {len(scenes)} scenes, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
