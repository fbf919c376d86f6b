"""Plots of ncpkit runs, as PNG or SVG files (matplotlib, Agg: no display needed).

    python3 -m ncpkit.plot trajectory TRAJ.csv|SCENE.json -o traj.png [--solver V] [--duration T]
    python3 -m ncpkit.plot solver TRAJ.csv|SCENE.json -o stats.svg
    python3 -m ncpkit.plot profile RESULTS.csv -o profile.svg [--metric median_us]

trajectory: per moving body its position over time, per contact pair its normal impulse (or
force), its contact kind (implicit scenes: active multipliers, 3 vertex / 2 edge / 1 face;
quasistatic: contact points) and its gap. solver: iterations, natural residual and µs per
step. profile: the Dolan-More performance profile of the solvers of a `ncpkit compare --csv`
table, of Google Benchmark CSV output (`--benchmark_format=csv`, solver = the name's first
part), or of any CSV with columns problem, solver, time (and optionally solved).
The same functions are importable: plot_trajectory, plot_solver_stats, plot_profile,
performance_profile.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["read_trajectory_csv", "plot_trajectory", "plot_solver_stats", "performance_profile",
           "read_results", "plot_profile", "main"]


class CsvTrajectory:
    """A trajectory CSV read back: the same interface as ncpkit.Trajectory for plotting."""

    def __init__(self, path):
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            rows = list(reader)
        self.names = [h for h in header if h != "solver.status"]
        index = {h: i for i, h in enumerate(header)}
        self._columns = {
            h: np.array([float(r[index[h]]) if r[index[h]] != "" else np.nan for r in rows])
            for h in self.names}
        self.status = [r[index["solver.status"]] for r in rows] if "solver.status" in index else []
        self.bodies = [h[:-3] for h in header if h.endswith(".qw")]
        quantity = "gap" if any(h.endswith(".gap") for h in header) else "phi"
        self.pairs = [h[:-len(quantity) - 1] for h in header if h.endswith("." + quantity)]
        self.stats = {"scene": os.path.splitext(os.path.basename(path))[0]}

    def __getitem__(self, name):
        return self._columns[name]

    def __contains__(self, name):
        return name in self._columns

    @property
    def time(self):
        return self._columns["t"]


def read_trajectory_csv(path):
    """A trajectory CSV (`ncpkit simulate --out`) as an object with the columns by name."""
    return CsvTrajectory(path)


def _trajectory(source, solver=None, duration=None):
    if not isinstance(source, str):
        return source
    if source.endswith(".json"):
        import ncpkit
        return ncpkit.simulate(source, solver=solver, duration=duration)
    return read_trajectory_csv(source)


def _pair_series(traj, pair, *names):
    for name in names:
        if pair + "." + name in traj:
            return name, traj[pair + "." + name]
    return None, None


def plot_trajectory(traj, out, title=None):
    """Positions, contact impulses, contact kind and gap over time, into `out` (.png or .svg)."""
    traj = _trajectory(traj)
    t = traj.time
    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    for body in traj.bodies:
        for axis, style in zip("xyz", ("-", "--", ":")):
            axes[0].plot(t, traj[body + "." + axis], style, label="%s.%s" % (body, axis))
    axes[0].set_ylabel("position (m)")
    labels = {"pn": "normal impulse (N s)", "cn": "normal force (N)",
              "n_active": "contact kind N", "points": "contact points",
              "gap": "gap (m)", "phi": "gap (m)"}
    for row, names in ((1, ("pn", "cn")), (2, ("n_active", "points")), (3, ("gap", "phi"))):
        ylabel = None
        for pair in traj.pairs:
            name, values = _pair_series(traj, pair, *names)
            if name is None:
                continue
            ylabel = labels[name]
            axes[row].plot(t, values, drawstyle="steps-post" if row == 2 else "default",
                           label=pair)
        axes[row].set_ylabel(ylabel or labels[names[0]])
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", loc="best")
    axes[-1].set_xlabel("t (s)")
    fig.suptitle(title or traj.stats.get("scene", ""))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_solver_stats(traj, out, title=None):
    """Iterations, natural residual and µs per step over time, into `out`."""
    traj = _trajectory(traj)
    t = traj.time
    fig, axes = plt.subplots(3, 1, figsize=(8, 6.5), sharex=True)
    axes[0].plot(t, traj["solver.iterations"], drawstyle="steps-post")
    axes[0].set_ylabel("iterations")
    residual = np.where(traj["solver.residual"] > 0, traj["solver.residual"], np.nan)
    axes[1].semilogy(t, residual, ".", markersize=3)
    axes[1].set_ylabel("natural residual")
    axes[2].semilogy(t, traj["solver.time_us"], ".", markersize=3)
    axes[2].set_ylabel("µs per step")
    failed = [i for i, s in enumerate(traj.status) if s != "converged"]
    if failed:
        axes[1].plot(t[failed], residual[failed], "rx", label="%d failed" % len(failed))
        axes[1].legend(fontsize="small")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("t (s)")
    fig.suptitle(title or "solver per step: %s" % traj.stats.get("scene", ""))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def read_results(path, metric=None):
    """(problem, solver, cost, solved) rows from a compare CSV, a Google Benchmark CSV or a CSV
    with columns problem, solver, time[, solved]. An unsolved run has cost inf."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    # Google Benchmark prints its context before the CSV header when asked for CSV on stdout.
    start = next((i for i, line in enumerate(lines) if line.startswith(("name,", "scene,",
                                                                          "problem,"))), 0)
    rows = list(csv.DictReader(lines[start:]))
    results = []
    for r in rows:
        if "scene" in r:  # ncpkit compare --csv
            cost = float(r[metric or "median_us"])
            solved = int(r["failed_steps"]) == 0
            results.append((r["scene"], r["solver"], cost, solved))
        elif "name" in r:  # Google Benchmark
            parts = r["name"].split("/")
            solver = parts[0][3:] if parts[0].startswith("BM_") else parts[0]
            problem = "/".join(parts[1:]) or parts[0]
            solved = r.get("error_occurred", "") not in ("true", "1")
            cost = float(r[metric or "real_time"]) if solved and r.get(metric or "real_time") \
                else math.inf
            results.append((problem, solver, cost, solved))
        else:
            solved = r.get("solved", "true").lower() in ("true", "1", "yes", "converged")
            results.append((r["problem"], r["solver"], float(r[metric or "time"]), solved))
    if not results:
        raise ValueError("%s: no rows (expected a compare, Google Benchmark or "
                         "problem,solver,time CSV)" % path)
    return results


