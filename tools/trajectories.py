#!/usr/bin/python3
"""Records and compares the trajectory CSVs of every bundled scene, so that a change that
should not move any result can be checked to do so.

  tools/trajectories.py record BINARY DIR   # runs `BINARY simulate SCENE --out DIR/NAME.csv`
                                            # for every scenes/*.json with its default solver
  tools/trajectories.py record BINARY DIR --explicit
                                            # the explicit stepper: the scenes of
                                            # explicit_scenes() with every variant of
                                            # EXPLICIT_VARIANTS (about 110 runs, 2 minutes)
  tools/trajectories.py compare OLD NEW [--tol 1e-12]

`compare` matches every CSV of OLD with the one of the same name in NEW: same header, same
number of rows, every numeric cell within tol * max(1, |old|, |new|), every text cell (solver
status) equal. Wall-clock columns (`time_us`) are not compared. It prints the largest
difference per file and exits 1 if any file differs beyond tol (or is missing), 0 otherwise.
"""
import argparse
import csv
import json
import math
import pathlib
import random
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
IGNORED_SUFFIXES = ("time_us",)


def record(binary, out_dir):
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for scene in sorted((ROOT / "scenes").glob("*.json")):
        target = out / (scene.stem + ".csv")
        run = subprocess.run([binary, "simulate", str(scene), "--out", str(target)],
                             capture_output=True, text=True)
        (out / (scene.stem + ".log")).write_text(run.stdout + run.stderr)
        print(f"{scene.stem:24s} exit {run.returncode}")
        if run.returncode not in (0, 1):
            status = 1
    return status


EXPLICIT_VARIANTS = [
    "cone/nsgs", "cone/nsgs-shuffled", "cone/nsgs-anderson", "cone/fc-newton", "cone/fc-newton-fb",
    "cone/fc-proximal", "cone/fc-proximal-fb", "cone/nsgs-velocity", "cone/auto", "pyramid/lemke",
    "pyramid/fb-newton", "relaxed/lemke", "relaxed/pgs", "relaxed/fb-newton", "cone/nsgs-cold",
    "pyramid/lemke-cold", "relaxed/pgs-cold"]
ENGINE_VARIANTS = ["cone/auto", "cone/nsgs", "cone/nsgs-velocity", "relaxed/pgs"]


def random_boxes(seed):
    """Six boxes of unequal sizes and masses, turned and offset a little, dropped on a plane with
    restitution 0.3 and two per-pair laws."""
    rng = random.Random(seed)
    bodies = []
    for i in range(6):
        q = [1.0] + [rng.uniform(-0.02, 0.02) for _ in range(2)] + [rng.uniform(-0.05, 0.05)]
        norm = math.sqrt(sum(x * x for x in q))
        bodies.append({"name": f"b{i}", "shape": "box",
                       "size": [rng.uniform(0.3, 0.8) for _ in range(3)],
                       "mass": rng.uniform(0.5, 3.0),
                       "position": [rng.uniform(-0.1, 0.1) + 0.2 * (i % 2),
                                    rng.uniform(-0.1, 0.1), 0.45 + 0.9 * i],
                       "orientation": [x / norm for x in q],
                       "velocity": [rng.uniform(-0.5, 0.5), 0.0, -1.0]})
    return {"name": "random-boxes", "stepper": "explicit", "h": 0.01, "duration": 1.0,
            "contact": {"mu": 0.5, "restitution": 0.3},
            "pairs": [{"bodies": ["ground", "b0"], "mu": 0.2},
                      {"bodies": ["b1", "b2"], "mu": 0.9, "restitution": 0.0}],
            "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]}],
            "bodies": bodies}


