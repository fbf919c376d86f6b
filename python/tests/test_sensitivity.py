"""Sensitivities of LCP solutions from Python: solve_lcp(..., sensitivities=True) on dense and
sparse M, against closed forms and central differences, the adjoint identity, the degenerate
rule and refused input."""
import numpy as np
import pytest
import scipy.sparse

import ncpkit

M2 = np.array([[2.0, 1.0], [1.0, 2.0]])


def test_closed_form_of_a_two_by_two_problem():
    z, summary, sens = ncpkit.solve_lcp(M2, [-1.0, 1.0], solver="lemke", sensitivities=True)
    assert summary.solved
    assert z == pytest.approx([0.5, 0.0], abs=1e-14)
    assert sens.degenerate == []
    assert sens.jacobian("q") == pytest.approx(np.array([[-0.5, 0.0], [0.0, 0.0]]), abs=1e-14)
    by_M = sens.jacobian("M")
    assert by_M.shape == (2, 2, 2)
    assert by_M[0, 0, 0] == pytest.approx(-0.25, abs=1e-14)


@pytest.mark.parametrize("side, expected", [("bound", 0.0), ("free", -2.0 / 3.0)])
def test_degenerate_index_returns_the_side_named(side, expected):
    z, _, sens = ncpkit.solve_lcp(M2, [-1.0, -0.5], solver="lemke", sensitivities=True,
                                  degenerate_side=side)
    assert sens.degenerate == [1]
    assert sens.jacobian("q")[1, 1] == pytest.approx(expected, abs=1e-14)


