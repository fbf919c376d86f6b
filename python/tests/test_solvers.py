"""The Python package's solvers: every registry solver by name, numpy and scipy.sparse input,
MCPs from Python callables, options as keyword arguments, errors as exceptions."""
import os

import numpy as np
import pytest
import scipy.sparse

import ncpkit

SHARED = os.environ.get("NCPKIT_SHARED_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))


def natural_residual(M, q, z, lower=None, upper=None):
    n = len(q)
    lower = np.zeros(n) if lower is None else lower
    upper = np.full(n, np.inf) if upper is None else upper
    w = M @ z + q
    return np.max(np.abs(z - np.clip(z - w, lower, upper)))


def spd_lcp(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n), rng.standard_normal(n)


def test_the_registry_is_listed_with_both_kinds():
    names = [s["name"] for s in ncpkit.solvers()]
    assert {"lemke", "pgs", "fb-newton", "auto", "josephy-newton"} <= set(names)
    assert "lemke" in ncpkit.solver_names("linear")
    assert "lemke" not in ncpkit.solver_names("mixed")
    assert "fb-newton" in ncpkit.solver_names("mixed")
    with pytest.raises(ncpkit.InputError):
        ncpkit.solver_names("nonlinear")


def test_the_registry_rows_name_every_kind_they_take():
    rows = {s["name"]: s for s in ncpkit.solvers()}
    # nsgs-velocity takes the global form only (the explicit stepper's problems).
    velocity = rows["nsgs-velocity"]
    assert velocity["global_friction"] and velocity["kinds"] == "global-friction"
    assert not (velocity["linear"] or velocity["mixed"] or velocity["friction"])
    # The convex model's solvers take the same problems but are named apart (their residual is
    # that model's).
    assert ncpkit.solver_names("global_friction") == [
        s["name"] for s in ncpkit.solvers() if s["global_friction"] and not s["convex_model"]]
    assert ncpkit.solver_names("convex") == [s["name"] for s in ncpkit.solvers()
                                             if s["convex_model"]]
    assert "nsgs-velocity" in ncpkit.solver_names("global_friction")
    for row in rows.values():
        assert row["kinds"], row["name"]  # every row takes some kind
        assert row["kinds"] == ", ".join(
            k.replace("_", "-") for k in ("linear", "mixed", "friction", "global_friction")
            if row[k])


def test_missing_or_malformed_inputs_are_input_errors():
    M, q = spd_lcp(4, 2)
    with pytest.raises(ncpkit.InputError, match="q is required"):
        ncpkit.solve_lcp(M, None)
    with pytest.raises(ncpkit.InputError, match="lower is required"):
        ncpkit.solve_mcp(lambda z: z, lambda z: np.eye(z.size), None, None)
    # A CSR matrix whose column index lies outside its shape (scipy builds it unchecked).
    bad = scipy.sparse.csr_matrix((np.ones(4), np.array([0, 1, 2, 7]), np.arange(5)),
                                  shape=(4, 4))
    with pytest.raises(ncpkit.InputError, match="M is a malformed sparse matrix"):
        ncpkit.solve_lcp(bad, q)
    coo = scipy.sparse.coo_matrix((np.ones(2), (np.array([0, 5]), np.array([0, 1]))),
                                  shape=(6, 6))
    coo.row[1] = 9  # out of the shape after construction, as a caller may write it
    with pytest.raises(ncpkit.InputError, match="W is a malformed sparse matrix"):
        ncpkit.solve_friction(coo, np.zeros(6), np.ones(2))


@pytest.mark.parametrize("solver", ncpkit.solver_names("linear"))
def test_every_linear_solver_solves_an_spd_lcp_from_numpy(solver):
    M, q = spd_lcp(20, 1)
    z, summary = ncpkit.solve_lcp(M, q, solver=solver)
    assert summary.solved, summary.full_report
    assert summary.solver.startswith(solver.split("-")[0]) or solver == "auto"
    assert summary.status == "converged"
    assert summary.natural_residual <= summary.tolerance
    assert natural_residual(M, q, z) <= 1e-9
    assert isinstance(z, np.ndarray) and z.shape == (20,)
    assert summary.iterations >= 0 and summary.wall_time_seconds >= 0.0
    assert solver in summary.full_report or summary.solver in summary.full_report


def test_scipy_sparse_and_dense_give_the_same_solution():
    M, q = spd_lcp(30, 2)
    M[np.abs(M) < 2.0] = 0.0
    M += 40 * np.eye(30)
    z_dense, s_dense = ncpkit.solve_lcp(M, q, solver="fb-newton")
    z_sparse, s_sparse = ncpkit.solve_lcp(scipy.sparse.csr_matrix(M), q, solver="fb-newton")
    assert s_dense.solved and s_sparse.solved
    assert np.max(np.abs(z_dense - z_sparse)) <= 1e-9


def test_a_box_mlcp_with_bounds():
    M, q = spd_lcp(10, 3)
    lower, upper = -np.ones(10), np.full(10, 0.5)
    z, summary = ncpkit.solve_lcp(M, q, lower=lower, upper=upper, solver="lemke")
    assert summary.solved
    assert natural_residual(M, q, z, lower, upper) <= 1e-9
    assert np.all(z >= lower) and np.all(z <= upper)


def test_options_are_keyword_arguments():
    M, q = spd_lcp(50, 4)
    z, summary = ncpkit.solve_lcp(M, q, solver="pgs", max_iterations=2, tolerance=1e-12)
    assert not summary.solved
    assert summary.status == "max_iterations"
    assert summary.iterations == 2
    _, summary = ncpkit.solve_lcp(M, q, solver="fb-newton", tolerance=1e-6)
    assert summary.tolerance == 1e-6
    with pytest.raises(ncpkit.InputError, match="unknown solver option 'tolerence'"):
        ncpkit.solve_lcp(M, q, solver="lemke", tolerence=1e-6)
    with pytest.raises(ncpkit.InputError, match="option tolerance: cannot take"):
        ncpkit.solve_lcp(M, q, solver="lemke", tolerance="small")


def test_a_warm_start_is_used():
    M, q = spd_lcp(20, 5)
    z, _ = ncpkit.solve_lcp(M, q, solver="lemke")
    _, again = ncpkit.solve_lcp(M, q, solver="lemke", start=z)
    assert again.solved and again.iterations == 0


def test_errors_are_exceptions_with_the_messages_of_the_program():
    M, q = spd_lcp(5, 6)
    with pytest.raises(ncpkit.InputError, match="unknown solver 'simplex'"):
        ncpkit.solve_lcp(M, q, solver="simplex")
    with pytest.raises(ncpkit.InputError, match="lower has 3 entries, the problem 5"):
        ncpkit.solve_lcp(M, q, lower=np.zeros(3))
    with pytest.raises(ncpkit.InputError):
        ncpkit.solve_lcp(M[:4], q)  # not square for q
    bad = M.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ncpkit.InputError):
        ncpkit.solve_lcp(bad, q)
    with pytest.raises(ncpkit.InputError):
        ncpkit.solve_lcp(M, q, lower=np.ones(5), upper=np.zeros(5))  # l > u
    with pytest.raises(ValueError):  # InputError is a ValueError
        ncpkit.solve_lcp(M, q, solver="lemke", max_iterations=-1)