def explicit_scenes():
    """(name, scene, variants): explicit copies of the dynamic paper scenes, three boxes, random
    boxes (also with the soft model), and the engine scenes cut short."""
    scenes = []
    for name in ("sliding_cube", "toppling_cube", "rolling_cylinder", "cylinder_manipulation"):
        scene = json.loads((ROOT / "scenes" / f"{name}.json").read_text())
        scene["stepper"] = "explicit"
        scene.pop("solver", None)
        scenes.append((f"x_{name}", scene, EXPLICIT_VARIANTS))
    boxes = json.loads((ROOT / "tests" / "data" / "explicit_boxes.json").read_text())
    scenes.append(("explicit_boxes", boxes, EXPLICIT_VARIANTS))
    scenes.append(("random_boxes", random_boxes(3), EXPLICIT_VARIANTS))
    soft = random_boxes(3)
    soft.update({"name": "random-boxes-soft", "model": "soft", "h": 0.002,
                 "soft": {"stiffness": 20000, "damping": 40}, "contact": {"mu": 0.5},
                 "pairs": [{"bodies": ["ground", "b0"], "mu": 0.2}]})
    scenes.append(("random_boxes_soft", soft, ["soft"]))
    for name, duration in (("stack50", 0.15), ("pile200", 0.05), ("wall100", 0.15)):
        scene = json.loads((ROOT / "scenes" / "engine" / f"{name}.json").read_text())
        scene["duration"] = duration
        scenes.append((f"e_{name}", scene, ENGINE_VARIANTS))
    return scenes


def record_explicit(binary, out_dir):
    out = pathlib.Path(out_dir)
    (out / "scenes").mkdir(parents=True, exist_ok=True)
    status = 0
    for name, scene, variants in explicit_scenes():
        path = out / "scenes" / f"{name}.json"
        path.write_text(json.dumps(scene))
        for variant in variants:
            stem = f"{name}__{variant.replace('/', '_')}"
            run = subprocess.run([binary, "simulate", str(path), "--solver", variant, "--out",
                                  str(out / f"{stem}.csv"), "--quiet"],
                                 capture_output=True, text=True)
            (out / f"{stem}.log").write_text(run.stdout + run.stderr)
            print(f"{stem:44s} exit {run.returncode}")
            if run.returncode not in (0, 1):
                status = 1
    return status


def read(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def compare_file(old_path, new_path, tol):
    """Returns (worst relative difference, where, problems)."""
    old_header, old_rows = read(old_path)
    new_header, new_rows = read(new_path)
    if old_header != new_header:
        return math.inf, "header", ["headers differ"]
    if len(old_rows) != len(new_rows):
        return math.inf, "rows", [f"{len(old_rows)} rows != {len(new_rows)}"]
    worst, where, problems = 0.0, "", []
    for r, (a_row, b_row) in enumerate(zip(old_rows, new_rows)):
        for column, a, b in zip(old_header, a_row, b_row):
            if column.endswith(IGNORED_SUFFIXES) or a == b:
                continue
            x, y = number(a), number(b)
            if x is None or y is None:
                problems.append(f"row {r + 1} {column}: '{a}' != '{b}'")
                worst, where = math.inf, f"row {r + 1} {column}"
                continue
            if math.isnan(x) and math.isnan(y):
                continue
            diff = abs(x - y) / max(1.0, abs(x), abs(y))
            if not diff <= worst:
                worst, where = diff, f"row {r + 1} {column} ({a} vs {b})"
            if not diff <= tol and len(problems) < 5:
                problems.append(f"row {r + 1} {column}: {a} vs {b}")
    return worst, where, problems


def compare(old_dir, new_dir, tol):
    status = 0
    old_files = sorted(pathlib.Path(old_dir).glob("*.csv"))
    if not old_files:
        print(f"no CSV files in {old_dir}")
        return 1
    for old in old_files:
        new = pathlib.Path(new_dir) / old.name
        if not new.exists():
            print(f"{old.stem:24s} MISSING in {new_dir}")
            status = 1
            continue
        worst, where, problems = compare_file(old, new, tol)
        verdict = "ok" if worst <= tol else "DIFFERS"
        print(f"{old.stem:24s} {verdict:8s} largest relative difference {worst:.3g}"
              + (f" at {where}" if where else ""))
        for problem in problems:
            print(f"    {problem}")
        if worst > tol:
            status = 1
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("binary")
    rec.add_argument("dir")
    rec.add_argument("--explicit", action="store_true",
                     help="the explicit stepper's scenes and variants instead")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("old")
    cmp_.add_argument("new")
    cmp_.add_argument("--tol", type=float, default=1e-12)
    args = parser.parse_args()
    if args.command == "record":
        if args.explicit:
            return record_explicit(args.binary, args.dir)
        return record(args.binary, args.dir)
    return compare(args.old, args.new, args.tol)


if __name__ == "__main__":
    sys.exit(main())
