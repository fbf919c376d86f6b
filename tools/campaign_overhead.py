#!/usr/bin/env python3
"""What a campaign adds to each run over calling the program directly (docs/campaigns.md,
"Figures").

Runs every run of a campaign file twice, alternating by run so that the machine's drift falls on
both: once as a direct call of the same command line (`ncpkit solve ... --json`, or `simulate`),
timed around the process, and once through the campaign's own run function (its own process
with limits, a temporary folder, the status and row), and prints the mean of each and of their
difference per run. Then runs the whole campaign through the driver with one worker into a
temporary store and prints its wall time per run (the driver's scheduling and storing
included) against the direct calls' mean, the cost of storing a row, and the driver's memory
for each run it holds. With --dask, the same campaign also through a Dask LocalCluster of two
worker processes on loopback, against the local pool of two.

    PYTHONPATH=build/python NCPKIT_PROGRAM=build/apps/ncpkit \\
        /usr/bin/python3 tools/campaign_overhead.py campaigns/fclib.toml --repetitions 1
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

from ncpkit import campaign
from ncpkit._campaign_run import command, default_program, execute
from ncpkit._campaign_store import Store


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="the campaign file")
    parser.add_argument("--repetitions", type=int, default=None,
                        help="repetitions to take of each run (default the file's)")
    parser.add_argument("--dask", action="store_true",
                        help="also through a Dask LocalCluster of two workers")
    args = parser.parse_args()
    c = campaign.load(args.file)
    if args.repetitions:
        c.limits["repetitions"] = args.repetitions
    tracemalloc.start()
    runs = c.runs()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    program = default_program()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    direct, through = [], []
    with tempfile.TemporaryDirectory() as folder:
        for run in runs:
            words = command(run, program, folder)
            start = time.monotonic()
            subprocess.run(words, capture_output=True, env=env, check=False)
            direct.append(time.monotonic() - start)
            start = time.monotonic()
            execute(run, program)
            through.append(time.monotonic() - start)
        start = time.monotonic()
        store_path = os.path.join(folder, "store.sqlite")
        campaign.run(c, store_path, workers=1, program=program, progress=None)
        whole = time.monotonic() - start
        store = Store(store_path)
        rows = store.rows()
        store.begin({"campaign": c.name})
        start = time.monotonic()
        for _ in range(10):
            for row in rows:
                store.put(row, c.name)
        storing = (time.monotonic() - start) / (10 * len(rows))
        store.close()
        if args.dask:
            pool, cluster_time = dask_against_pool(c, program, folder)
    n = len(runs)
    print("%d runs of %s" % (n, args.file))
    print("direct call:                 mean %.1f ms a run" % (1e3 * statistics.mean(direct)))
    print("campaign run function:       mean %.1f ms a run" % (1e3 * statistics.mean(through)))
    print("difference, run by run:      mean %.1f ms, median %.1f ms" % (
        1e3 * statistics.mean(t - d for t, d in zip(through, direct)),
        1e3 * statistics.median(t - d for t, d in zip(through, direct))))
    print("driver, 1 worker:            %.1f ms a run (%.1f s in all), %.1f ms over the direct "
          "call" % (1e3 * whole / n, whole, 1e3 * (whole / n - statistics.mean(direct))))
    print("storing a row:               %.3f ms" % (1e3 * storing))
    print("the driver's list of runs:   %.0f bytes a run" % (held / n))
    if args.dask:
        print("2 workers, local pool:       %.1f s; Dask LocalCluster: %.1f s (%.1f ms a run more)"
              % (pool, cluster_time, 1e3 * (cluster_time - pool) / n))
    return 0


def dask_against_pool(c, program, folder):
    from distributed import LocalCluster
    start = time.monotonic()
    campaign.run(c, os.path.join(folder, "pool.sqlite"), workers=2, program=program,
                 progress=None)
    pool = time.monotonic() - start
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        start = time.monotonic()
        campaign.run(c, os.path.join(folder, "dask.sqlite"), program=program, progress=None,
                     scheduler=cluster.scheduler_address)
        cluster_time = time.monotonic() - start
    return pool, cluster_time


if __name__ == "__main__":
    sys.exit(main())
