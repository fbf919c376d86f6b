#!/usr/bin/python3
"""Compares two builds of the benchmark program on the benchmarks both have, alternating
them on one machine in one run (old, new, old, new, ...) so that both see the same load.

  tools/bench_compare.py OLD_BENCH NEW_BENCH [--filter REGEX] [--repetitions 3]
                         [--min-time 0.2] [--statistic median|min] [--json OUT]
  tools/bench_compare.py OLD_BENCH NEW_BENCH --instructions [--filter REGEX] [--jobs 2]
  tools/bench_compare.py --scenes OLD_NCPKIT NEW_NCPKIT [--repetitions 5] [--variants all]

Prints per benchmark the median time per iteration of each binary and the ratio new / old
(below 1: the new one is faster), then the geometric mean of the ratios and the worst one.
On a shared host other work only ever adds time: --statistic min compares the fastest of the
repetitions, which with enough of them is the least disturbed figure of each binary.
With --instructions each benchmark runs one iteration under valgrind's callgrind in each
binary and the instructions executed inside the benchmark's timed loop are compared: a count
that other work on the host does not move (nor code placement, which moves times at equal
counts), so that small differences are real; the runs go --jobs at a time.
With --scenes the two `ncpkit` programs run every bundled scene whole (`simulate`, its own
solver, or with --variants all every default variant of its stepper), alternately, and the
wall time of each run is compared; each scene runs for its duration times a whole factor that
makes the old program take about --target-seconds (default 1.5), so that starting the
program does not weigh.
"""
import argparse
import concurrent.futures
import json
import math
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time


def names(binary, pattern):
    out = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True,
                         check=True, env={"OPENBLAS_NUM_THREADS": "1"}).stdout
    return [n for n in out.split() if re.search(pattern, n)]


def escape(name):
    """The name as a regex that the benchmark library's regex engine reads as itself."""
    return "".join("\\" + c if c in ".+*?()[]{}|^$\\" else c for c in name)


def run_once(binary, name, min_time):
    out = subprocess.run(
        [binary, "--benchmark_filter=^" + escape(name) + "$",
         "--benchmark_min_time=" + str(min_time), "--benchmark_format=json"],
        capture_output=True, text=True, env={"OPENBLAS_NUM_THREADS": "1"})
    if out.returncode != 0:
        return None
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("error_occurred"):
            return None
        if b["name"] == name:
            return b["real_time"], b["time_unit"]
    return None


def count_once(binary, name):
    """Instructions executed in one iteration of the benchmark's timed loop (callgrind dumps
    its counts when the loop starts and again when it ends), or None if the benchmark fails."""
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=no",
             "--callgrind-out-file=" + work + "/cg",
             "--dump-after=benchmark::State::StartKeepRunning()",
             "--dump-before=benchmark::State::FinishKeepRunning()",
             binary, "--benchmark_filter=^" + escape(name) + "$",
             "--benchmark_min_time=1e-9", "--benchmark_format=json"],
            capture_output=True, text=True, env={"OPENBLAS_NUM_THREADS": "1"})
        if out.returncode != 0:
            return None
        reported = json.loads(out.stdout)["benchmarks"]
        if not reported or any(b.get("error_occurred") for b in reported):
            return None
        for dump in pathlib.Path(work).glob("cg.*"):
            text = dump.read_text()
            if "Trigger: --dump-before=benchmark::State::FinishKeepRunning" in text:
                return int(re.search(r"^totals: (\d+)", text, re.M).group(1))
    return None


def compare_instructions(args, common):
    def both(name):
        return name, count_once(args.old, name), count_once(args.new, name)

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, old, new in pool.map(both, common):
            if old is None or new is None:
                print(f"{name:60s} skipped (an error in one of the binaries)", flush=True)
                continue
            rows.append({"name": name, "old": old, "new": new, "unit": "instructions",
                         "ratio": new / old})
            print(f"{name:60s} old {old:13,d}  new {new:13,d} instructions  "
                  f"new/old {new / old:5.3f}", flush=True)
    return rows


