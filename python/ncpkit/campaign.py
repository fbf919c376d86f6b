"""Campaigns: every case of a campaign file x its solvers x a parameter grid x repetitions, each
run in its own process with its limits, kept in SQLite and resumable (docs/campaigns.md).

    ncpkit campaign run FILE --db results.sqlite [--workers N] [--scheduler tcp://HOST:PORT]
                        [--rerun crash,timeout] [--mix] [--quiet] [--dry-run]
    python3 -m ncpkit.campaign run ...              (the same)

From Python::

    from ncpkit import campaign
    c = campaign.load("friction.toml")
    counts = campaign.run(c, "results.sqlite", workers=2)   # or scheduler="tcp://host:8786"
    campaign.plan(c, "results.sqlite")                     # what run would submit, run nothing

Exit status: 0 when every run of the campaign is stored (whatever its status), 1 when some run
could not be stored (a lost Dask task), 2 for a campaign file or store that cannot be used,
130 when interrupted (the runs stored so far stay; the next start runs only the others).
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import signal
import subprocess
import sys
import time

from ._campaign_run import GRACE_SECONDS, STATUSES, default_program, execute, kill_all
from ._campaign_spec import CampaignError, load
from ._campaign_store import Store, StoreError, cpu_model

__all__ = ["CampaignError", "StoreError", "STATUSES", "load", "plan", "run", "main"]


def program_version(program):
    """{"version", "commit"} of the ncpkit program."""
    try:
        out = subprocess.run([program, "version", "--json"], capture_output=True, timeout=60,
                             check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        raise CampaignError("the ncpkit program %s does not answer `version --json` (%s); "
                            "NCPKIT_PROGRAM names it" % (program, e)) from None


class Progress:
    """Runs done, failed and left, and the time left, on one line at most every second."""

    def __init__(self, total, stream):
        self.total, self.stream = total, stream
        self.done = self.failed = 0
        self.start = self.last = time.monotonic()

    def add(self, row):
        self.done += 1
        if row["status"] != "converged":
            self.failed += 1
        now = time.monotonic()
        if self.stream is not None and (now - self.last >= 1.0 or self.done == self.total):
            self.last = now
            left = self.total - self.done
            eta = (now - self.start) / self.done * left
            self.stream.write("  %d/%d done, %d not converged, %d left, about %s left\n"
                              % (self.done, self.total, self.failed, left, _duration(eta)))
            self.stream.flush()


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds >= 3600:
        return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60)
    return "%dm%02ds" % (seconds // 60, seconds % 60) if seconds >= 60 else "%ds" % seconds


def _local_results(todo, program, workers):
    """Rows of the runs, as they finish, `workers` at a time (each its own process); a few more
    than that are queued at any time, so that a campaign of millions of runs holds no more."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    runs = iter(todo)
    try:
        pending = {pool.submit(execute, r, program) for r in itertools.islice(runs, 2 * workers)}
        while pending:
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                yield future.result()
                following = next(runs, None)
                if following is not None:
                    pending.add(pool.submit(execute, following, program))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        kill_all()


def _dask_results(todo, scheduler, program, session, lost):
    """Rows of the runs from a Dask cluster (an address, or a Cluster object); a task the
    cluster loses (its workers died too often) is counted in `lost` and stays missing."""
    from distributed import Client, as_completed
    client = Client(scheduler)

    def submit(run):
        return client.submit(execute, run, program, pure=False,
                             key="ncpkit-run-%s-%s" % (session, run["key"]))

    # A bounded number of tasks in flight (four a worker thread, at least 256), topped up as
    # they finish: the scheduler holds that many, not the whole campaign.
    runs = iter(todo)
    in_flight = max(256, 4 * sum(client.nthreads().values()))
    try:
        finished = as_completed([submit(r) for r in itertools.islice(runs, in_flight)])
        for future in finished:
            try:
                yield future.result()
            except Exception as e:  # noqa: BLE001 -- the cluster's, not the run's: kept missing
                lost.append("%s: %s" % (future.key, e))
            following = next(runs, None)
            if following is not None:
                finished.add(submit(following))
    finally:
        client.close()


def _check_rerun(rerun):
    unknown = [s for s in rerun if s not in STATUSES]
    if unknown:
        raise CampaignError("--rerun: unknown status %s (expected some of %s)"
                            % (", ".join(unknown), ", ".join(STATUSES)))


def _settings(version):
    return {"version": version["version"], "commit": version["commit"], "cpu": cpu_model()}


def _to_run(runs, stored, rerun):
    """The runs not stored, and those stored with a status in `rerun`."""
    return [r for r in runs if r["key"] not in stored or stored[r["key"]] in rerun]


def _workers(workers, campaign):
    return workers or campaign.limits["workers"] or os.cpu_count() or 1


def _notes(campaign):
    notes = ["note: %s" % note for note in campaign.notes]
    skipped = campaign.skipped_pairs()
    if skipped:
        notes.append("note: %d (case, solver) pairs left out: the case does not take the "
                     "solver" % skipped)
    return notes


