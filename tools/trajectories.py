#!/usr/bin/python3
"""Records and compares the trajectory CSVs of every bundled scene, so that a change that
should not move any result can be checked to do so.

  tools/trajectories.py record BINARY DIR   # runs `BINARY simulate SCENE --out DIR/NAME.csv`
                                            # for every scenes/*.json with its default solver
  tools/trajectories.py compare OLD NEW [--tol 1e-12]

`compare` matches every CSV of OLD with the one of the same name in NEW: same header, same
number of rows, every numeric cell within tol * max(1, |old|, |new|), every text cell (solver
status) equal. Wall-clock columns (`time_us`) are not compared. It prints the largest
difference per file and exits 1 if any file differs beyond tol (or is missing), 0 otherwise.
"""
import argparse
import csv
import math
import pathlib
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
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("old")
    cmp_.add_argument("new")
    cmp_.add_argument("--tol", type=float, default=1e-12)
    args = parser.parse_args()
    if args.command == "record":
        return record(args.binary, args.dir)
    return compare(args.old, args.new, args.tol)


if __name__ == "__main__":
    sys.exit(main())