SCENE_VARIANTS = {
    True: ["fb-newton", "fb-newton-dense", "penalized-fb", "minmap-newton", "fb-newton-cold"],
    False: ["dqc/fb-newton", "dlc/lemke", "dlc/fb-newton", "qp/lemke", "qp/fb-newton",
            "qp-lcp/lemke", "qp-lcp/pgs", "qp-lcp/fb-newton"],
}


def time_scene(binary, scene, variant, duration=None):
    command = [binary, "simulate", scene] + (["--solver", variant] if variant else [])
    if duration is not None:
        command += ["--duration", repr(duration)]
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True,
                         env={"OPENBLAS_NUM_THREADS": "1"})
    elapsed = time.perf_counter() - start
    return elapsed if run.returncode in (0, 1) else None


def compare_scenes(args):
    root = pathlib.Path(__file__).resolve().parent.parent
    rows = []
    for scene in sorted((root / "scenes").glob("*.json")):
        if not re.search(args.only, scene.stem):
            continue
        implicit = '"quasistatic"' not in scene.read_text()
        variants = SCENE_VARIANTS[implicit] if args.variants == "all" else [""]
        duration = json.loads(scene.read_text())["duration"]
        for variant in variants:
            # Long enough runs that starting the program does not matter: the scene's duration
            # times a whole factor that makes the old program run about --target-seconds.
            first = time_scene(args.old, str(scene), variant)
            factor = max(1, round(args.target_seconds / first)) if first else 1
            times = {"old": [], "new": []}
            for _ in range(args.repetitions):
                for which, binary in (("old", args.old), ("new", args.new)):
                    t = time_scene(binary, str(scene), variant, duration * factor)
                    if t is not None:
                        times[which].append(t)
            label = scene.stem + ("/" + variant if variant else "") + f" x{factor}"
            if not times["old"] or not times["new"]:
                print(f"{label:45s} skipped (the scene does not run with this variant)")
                continue
            old, new = statistics.median(times["old"]), statistics.median(times["new"])
            rows.append({"name": label, "old": old, "new": new, "unit": "s", "ratio": new / old})
            print(f"{label:45s} old {old:8.3f} s  new {new:8.3f} s  new/old {new / old:5.3f}",
                  flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--filter", default="^BM_(PaperScene|Quasistatic|BoxesSideBySide|BoxTower)")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--statistic", choices=("median", "min"), default="median")
    parser.add_argument("--json")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="--instructions: runs at a time")
    parser.add_argument("--scenes", action="store_true")
    parser.add_argument("--variants", default="own")
    parser.add_argument("--target-seconds", type=float, default=1.5)
    parser.add_argument("--only", default="", help="--scenes: scenes whose name matches")
    args = parser.parse_args()
    if args.scenes:
        return report(compare_scenes(args), args)
    common = [n for n in names(args.new, args.filter) if n in set(names(args.old, args.filter))]
    if args.instructions:
        return report(compare_instructions(args, common), args)
    rows = []
    for name in common:
        times = {"old": [], "new": []}
        unit = ""
        for _ in range(args.repetitions):
            for which, binary in (("old", args.old), ("new", args.new)):
                result = run_once(binary, name, args.min_time)
                if result is not None:
                    times[which].append(result[0])
                    unit = result[1]
        if not times["old"] or not times["new"]:
            print(f"{name:60s} skipped (an error in one of the binaries)")
            continue
        pick = min if args.statistic == "min" else statistics.median
        old, new = pick(times["old"]), pick(times["new"])
        rows.append({"name": name, "old": old, "new": new, "unit": unit, "ratio": new / old})
        print(f"{name:60s} old {old:10.2f} {unit}  new {new:10.2f} {unit}  new/old {new / old:5.3f}",
              flush=True)
    return report(rows, args)


def report(rows, args):
    if rows:
        geo = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
        worst = max(rows, key=lambda r: r["ratio"])
        print(f"geometric mean of new/old over {len(rows)} benchmarks: {geo:.3f}; "
              f"worst {worst['ratio']:.3f} ({worst['name']})")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
