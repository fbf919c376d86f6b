"""The report of a campaign store (docs/campaigns.md "The report"): per-solver tables as
Markdown and CSV, Dolan-More performance profiles of time and iterations, success and cost
against each swept parameter, and one self-contained HTML page with all of them.

A problem of the profiles is a (case, parameters) pair; a solver's figure on it is the median
over its repetitions when every repetition converged, else a failure (infinite ratio, kept in
the count, so a profile ends at the fraction the solver solved).
"""
import base64
import csv
import html
import io
import json
import math
import os
import statistics

from ._campaign_run import STATUSES
from ._campaign_store import Store

# Shifts of the shifted geometric means: sgm(x) = exp(mean(log(x + s))) - s.
TIME_SHIFT = 1e-3  # seconds
ITERATION_SHIFT = 10.0
# The page stays loadable for a campaign of millions of runs: its case table is cut here.
HTML_CASES = 2000


def shifted_geometric_mean(values, shift):
    if not values:
        return float("nan")
    return math.exp(sum(math.log(v + shift) for v in values) / len(values)) - shift


def _problems(rows):
    """{(case, params): {solver: [rows]}}"""
    out = {}
    for r in rows:
        problem = (r["case"], json.dumps(r["params"], sort_keys=True))
        out.setdefault(problem, {}).setdefault(r["solver"], []).append(r)
    return out


def _figure(runs, field):
    """The median of `field` over a solver's repetitions on a problem, or inf unless all
    converged."""
    if not runs or any(r["status"] != "converged" or r[field] is None for r in runs):
        return math.inf
    return statistics.median(float(r[field]) for r in runs)


def performance_profile(rows, field):
    """{solver: sorted log2 ratios (inf for failures)} over the problems every solver ran."""
    problems = _problems(rows)
    solvers = sorted({r["solver"] for r in rows})
    ratios = {s: [] for s in solvers}
    for by_solver in problems.values():
        figures = {s: _figure(by_solver.get(s, []), field) for s in solvers}
        finite = [v for v in figures.values() if math.isfinite(v)]
        best = min(finite) if finite else math.inf
        for s in solvers:
            v = figures[s]
            if not math.isfinite(v) or not math.isfinite(best):
                ratios[s].append(math.inf)
            else:
                ratios[s].append(math.log2(max(v, 1e-300) / max(best, 1e-300)))
    return {s: sorted(v) for s, v in ratios.items()}


def solver_table(rows):
    """One dict a solver: runs, each status's count, medians and shifted geometric means of
    time (s) and iterations over its converged runs."""
    table = []
    for solver in sorted({r["solver"] for r in rows}):
        mine = [r for r in rows if r["solver"] == solver]
        done = [r for r in mine if r["status"] == "converged"]
        seconds = [float(r["seconds"]) for r in done if r["seconds"] is not None]
        iterations = [float(r["iterations"]) for r in done if r["iterations"] is not None]
        entry = {"solver": solver, "runs": len(mine)}
        for status in STATUSES:
            entry[status] = sum(1 for r in mine if r["status"] == status)
        entry["median_seconds"] = statistics.median(seconds) if seconds else float("nan")
        entry["sgm_seconds"] = shifted_geometric_mean(seconds, TIME_SHIFT)
        entry["median_iterations"] = statistics.median(iterations) if iterations else float("nan")
        entry["sgm_iterations"] = shifted_geometric_mean(iterations, ITERATION_SHIFT)
        table.append(entry)
    return table


def _params_text(params):
    return " ".join("%s=%s" % (k, _format(v)) for k, v in sorted(params.items()))