def test_an_lcp_without_solution_reports_it():
    # w = -z - 1 >= 0 needs z <= -1 < 0: no solution; Lemke ray-terminates.
    M = np.array([[-1.0, 0.0], [0.0, -1.0]])
    q = np.array([-1.0, -1.0])
    z, summary = ncpkit.solve_lcp(M, q, solver="lemke")
    assert not summary.solved
    assert "ray termination" in summary.message
    assert not bool(summary)


def kojima_shindo(x):
    return np.array([
        3 * x[0] ** 2 + 2 * x[0] * x[1] + 2 * x[1] ** 2 + x[2] + 3 * x[3] - 6,
        2 * x[0] ** 2 + x[0] + x[1] ** 2 + 10 * x[2] + 2 * x[3] - 2,
        3 * x[0] ** 2 + x[0] * x[1] + 2 * x[1] ** 2 + 2 * x[2] + 9 * x[3] - 9,
        x[0] ** 2 + 3 * x[1] ** 2 + 2 * x[2] + 3 * x[3] - 3,
    ])


def kojima_shindo_jacobian(x):
    return np.array([
        [6 * x[0] + 2 * x[1], 2 * x[0] + 4 * x[1], 1, 3],
        [4 * x[0] + 1, 2 * x[1], 10, 2],
        [6 * x[0] + x[1], x[0] + 4 * x[1], 2, 9],
        [2 * x[0], 6 * x[1], 2, 3],
    ], dtype=float)