def performance_profile(results):
    """Dolan and More's performance profile. results: (problem, solver, cost, solved) rows.
    Returns (solvers, taus, rho): rho[s][k] is the fraction of problems that solver s solves
    within a factor taus[k] of the best solver on that problem."""
    problems = sorted({r[0] for r in results})
    solvers = sorted({r[1] for r in results})
    cost = {(p, s): math.inf for p in problems for s in solvers}
    for problem, solver, value, solved in results:
        cost[(problem, solver)] = value if solved and value > 0 else math.inf
    ratios = {s: [] for s in solvers}
    for p in problems:
        best = min(cost[(p, s)] for s in solvers)
        for s in solvers:
            ratios[s].append(cost[(p, s)] / best if math.isfinite(best) else math.inf)
    finite = [r for s in solvers for r in ratios[s] if math.isfinite(r)]
    top = max(finite) if finite else 1.0
    taus = np.unique(np.concatenate([[1.0], np.array(finite), [max(2.0, top * 1.1)]]))
    rho = {s: np.array([np.mean([r <= tau for r in ratios[s]]) for tau in taus])
           for s in solvers}
    return solvers, taus, rho


def plot_profile(results, out, title=None):
    """The performance profile of `results` (rows or a CSV path) into `out`."""
    if isinstance(results, str):
        results = read_results(results)
    solvers, taus, rho = performance_profile(results)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in solvers:
        ax.step(taus, rho[s], where="post", label=s)
    ax.set_xscale("log", base=2)
    ax.set_xlim(1.0, taus[-1])
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("τ (within a factor τ of the best solver)")
    ax.set_ylabel("fraction of problems")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    ax.set_title(title or "performance profile (%d problems)" % len({r[0] for r in results}))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ncpkit.plot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=("trajectory", "solver", "profile"))
    parser.add_argument("input", help="trajectory CSV or scene JSON; results CSV for profile")
    parser.add_argument("-o", "--out", required=True, help="output file, .png or .svg")
    parser.add_argument("--solver", help="variant for a scene JSON input")
    parser.add_argument("--duration", type=float, help="seconds, for a scene JSON input")
    parser.add_argument("--metric", help="profile: cost column (median_us, real_time, time)")
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    if not args.out.endswith((".png", ".svg")):
        parser.error("the output must be a .png or .svg file")
    try:
        if args.kind == "profile":
            plot_profile(read_results(args.input, args.metric), args.out, args.title)
        else:
            traj = _trajectory(args.input, args.solver, args.duration)
            (plot_trajectory if args.kind == "trajectory" else plot_solver_stats)(
                traj, args.out, args.title)
    except (OSError, ValueError, KeyError) as e:
        print("ncpkit.plot: %s" % e, file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
