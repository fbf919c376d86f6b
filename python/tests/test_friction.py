"""Frictional contact problems from Python: every friction solver of the registry by name, W as
scipy.sparse or numpy, the FCLib error checked here from FORMAT.md, files through the program's
readers, errors as exceptions."""
import os

import numpy as np
import pytest
import scipy.sparse

import ncpkit

SHARED = os.environ.get("NCPKIT_SHARED_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))


def fclib_error(W, q, mu, r):
    """FORMAT.md §5: the natural map with De Saxce's modified velocity over 1 + ||q||."""
    u = W @ r + q
    total = 0.0
    for a, m in enumerate(mu):
        ra, ua = r[3 * a:3 * a + 3], u[3 * a:3 * a + 3]
        x = ra - (ua + np.array([m * np.hypot(ua[1], ua[2]), 0.0, 0.0]))
        xt = np.hypot(x[1], x[2])
        if xt <= m * x[0]:
            p = x
        elif m * xt <= -x[0]:
            p = np.zeros(3)
        else:
            pn = (m * xt + x[0]) / (1 + m * m)
            p = np.array([pn, m * pn * x[1] / xt, m * pn * x[2] / xt])
        total += np.sum((ra - p) ** 2)
    return np.sqrt(total) / (1 + np.linalg.norm(q))


def contact_problem(nc, seed, mu=0.4):
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * nc, 12))
    W = J @ J.T + 0.3 * np.eye(3 * nc)
    q = rng.standard_normal(3 * nc)
    q[0::3] -= 0.5
    return W, q, np.full(nc, mu)


def test_the_friction_solvers_are_in_the_registry():
    names = ncpkit.solver_names("friction")
    assert {"nsgs", "nsgs-shuffled", "nsgs-anderson", "fc-newton", "fc-newton-fb", "fc-proximal",
            "fc-proximal-fb", "auto"} == set(names)
    assert "lemke" not in names
    assert ncpkit.solver_names("convex") == ["convex-newton"]


def test_the_convex_model_from_numpy():
    # Its own model, not Coulomb's: solved to its tolerance, and the Coulomb error of its
    # impulses is that of a different problem (larger here, where contacts slide).
    W, q, mu = contact_problem(8, 1)
    r, summary = ncpkit.solve_friction(W, q, mu, solver="convex-newton", tolerance=1e-10)
    assert summary.solved, summary.message
    assert summary.solver == "convex-newton"
    assert summary.natural_residual <= 1e-10
    assert fclib_error(W, q, mu, r) > 1e-6


@pytest.mark.parametrize("solver", ncpkit.solver_names("friction"))
def test_every_friction_solver_from_numpy_and_scipy(solver):
    W, q, mu = contact_problem(8, 1)
    for matrix in (W, scipy.sparse.csr_matrix(W)):
        r, summary = ncpkit.solve_friction(matrix, q, mu, solver=solver, tolerance=1e-10)
        assert summary.solved, summary.message
        assert summary.solver == solver
        assert fclib_error(W, q, mu, r) <= 1e-10
        assert summary.natural_residual == pytest.approx(fclib_error(W, q, mu, r), rel=1e-6,
                                                         abs=1e-14)
        assert np.isfinite(summary.siconos_error)


def test_a_shared_fclib_file_through_the_programs_reader():
    path = os.path.join(SHARED, "data", "fclib", "Rover", "Rover1040.hdf5")
    if not os.path.exists(path):
        pytest.skip("no ../shared")
    W, q, mu = ncpkit.read_friction_problem(path)
    assert scipy.sparse.issparse(W) and W.shape == (15, 15) and len(mu) == 5
    r, summary = ncpkit.solve_friction(W, q, mu, tolerance=1e-8)
    assert summary.solved and "solved by" in summary.message
    assert fclib_error(W.toarray(), q, mu, r) <= 1e-8
    # A warm start at the answer needs no sweep.
    r2, again = ncpkit.solve_friction(W, q, mu, solver="nsgs", start=r, tolerance=1e-8)
    assert again.iterations == 0 and np.array_equal(r, r2)


def test_friction_errors_are_exceptions_with_the_programs_messages():
    W, q, mu = contact_problem(2, 2)
    with pytest.raises(ncpkit.InputError, match="mu"):
        ncpkit.solve_friction(W, q, np.array([0.3, -1.0]))
    with pytest.raises(ncpkit.InputError, match="3 n_c"):
        ncpkit.solve_friction(W, q, np.array([0.3]))
    bad = q.copy()
    bad[1] = np.nan
    with pytest.raises(ncpkit.InputError, match="q\\(1\\)"):
        ncpkit.solve_friction(W, bad, mu)
    with pytest.raises(ncpkit.InputError, match="does not take"):
        ncpkit.solve_friction(W, q, mu, solver="lemke")
    with pytest.raises(ncpkit.InputError, match="unknown solver option"):
        ncpkit.solve_friction(W, q, mu, relaxation=1.2)
    with pytest.raises(ncpkit.InputError, match="time_limit_seconds"):
        ncpkit.solve_friction(W, q, mu, time_limit_seconds=-1.0)
    with pytest.raises(ncpkit.InputError, match="is not an HDF5 file|expected dimension"):
        ncpkit.read_friction_problem(__file__)