@pytest.mark.parametrize("solver", ncpkit.solver_names("mixed"))
def test_every_mixed_solver_solves_kojima_shindo_from_python_callables(solver):
    n = 4
    z, summary = ncpkit.solve_mcp(kojima_shindo, kojima_shindo_jacobian, np.zeros(n),
                                  np.full(n, np.inf), solver=solver, start=np.ones(n))
    assert summary.solved, summary.full_report
    F = kojima_shindo(z)
    assert np.max(np.abs(np.minimum(z, F))) <= 1e-9
    # One of the two solutions (Kojima and Shindo): (1, 0, 3, 0) or (sqrt(6)/2, 0, 0, 1/2).
    solutions = [np.array([1.0, 0, 3, 0]), np.array([np.sqrt(6) / 2, 0, 0, 0.5])]
    assert min(np.max(np.abs(z - s)) for s in solutions) <= 1e-7


def test_a_sparse_jacobian_and_a_start_projected_onto_the_bounds():
    n = 200
    A = scipy.sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csc") * (n + 1) ** 2

    def F(x):
        return A @ x - np.exp(x)

    def J(x):
        return (A - scipy.sparse.diags(np.exp(x))).tocsc()

    z, summary = ncpkit.solve_mcp(F, J, np.zeros(n), np.full(n, np.inf), solver="fb-newton",
                                  start=np.full(n, -1.0))  # below the bound: projected to 0
    assert summary.solved, summary.full_report
    assert abs(z.max() - 0.1405) < 5e-4  # Bratu, lambda = 1


def test_an_exception_in_F_is_raised_after_the_solve():
    def F(x):
        raise RuntimeError("model blew up at %s" % x[0])

    with pytest.raises(RuntimeError, match="model blew up"):
        ncpkit.solve_mcp(F, lambda x: np.eye(1), np.zeros(1), np.ones(1), solver="fb-newton")


def test_F_of_the_wrong_size_is_an_input_error():
    with pytest.raises(ncpkit.InputError, match="F returned 2 values for 3 variables"):
        ncpkit.solve_mcp(lambda x: np.ones(2), lambda x: np.eye(3), np.zeros(3), np.ones(3),
                         solver="fb-newton")
    with pytest.raises(ncpkit.InputError, match="J returned a 2 x 2 matrix for 3 variables"):
        ncpkit.solve_mcp(lambda x: x - 0.5, lambda x: np.eye(2), np.zeros(3), np.ones(3),
                         solver="fb-newton")


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "data")), reason="no ../shared")
def test_problem_files_through_the_programs_readers():
    M, q, lower, upper = ncpkit.read_problem(os.path.join(SHARED, "data", "lcp", "lcp_deudeu.dat"))
    assert scipy.sparse.issparse(M) and M.shape == (2, 2)
    assert np.array_equal(M.toarray(), [[2.0, 1.0], [1.0, 2.0]])
    assert np.array_equal(q, [-5.0, -6.0])
    for solver in ("lemke", "fb-newton", "auto"):
        z, summary = ncpkit.solve_lcp(M, q, lower, upper, solver=solver)
        assert summary.solved, summary.full_report
        assert natural_residual(M.toarray(), q, z) <= 1e-9
    M, q, lower, upper = ncpkit.read_problem(os.path.join(SHARED, "data", "mlcp", "RCD_mlcp.dat"))
    assert np.isinf(lower).any()  # free variables
    z, summary = ncpkit.solve_lcp(M, q, lower, upper, solver="auto")
    assert summary.solved, summary.full_report
    with pytest.raises(ncpkit.InputError, match="cannot open file"):
        ncpkit.read_problem("/nonexistent.dat")
