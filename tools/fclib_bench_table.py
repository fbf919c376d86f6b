#!/usr/bin/python3
"""Turns one run of the FCLib benchmarks (Google Benchmark JSON of
`ncpkit_bench --benchmark_filter='^(FCLib|SiconosFC3D)/' --benchmark_out=fclib.json`) into the
CSV that `python3 -m ncpkit.plot profile` reads and the README's table of the fastest solver of
each side per problem.

  tools/fclib_bench_table.py fclib.json --csv docs/images/fclib_bench.csv

A benchmark that reported an error (not solved to FCLib error 1e-6, or a peer stopped by its
limits) counts as a failure: time inf, solved false.
"""
import argparse
import csv
import json
import math
import sys


def read(path):
    """{problem: {solver: (seconds or inf, fclib_error or None, contacts)}} in run order."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    problems = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        parts = b["name"].split("/")
        side, solver, problem = parts[0], parts[1], parts[2]
        if side == "SiconosFC3D":
            solver = "siconos " + solver
        failed = b.get("error_occurred", False)
        seconds = math.inf if failed else b["real_time"] * scale[b["time_unit"]]
        error = None if failed else b.get("fclib_error")
        problems.setdefault(problem, {})[solver] = (seconds, error, b.get("contacts"))
    return problems


def time_text(seconds):
    if seconds >= 1.0:
        return "%.3g s" % seconds
    if seconds >= 1e-3:
        return "%.3g ms" % (seconds * 1e3)
    return "%.3g µs" % (seconds * 1e6)


def fastest(results, peer):
    """The fastest solved solver of one side, and the names of that side's failures."""
    mine = {s: r for s, r in results.items() if s.startswith("siconos ") == peer}
    solved = {s: r for s, r in mine.items() if math.isfinite(r[0])}
    failed = sorted(s.replace("siconos ", "") for s, r in mine.items() if not math.isfinite(r[0]))
    best = min(solved, key=lambda s: solved[s][0]) if solved else None
    return best, failed


def table_rows(problems):
    rows = []
    for problem, results in problems.items():
        contacts = next((int(r[2]) for r in results.values() if r[2] is not None), 0)
        mine, _ = fastest(results, False)
        theirs, their_failures = fastest(results, True)
        auto = results.get("auto", (math.inf, None, None))[0]
        cells = ["%s (%d)" % (problem, contacts)]
        cells += ["`%s` %s" % (mine, time_text(results[mine][0])), "%.1e" % results[mine][1]]
        if theirs is None:
            cells += ["all fail (%s)" % ", ".join(their_failures), "—", "—"]
        else:
            name = theirs.replace("siconos ", "")
            text = "`%s` %s" % (name, time_text(results[theirs][0]))
            if their_failures:
                text += "; %s fail" % ", ".join(their_failures)
            ratio = results[theirs][0] / results[mine][0]
            cells += [text, "%.1e" % results[theirs][1], "%.2g×" % ratio]
        cells.append(time_text(auto) if math.isfinite(auto) else "fails")
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json")
    parser.add_argument("--csv")
    args = parser.parse_args()
    problems = read(args.json)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["problem", "solver", "time", "solved", "fclib_error"])
            for problem, results in problems.items():
                for solver, (seconds, error, _) in results.items():
                    out.writerow([problem, solver, "%.6g" % seconds if math.isfinite(seconds)
                                  else "inf", "true" if math.isfinite(seconds) else "false",
                                  "" if error is None else "%.3g" % error])
    print("| problem (contacts) | ncpkit's fastest | FCLib error | Siconos' fastest | FCLib error "
          "| Siconos / ncpkit | `auto` |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(table_rows(problems)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