def _median_of(values):
    values = [float(v) for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def _statuses_text(runs):
    counts = {}
    for r in runs:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join("%s %d" % (s, counts[s]) for s in STATUSES if s in counts)


def _scene_columns(entry, runs):
    """A scene's measures: medians over the repetitions that reported them."""
    measured = [r["measures"] for r in runs if r["measures"].get("steps") is not None]
    if not measured:
        entry.update({"failed steps": "—", "median µs a step": float("nan"),
                      "max µs a step": float("nan"), "median contacts": float("nan"),
                      "max penetration (m)": float("nan")})
        return
    steps = int(_median_of(m.get("steps") for m in measured))
    failed = int(_median_of(m.get("failed_steps", 0) for m in measured))
    entry["failed steps"] = "%d of %d" % (failed, steps)
    entry["median µs a step"] = _median_of(m.get("median_us_per_step") for m in measured)
    entry["max µs a step"] = _median_of(m.get("max_us_per_step") for m in measured)
    entry["median contacts"] = _median_of(m.get("median_contacts") for m in measured)
    entry["max penetration (m)"] = _median_of(m.get("max_penetration") for m in measured)


def case_table(rows):
    """One dict a (case, parameters, solver): its runs' statuses and, over the runs that
    finished, the medians of time and iterations (files) or of the scene's measures (scenes:
    failed steps, µs a step, contacts, penetration), which a run that failed steps still has."""
    groups = {}
    for r in rows:
        key = (r["case"], json.dumps(r["params"], sort_keys=True), r["solver"])
        groups.setdefault(key, []).append(r)
    with_params = any(r["params"] for r in rows)
    table = []
    for (case, _, solver), runs in sorted(groups.items()):
        entry = {"case": case}
        if with_params:
            entry["params"] = _params_text(runs[0]["params"])
        entry.update({"solver": solver, "runs": len(runs), "status": _statuses_text(runs)})
        if runs[0]["kind"] == "scene":
            _scene_columns(entry, runs)
        else:
            done = [r for r in runs if r["status"] == "converged"]
            entry["median_seconds"] = _median_of(r["seconds"] for r in done)
            entry["median_iterations"] = _median_of(r["iterations"] for r in done)
            entry["largest residual"] = max((float(r["residual"]) for r in runs
                                             if r["residual"] is not None), default=float("nan"))
        table.append(entry)
    return table


def _same_columns(table):
    """Scene and file rows have different columns: the union, in order, blanks where absent."""
    columns = []
    for entry in table:
        columns += [c for c in entry if c not in columns]
    return [{c: entry.get(c, "") for c in columns} for entry in table]


def swept(rows):
    """{parameter: sorted values} of the parameters with more than one value."""
    values = {}
    for r in rows:
        for k, v in r["params"].items():
            values.setdefault(k, set()).add(v)
    return {k: sorted(v) for k, v in values.items() if len(v) > 1}


def _format(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        # Whole digits rather than an exponent for large counts and microseconds.
        return "%.0f" % v if 1e4 <= abs(v) < 1e12 else "%.4g" % v
    return str(v)


def _short_cases(table):
    """The table with the cases' common folder left out (kept in the CSV)."""
    cases = [entry["case"] for entry in table]
    try:
        prefix = os.path.commonpath(cases) if len(set(cases)) > 1 else os.path.dirname(cases[0])
    except ValueError:  # absolute and relative paths (globs of both kinds): none in common
        prefix = ""
    return [dict(entry, case=os.path.relpath(entry["case"], prefix) if prefix else entry["case"])
            for entry in table]


def _markdown(table):
    columns = list(table[0].keys()) if table else []
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for entry in table:
        lines.append("| " + " | ".join(_format(entry[c]) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def _png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _profile_figure(profile, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    finite = [x for v in profile.values() for x in v if math.isfinite(x)]
    right = max(finite + [1.0]) * 1.05 + 0.05
    for solver, ratios in profile.items():
        n = len(ratios)
        xs, ys = [0.0], [sum(1 for x in ratios if x <= 0.0) / n if n else 0.0]
        for k, x in enumerate(ratios):
            if math.isfinite(x) and x > 0.0:
                xs.append(x)
                ys.append((k + 1) / n)
        xs.append(right)
        ys.append(ys[-1])
        axes.step(xs, ys, where="post", label=solver)
    axes.set_xlabel("log2 tau (ratio to the best solver on the problem)")
    axes.set_ylabel("fraction of problems")
    axes.set_ylim(0, 1.02)
    axes.set_xlim(0, right)
    axes.set_title(title)
    axes.legend(fontsize="small")
    data = _png(figure)
    plt.close(figure)
    return data


def _sweep_figure(rows, parameter, values):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, (success, cost) = plt.subplots(1, 2, figsize=(10, 3.8))
    for solver in sorted({r["solver"] for r in rows}):
        rates, costs = [], []
        for v in values:
            mine = [r for r in rows if r["solver"] == solver and r["params"].get(parameter) == v]
            done = [float(r["seconds"]) for r in mine
                    if r["status"] == "converged" and r["seconds"] is not None]
            rates.append(len(done) / len(mine) if mine else float("nan"))
            costs.append(statistics.median(done) if done else float("nan"))
        success.plot(values, rates, marker="o", label=solver)
        cost.plot(values, costs, marker="o", label=solver)
    for axes, label in ((success, "fraction converged"), (cost, "median time of converged (s)")):
        axes.set_xlabel(parameter)
        axes.set_ylabel(label)
        if all(v > 0 for v in values) and max(values) / min(values) >= 100:
            axes.set_xscale("log")
    cost.set_yscale("log")
    success.set_ylim(0, 1.02)
    success.legend(fontsize="small")
    figure.suptitle("against %s" % parameter)
    data = _png(figure)
    plt.close(figure)
    return data


def write_report(db, folder):
    """Writes the report of the store `db` into `folder`; returns the paths written."""
    from ._campaign_store import StoreError
    store = Store(db, read_only=True)
    try:
        rows, metadata = store.rows(), store.metadata()
    finally:
        store.close()
    if not rows:
        raise StoreError("%s holds no runs" % db)
    os.makedirs(folder, exist_ok=True)
    written = []

    def save(name, data, mode="w"):
        path = os.path.join(folder, name)
        with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""})) as f:
            f.write(data)
        written.append(path)
        return path

    table = solver_table(rows)
    save("solvers.md", _markdown(table))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(table[0].keys()))
    writer.writeheader()
    writer.writerows(table)
    save("solvers.csv", buffer.getvalue())
    cases = _same_columns(case_table(rows))
    save("cases.md", _markdown(_short_cases(cases)))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(cases[0].keys()))
    writer.writeheader()
    writer.writerows(cases)
    save("cases.csv", buffer.getvalue())
    buffer = io.StringIO()
    columns = ["case", "solver", "params", "repetition", "status", "iterations", "residual",
               "seconds", "wall_seconds", "error", "host"]
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for r in rows:
        writer.writerow([json.dumps(r[c], sort_keys=True) if c == "params" else r[c]
                         for c in columns])
    save("runs.csv", buffer.getvalue())
    images = {}
    for field, title in (("seconds", "time"), ("iterations", "iterations")):
        profile = performance_profile(rows, field)
        images["profile_%s.png" % title] = _profile_figure(
            profile, "performance profile of %s (%d problems)" % (
                title, len(next(iter(profile.values())))))
    for parameter, values in swept(rows).items():
        images["sweep_%s.png" % parameter] = _sweep_figure(rows, parameter, values)
    for name, data in images.items():
        save(name, data, "wb")
    save("report.html", _page(rows, metadata, table, cases, images))
    return written


