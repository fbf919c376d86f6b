"""tools/sweep_parallelism.py: the bound on threads that keep nsgs-velocity's sweeps bit for bit."""
import importlib.util
import os
import random

import numpy as np
import scipy.sparse

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "sweep_parallelism.py")


def load_tool():
    spec = importlib.util.spec_from_file_location("sweep_parallelism", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def column(n):
    """Contact k between bodies k and k + 1: each shares a body with its neighbours."""
    return [[b for b in (k - 1, k + 1) if 0 <= b < n] for k in range(n)]


def test_a_column_pipelines_across_sweeps_and_not_within_one():
    tool = load_tool()
    conflicts = column(4)
    assert tool.critical_path(conflicts) == 4
    part = tool.order_parts(4, 2)
    assert part == [0, 0, 1, 1]
    for k in (1, 2, 5, 20):
        # the second half of sweep s beside the first half of sweep s + 1
        assert tool.schedule(conflicts, part, k, set()) == 2 * k + 2
        assert tool.schedule(conflicts, part, k, set(range(1, k + 1))) == 4 * k


def test_independent_columns_halve_the_time_and_one_body_serializes():
    tool = load_tool()
    two = column(3) + [[b + 3 for b in c] for c in column(3)]
    for part in (tool.order_parts(6, 2), tool.graph_parts(two, 2)):
        assert sorted(part) == [0, 0, 0, 1, 1, 1]
        assert part[0] == part[1] == part[2]
        assert tool.schedule(two, part, 5, {1, 2, 5}) == 15
    one_body = [[b for b in range(5) if b != a] for a in range(5)]
    assert tool.critical_path(one_body) == 5
    for part in (tool.order_parts(5, 2), tool.graph_parts(one_body, 2)):
        assert tool.schedule(one_body, part, 4, set()) == 20


def test_conflicts_come_from_the_blocks_of_w():
    tool = load_tool()
    # contacts 0 and 2 share a body; contact 1 touches neither
    W = np.zeros((9, 9))
    for a in range(3):
        W[3 * a:3 * a + 3, 3 * a:3 * a + 3] = np.eye(3)
    W[0, 7] = W[7, 0] = 0.5
    assert tool.conflicts_of(scipy.sparse.csc_matrix(W)) == [[2], [], [0]]


def sweeps_in_order(bodies, order, velocities):
    """Gauss-Seidel-like updates: each contact reads its bodies' velocities and adds to them."""
    v = list(velocities)
    for _, _, a in order:
        b = bodies[a]
        u = sum(v[k] for k in b) * 0.7 + 0.1 * a
        change = -u / (1.0 + len(b)) + 1e-3 * np.sin(u)
        for k in b:
            v[k] += change * (1.3 if k == b[0] else 0.9)
    return v


def test_the_parted_schedule_solves_as_one_thread_to_the_bit():
    tool = load_tool()
    failures = 0
    for seed in range(40):
        rng = random.Random(seed)
        num_bodies = rng.randint(3, 12)
        bodies = [sorted(rng.sample(range(num_bodies), rng.randint(1, 2))) for _ in range(30)]
        conflicts = [[b for b in range(30) if b != a and set(bodies[a]) & set(bodies[b])]
                     for a in range(30)]
        velocities = [rng.uniform(-1, 1) for _ in range(num_bodies)]
        sweeps = rng.randint(1, 6)
        sequential = [(0, s, a) for s in range(1, sweeps + 1) for a in range(30)]
        expected = sweeps_in_order(bodies, sequential, velocities)
        for part in (tool.order_parts(30, 2), tool.graph_parts(conflicts, 3)):
            starts = []
            tool.schedule(conflicts, part, sweeps, {1, 2, sweeps}, starts)
            starts.sort(key=lambda e: (e[0], part[e[2]]))
            failures += sweeps_in_order(bodies, starts, velocities) != expected
    assert failures == 0