def run(campaign, db, workers=None, scheduler=None, rerun=(), mix=False, program=None,
        progress=sys.stderr):
    """Runs the campaign's missing runs (and those whose status is in `rerun`) into the store
    `db`; returns {"runs", "stored_before", "submitted", "statuses": {status: count}, "lost"}."""
    program = program or default_program()
    _check_rerun(rerun)
    version = program_version(program)
    store = Store(db)
    try:
        store.check_settings(_settings(version), campaign.name, mix)
        runs = campaign.runs()
        todo = _to_run(runs, store.statuses(), rerun)
        workers = _workers(workers, campaign)
        store.begin({"campaign": campaign.name, "campaign_file": campaign.path,
                     "campaign_sha256": campaign.sha256, "version": version["version"],
                     "commit": version["commit"], "program": program,
                     "scheduler": str(scheduler) if scheduler else "local",
                     "workers": 0 if scheduler else workers, "runs_submitted": len(todo)})
        if progress is not None:
            for note in _notes(campaign):
                progress.write(note + "\n")
            where = ("on %s" % scheduler) if scheduler else ("%d at a time" % workers)
            progress.write("campaign %s: %d runs, %d stored before, %d to run %s\n"
                           % (campaign.name, len(runs), len(runs) - len(todo), len(todo), where))
        lost = []
        results = (_dask_results(todo, scheduler, program, store.session, lost) if scheduler
                   else _local_results(todo, program, workers))
        bar = Progress(len(todo), progress)
        for row in results:
            store.put(row, campaign.name)
            bar.add(row)
        statuses = {}
        for status in store.statuses().values():
            statuses[status] = statuses.get(status, 0) + 1
        return {"runs": len(runs), "stored_before": len(runs) - len(todo),
                "submitted": len(todo), "statuses": statuses, "lost": lost}
    finally:
        store.close()


def _terminate(signum, frame):  # SIGTERM: stop as Ctrl-C does
    raise KeyboardInterrupt


def _run_command(args):
    campaign = load(args.file)
    rerun = [s for s in args.rerun.split(",") if s] if args.rerun else []
    if args.dry_run:
        return _plan_command(campaign, args, rerun)
    result = run(campaign, args.db, workers=args.workers, scheduler=args.scheduler, rerun=rerun,
                 mix=args.mix, progress=None if args.quiet else sys.stderr)
    counts = ", ".join("%s %d" % (s, result["statuses"].get(s, 0)) for s in STATUSES
                       if result["statuses"].get(s))
    print("campaign %s: %d runs stored in %s (%s); %d run now"
          % (campaign.name, sum(result["statuses"].values()), args.db, counts,
             result["submitted"] - len(result["lost"])))
    for line in result["lost"]:
        print("lost (not stored; a rerun submits it again): " + line, file=sys.stderr)
    return 1 if result["lost"] else 0


def plan(campaign, db, workers=None, rerun=(), mix=False, program=None):
    """What `run` would submit, without running anything or writing the store (which `run`
    would refuse, this refuses too): {"runs", "stored", "to_run", "by_solver": {solver: runs
    to run}, "workers", "most_seconds"} (the longest it could take: every run to its time
    limit and the grace after it, `workers` at a time)."""
    _check_rerun(rerun)
    runs = campaign.runs()
    stored = {}
    if os.path.exists(db):
        store = Store(db, read_only=True)
        try:
            version = program_version(program or default_program())
            store.check_settings(_settings(version), campaign.name, mix)
            stored = store.statuses()
        finally:
            store.close()
    todo = _to_run(runs, stored, rerun)
    by_solver = {}
    for r in todo:
        by_solver[r["solver"]] = by_solver.get(r["solver"], 0) + 1
    workers = _workers(workers, campaign)
    most = sum(r["time_limit"] + GRACE_SECONDS for r in todo) / workers
    return {"runs": len(runs), "stored": len(runs) - len(todo), "to_run": len(todo),
            "by_solver": by_solver, "workers": workers, "most_seconds": most}


def _plan_command(campaign, args, rerun):
    p = plan(campaign, args.db, args.workers, rerun, args.mix)
    for note in _notes(campaign):
        print(note)
    print("campaign %s: %d runs of %d cases, %d stored in %s, %d to run (nothing run: "
          "--dry-run)" % (campaign.name, p["runs"], len(campaign.cases), p["stored"], args.db,
                          p["to_run"]))
    for solver, count in sorted(p["by_solver"].items()):
        print("  %-28s %d" % (solver, count))
    if args.scheduler:
        print("at most %s of worker time, if every run took its time limit: divided by the "
              "cluster's workers" % _duration(p["most_seconds"] * p["workers"]))
    else:
        print("at most %s with %d workers, if every run took its time limit"
              % (_duration(p["most_seconds"]), p["workers"]))
    return 0


def _report_command(args):
    from ._campaign_report import write_report
    for path in write_report(args.db, args.output):
        print(path)
    return 0


def _parser():
    parser = argparse.ArgumentParser(prog="ncpkit campaign", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run a campaign file's missing runs into a store")
    p.add_argument("file", help="the campaign file (TOML)")
    p.add_argument("--db", required=True, help="the SQLite store (created if missing)")
    p.add_argument("--workers", type=int, default=None,
                   help="runs at a time on this machine (default [run] workers, else the cores)")
    p.add_argument("--scheduler", default=None,
                   help="a Dask distributed scheduler's address (tcp://HOST:PORT)")
    p.add_argument("--rerun", default="", help="statuses to run again, e.g. crash,timeout")
    p.add_argument("--mix", action="store_true",
                   help="add to a store holding runs of another program version or CPU")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--dry-run", action="store_true",
                   help="print the runs it would submit, per solver, and the longest it could "
                        "take; run nothing, write nothing")
    p.set_defaults(handler=_run_command)
    p = sub.add_parser("report", help="tables, performance profiles and plots of a store")
    p.add_argument("db", help="the SQLite store")
    p.add_argument("-o", "--output", required=True, help="the folder to write")
    p.set_defaults(handler=_report_command)
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "run" and args.workers is not None and args.workers < 1:
        print("ncpkit campaign: --workers needs a positive integer", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.handler(args)
    except (CampaignError, StoreError) as e:
        print("ncpkit campaign: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ncpkit campaign: interrupted; the runs stored so far stay, and the next start "
              "runs only the others", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