def _html_table(table):
    columns = list(table[0].keys())
    parts = ["<table><tr>" + "".join("<th>%s</th>" % html.escape(c) for c in columns) + "</tr>"]
    for entry in table:
        parts.append("<tr>" + "".join("<td>%s</td>" % html.escape(_format(entry[c]))
                                      for c in columns) + "</tr>")
    return "".join(parts) + "</table>"


def _page(rows, metadata, table, cases, images):
    name = metadata[-1]["campaign"] if metadata else "campaign"
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>%s</title>"
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "th{background:#eee}</style></head><body>" % html.escape(name),
             "<h1>Campaign %s</h1>" % html.escape(name),
             "<p>%d runs. Sessions:</p><ul>" % len(rows)]
    for m in metadata:
        parts.append("<li>%s: ncpkit %s (commit %s) on %s (%s), %s, %s runs submitted</li>" % tuple(
            html.escape(str(m[k])) for k in ("started", "version", "commit", "host", "cpu",
                                             "scheduler", "runs_submitted")))
    parts.append("</ul><h2>Solvers</h2>")
    parts.append(_html_table(table))
    parts.append("<p>Times: the program's own timing of the solve or the scene run; "
                 "medians and shifted geometric means (shift %g s, %g iterations) over converged "
                 "runs.</p>" % (TIME_SHIFT, ITERATION_SHIFT))
    parts.append("<h2>Cases</h2>" + _html_table(cases[:HTML_CASES]))
    if len(cases) > HTML_CASES:
        parts.append("<p>The first %d of %d; cases.csv holds them all.</p>"
                     % (HTML_CASES, len(cases)))
    for image, data in images.items():
        parts.append("<h2>%s</h2><img alt='%s' src='data:image/png;base64,%s'>" % (
            html.escape(image[:-4].replace("_", " ")), html.escape(image),
            base64.b64encode(data).decode()))
    failed = [r for r in rows if r["status"] != "converged"]
    if failed:
        parts.append("<h2>Runs that did not converge</h2><table><tr><th>case</th><th>solver"
                     "</th><th>params</th><th>status</th><th>error</th></tr>")
        for r in failed[:500]:
            parts.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(v)) for v in (
                r["case"], r["solver"], json.dumps(r["params"], sort_keys=True), r["status"],
                r["error"] or "")))
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)
