#!/usr/bin/env python3
"""How much faster threads could make `nsgs-velocity`'s sweeps without changing a bit.

  ncpkit simulate pile5.json --duration 0.8 --save-problems problems/
  PYTHONPATH=build/python /usr/bin/python3 tools/sweep_parallelism.py problems/*-000040-*.hdf5

A sweep solves the contacts one after another, each from the velocities of its two bodies, and
adds its change to them. Two contacts that share no moving body read and write different
velocities, so any order that keeps every pair of contacts sharing a body in the sweep's order
gives the sweep's result to the bit. Threads that each take a part of the contacts and solve it
in the sweep's order, a contact waiting only for the contacts of other parts that share a body
with it (the earlier ones in this sweep, the later ones in the sweep before), therefore
reproduce the one-thread trajectory exactly. This tool times that schedule on saved island
problems (FCLib files; two contacts share a body where their block of W is not zero), each
contact one unit of time and every wait free: a bound on what such threads can gain.

Two ways of parting the contacts:
  order  the first and second half of the sweep's order: the parts work on different sweeps
         at once, a pipeline that empties at every error check (the solver needs every
         contact's impulse of the same sweep there);
  graph  the contacts on either side of the median of their distance, in steps through W's
         blocks, from a contact farthest from the first one: a cut across the island.

Error checks are taken after sweeps 1, 2 and the last, as `nsgs-velocity` checks a solve that
its sweeps will not finish (solvers/friction/velocity_gauss_seidel.cc, NextCheck); `--checks`
names others.
"""

import argparse
import sys


def conflicts_of(W):
    """Per contact, the other contacts whose 3 x 3 block of W (scipy sparse) is not zero."""
    coo = W.tocoo()
    neighbours = [set() for _ in range(W.shape[0] // 3)]
    for i, j, x in zip(coo.row, coo.col, coo.data):
        a, b = int(i) // 3, int(j) // 3
        if a != b and x != 0.0:
            neighbours[a].add(b)
            neighbours[b].add(a)
    return [sorted(n) for n in neighbours]


def critical_path(conflicts):
    """The longest chain of contacts, each after an earlier one it shares a body with, in one
    sweep: the sweep's time on unboundedly many threads."""
    level = [0] * len(conflicts)
    for a, others in enumerate(conflicts):
        level[a] = 1 + max((level[b] for b in others if b < a), default=0)
    return max(level, default=0)


def schedule(conflicts, part, sweeps, checks, starts=None):
    """The time of `sweeps` sweeps with contact a on thread part[a], each contact one unit, a
    contact starting when its thread is free and its waits are over; after each sweep in
    `checks` every thread waits for the others. Each (start, sweep, contact) is appended to
    `starts` if given: solving the contacts in the order of their starts is one order the
    threads may take."""
    n = len(conflicts)
    cross = [[b for b in others if part[b] != part[a]] for a, others in enumerate(conflicts)]
    free = {}
    previous = [0.0] * n  # each contact's finish in the sweep before
    for sweep in range(1, sweeps + 1):
        finish = [0.0] * n
        for a in range(n):
            start = free.get(part[a], 0.0)
            for b in cross[a]:
                start = max(start, finish[b] if b < a else previous[b])
            if starts is not None:
                starts.append((start, sweep, a))
            finish[a] = start + 1.0
            free[part[a]] = finish[a]
        previous = finish
        if sweep in checks:
            drained = max(free.values(), default=0.0)
            free = {p: drained for p in free}
    return max(free.values(), default=0.0)


def order_parts(n, parts):
    return [a * parts // n for a in range(n)]


def graph_parts(conflicts, parts):
    """Contacts ranked by their distance in W's graph from a contact farthest from contact 0
    (ties by index), cut into `parts` runs of equal length."""
    n = len(conflicts)

    def distances(source):
        d = [-1] * n
        d[source] = 0
        queue = [source]
        for a in queue:
            for b in conflicts[a]:
                if d[b] < 0:
                    d[b] = d[a] + 1
                    queue.append(b)
        return d

    if n == 0:
        return []
    from_first = distances(0)
    far = max(range(n), key=lambda a: from_first[a])
    d = distances(far)
    ranked = sorted(range(n), key=lambda a: (d[a], a))
    part = [0] * n
    for rank, a in enumerate(ranked):
        part[a] = rank * parts // n
    return part


def speedups(conflicts, parts, sweeps, checks):
    """{partition: (with the checks, without)} of the one-thread time over the parted one."""
    n = len(conflicts)
    out = {}
    for name, part in (("order", order_parts(n, parts)), ("graph", graph_parts(conflicts, parts))):
        with_checks = schedule(conflicts, part, sweeps, checks)
        free = schedule(conflicts, part, sweeps, set())
        out[name] = (n * sweeps / with_checks if with_checks else 1.0,
                     n * sweeps / free if free else 1.0)
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", help="FCLib files of island problems")
    parser.add_argument("--parts", type=int, default=2, help="threads (default 2)")
    parser.add_argument("--sweeps", default="5,20", help="sweeps a solve (default 5,20)")
    parser.add_argument("--checks", default=None,
                        help="sweeps after which the error is checked (default 1, 2 and the last)")
    args = parser.parse_args(argv)
    if args.parts < 1:
        parser.error("--parts must be at least 1")
    try:
        sweep_counts = [int(s) for s in args.sweeps.split(",")]
        extra_checks = None if args.checks is None else {int(s) for s in args.checks.split(",")}
    except ValueError:
        parser.error("--sweeps and --checks take integers separated by commas")
    if any(s < 1 for s in sweep_counts):
        parser.error("--sweeps must be at least 1")
    try:
        import ncpkit  # the built package (PYTHONPATH=build/python)
    except ImportError as error:
        print(f"sweep_parallelism: {error} (set PYTHONPATH=build/python)", file=sys.stderr)
        return 2

    for path in args.files:
        try:
            W, _, _ = ncpkit.read_friction_problem(path)
        except Exception as error:  # the reader's InputError, OSError: the file's own message
            print(f"sweep_parallelism: {path}: {error}", file=sys.stderr)
            return 2
        conflicts = conflicts_of(W)
        n = len(conflicts)
        print(f"{path}: {n} contacts, one sweep's critical path {critical_path(conflicts)} "
              f"(a bound of {n / max(1, critical_path(conflicts)):.2f} on any number of threads)")
        for sweeps in sweep_counts:
            checks = extra_checks if extra_checks is not None else {1, 2, sweeps}
            result = speedups(conflicts, args.parts, sweeps, checks)
            cells = ", ".join(f"{name} {with_checks:.2f} ({free:.2f} without checks)"
                              for name, (with_checks, free) in result.items())
            print(f"  {sweeps} sweeps on {args.parts} threads: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