def random_problem(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    q = rng.standard_normal(n) * n
    return M, q


@pytest.mark.parametrize("sparse", [False, True])
def test_jacobians_match_central_differences(sparse):
    checked = 0
    for seed in range(10):
        M, q = random_problem(8, seed)
        given = scipy.sparse.csr_matrix(M) if sparse else M
        z, _, sens = ncpkit.solve_lcp(given, q, solver="lemke", tolerance=1e-13,
                                      sensitivities=True)
        jacobian = sens.jacobian("q")
        h = 1e-6
        for i in range(len(q)):
            e = np.zeros(len(q))
            e[i] = h
            plus, _ = ncpkit.solve_lcp(M, q + e, solver="lemke", tolerance=1e-13)
            minus, _ = ncpkit.solve_lcp(M, q - e, solver="lemke", tolerance=1e-13)
            if ((plus > 0) != (z > 0)).any() or ((minus > 0) != (z > 0)).any():
                continue  # the active set changed within h
            checked += 1
            assert (plus - minus) / (2 * h) == pytest.approx(jacobian[:, i], abs=1e-6)
    assert checked >= 60


@pytest.mark.parametrize("sparse", [False, True])
def test_vjp_is_the_adjoint_of_jvp(sparse):
    rng = np.random.default_rng(3)
    M, q = random_problem(12, 7)
    lower = -rng.random(12)
    upper = rng.random(12)
    given = scipy.sparse.csc_matrix(M) if sparse else M
    z, _, sens = ncpkit.solve_lcp(given, q, lower=lower, upper=upper, solver="lemke",
                                  sensitivities=True)
    dq, dl, du = rng.standard_normal(12), rng.standard_normal(12), rng.standard_normal(12)
    dM = rng.standard_normal((12, 12))
    g = rng.standard_normal(12)
    forward = g @ sens.jvp(q=dq, M=dM, lower=dl, upper=du)
    grads = sens.vjp(g)
    gM = grads["M"].toarray() if sparse else grads["M"]
    backward = grads["q"] @ dq + grads["lower"] @ dl + grads["upper"] @ du + np.sum(gM * dM)
    assert forward == pytest.approx(backward, rel=1e-12, abs=1e-12)
    # The Jacobians agree with the products.
    assert sens.jacobian("lower") @ dl == pytest.approx(sens.jvp(lower=dl), abs=1e-12)


def test_refused_input():
    with pytest.raises(ncpkit.InputError, match="degenerate_side"):
        ncpkit.solve_lcp(M2, [-1.0, 1.0], sensitivities=True, degenerate_side="left")
    _, _, sens = ncpkit.solve_lcp(M2, [-1.0, 1.0], sensitivities=True)
    with pytest.raises(ncpkit.InputError, match="no input"):
        sens.jacobian("W")
    with pytest.raises(ncpkit.InputError):
        sens.vjp([1.0, 2.0, 3.0])
    with pytest.raises(ncpkit.SolveError, match="did not converge"):
        ncpkit.solve_lcp(M2, [-1.0, -1.0], solver="pgs", max_iterations=1, tolerance=1e-14,
                         sensitivities=True)


def test_mcp_sensitivity_matches_the_lcp_and_central_differences():
    M, q = random_problem(6, 11)
    lower, upper = np.zeros(6), np.full(6, np.inf)
    z, summary, sens = ncpkit.solve_mcp(lambda x: M @ x + q, lambda x: M, lower, upper,
                                        tolerance=1e-13, sensitivities=True)
    assert summary.solved
    _, _, linear = ncpkit.solve_lcp(M, q, solver="lemke", sensitivities=True)
    assert sens.jacobian("F") == pytest.approx(linear.jacobian("q"), abs=1e-10)
    g = np.arange(6.0)
    assert sens.vjp(g)["F"] == pytest.approx(linear.vjp(g)["q"], abs=1e-10)

    # A parameter of F: dz/dtheta = jacobian("F") @ dF/dtheta, against re-solves.
    def F(x, theta):
        return np.array([theta * x[0] ** 2 + x[0] - 2.0 + x[1], x[1] + theta * x[0] - 1.0])

    def J(x, theta):
        return np.array([[2 * theta * x[0] + 1.0, 1.0], [theta, 1.0]])

    theta, h = 0.7, 1e-6
    bounds = (np.zeros(2), np.full(2, np.inf))
    z, _, sens = ncpkit.solve_mcp(lambda x: F(x, theta), lambda x: J(x, theta), *bounds,
                                  tolerance=1e-13, sensitivities=True)
    dF_dtheta = np.array([z[0] ** 2, z[0]])
    plus, _ = ncpkit.solve_mcp(lambda x: F(x, theta + h), lambda x: J(x, theta + h), *bounds,
                               tolerance=1e-13)
    minus, _ = ncpkit.solve_mcp(lambda x: F(x, theta - h), lambda x: J(x, theta - h), *bounds,
                                tolerance=1e-13)
    assert (plus - minus) / (2 * h) == pytest.approx(sens.jacobian("F") @ dF_dtheta, abs=1e-6)
    assert sens.jvp(F=dF_dtheta) == pytest.approx(sens.jacobian("F") @ dF_dtheta, abs=1e-14)


def test_mcp_sensitivity_raises_the_callables_error():
    # F fails where the sensitivity evaluates it: its exception, not a generic one, comes out.
    broken = {"now": False}

    def F(x):
        if broken["now"]:
            raise RuntimeError("F broke")
        return x - 1.0

    z, _ = ncpkit.solve_mcp(F, lambda x: np.eye(2), np.zeros(2), np.full(2, np.inf))
    broken["now"] = True
    with pytest.raises(RuntimeError, match="F broke"):
        ncpkit._ncpkit._mcp_sensitivity(F, lambda x: np.eye(2), np.zeros(2), np.full(2, np.inf),
                                        z, "bound")


@pytest.mark.parametrize("sparse", [False, True])
def test_friction_sensitivity_of_a_sliding_contact(sparse):
    # W = I, q = (-1, 2, 0), mu = 0.5: r = (1, -0.5, 0) sliding along t = (1, 0).
    W = scipy.sparse.identity(3, format="csc") if sparse else np.eye(3)
    r, summary, sens = ncpkit.solve_friction(W, [-1.0, 2.0, 0.0], [0.5], tolerance=1e-14,
                                             sensitivities=True)
    assert r == pytest.approx([1.0, -0.5, 0.0], abs=1e-12)
    assert sens.states == ["sliding"]
    assert sens.degenerate == []
    expected = np.array([[-1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, -0.25]])
    assert sens.jacobian("q") == pytest.approx(expected, abs=1e-12)
    assert sens.jacobian("mu")[:, 0] == pytest.approx([0.0, -1.0, 0.0], abs=1e-12)
    by_W = sens.jacobian("W")
    assert by_W.shape == ((3, 3, 3) if not sparse else (3, 3))


def test_friction_vjp_is_the_adjoint_of_jvp():
    rng = np.random.default_rng(5)
    n = 9
    A = rng.standard_normal((n, n)) / 3.0
    W = A @ A.T + np.eye(n)
    q = np.array([-1.0, 0.3, -0.2, -0.5, 1.5, 0.4, 0.8, 0.1, 0.0])
    mu = np.array([0.3, 0.6, 0.5])
    r, _, sens = ncpkit.solve_friction(W, q, mu, tolerance=1e-13, sensitivities=True)
    dq, dmu, dW = rng.standard_normal(n), rng.standard_normal(3), rng.standard_normal((n, n))
    g = rng.standard_normal(n)
    grads = sens.vjp(g)
    forward = g @ sens.jvp(q=dq, mu=dmu, W=dW)
    backward = grads["q"] @ dq + grads["mu"] @ dmu + np.sum(grads["W"] * dW)
    assert forward == pytest.approx(backward, rel=1e-11, abs=1e-12)
    with pytest.raises(ncpkit.InputError, match="no input"):
        sens.jacobian("M")


def test_dense_jacobians_too_large_are_refused():
    n = 400  # dz/dM of a dense 400 x 400 M: 6.4e7 entries
    _, _, sens = ncpkit.solve_lcp(np.eye(n), -np.ones(n), sensitivities=True)
    with pytest.raises(ncpkit.InputError, match="use jvp or vjp"):
        sens.jacobian("M")
    assert sens.jvp(q=np.ones(n)) == pytest.approx(-np.ones(n))
