#!/usr/bin/python3
"""Draws the sphere drop's scaling (docs/benchmarks.md, "Scaling: spheres dropped in a box") from
a Google Benchmark JSON file of BM_SphereDrop: the mean time a step and the cost per contact
against the number of spheres, on log-log axes, as an SVG. With repetitions, their medians.

Usage: build/bench/ncpkit_bench --benchmark_filter='BM_SphereDrop/' --benchmark_min_time=0.01 \\
         --benchmark_repetitions=3 --benchmark_out=drop.json --benchmark_out_format=json
       /usr/bin/python3 tools/plot_scaling.py drop.json docs/scaling.svg
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def size(benchmark):
    """N of BM_SphereDrop/N (or BM_SphereDrop/N_median)."""
    return int(benchmark["name"].split("/")[1].split("_")[0])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1]) as f:
            found = [b for b in json.load(f)["benchmarks"]
                     if b["name"].startswith("BM_SphereDrop/")]
        medians = [b for b in found if b.get("aggregate_name") == "median"]
        runs = medians if medians else [b for b in found if b.get("run_type") != "aggregate"]
        runs.sort(key=size)
        n = [size(b) for b in runs]
        step_ms = [b["mean_us/step"] / 1000.0 for b in runs]
        per_contact = [b["us/contact"] for b in runs]
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        sys.exit("plot_scaling: %s is not a benchmark JSON file of BM_SphereDrop (%s: %s)"
                 % (sys.argv[1], type(e).__name__, e))
    if not runs:
        sys.exit("plot_scaling: no BM_SphereDrop runs in " + sys.argv[1])
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.loglog(n, step_ms, "o-")
    left.set_xlabel("spheres")
    left.set_ylabel("mean time a step (ms)")
    left.grid(True, which="both", alpha=0.3)
    right.semilogx(n, per_contact, "o-")
    right.set_xlabel("spheres")
    right.set_ylabel("time per contact (µs)")
    right.set_ylim(bottom=0)
    right.grid(True, which="both", alpha=0.3)
    fig.suptitle("Spheres dropped in a box: explicit stepper, cone/nsgs-velocity, 20 sweeps a step")
    fig.tight_layout()
    fig.savefig(sys.argv[2], format="svg", metadata={"Date": None})


if __name__ == "__main__":
    main()
