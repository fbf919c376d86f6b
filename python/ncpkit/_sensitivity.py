"""Derivatives of solutions (docs/derivatives.md): the objects solve_lcp, solve_mcp and
solve_friction return with sensitivities=True."""
import numpy as np

from . import _ncpkit
from ._checks import vector
from ._ncpkit import InputError

_EMPTY = np.zeros(0)


def _require_dense_size(entries, name):
    """The limit the C++ Jacobians keep (5e7 entries), for the ones formed here."""
    if entries > 5e7:
        raise InputError("sensitivity: the dense Jacobian with respect to %s would have %d "
                         "entries (more than 5e7); use jvp or vjp" % (name, entries))


def _or_empty(value):
    return _EMPTY if value is None else value


def _matrix_tangent(name, value, n):
    """A perturbation of an n x n matrix as CSC (zero when None)."""
    import scipy.sparse  # only where sensitivities are asked for
    if value is None:
        return scipy.sparse.csc_matrix((n, n))
    matrix = scipy.sparse.csc_matrix(value, dtype=float)
    if matrix.shape != (n, n):
        raise InputError("%s has shape %s, the problem %d x %d" % (name, matrix.shape, n, n))
    return matrix


class _Sensitivity:
    """What every sensitivity has: the C++ object, its degenerate indices (contacts for a
    frictional contact problem) and whether least squares was used."""

    def __init__(self, handle):
        self._handle = handle

    @property
    def degenerate(self):
        return list(self._handle.degenerate)

    @property
    def least_squares(self):
        """True where the selected system was singular (least-norm derivatives)."""
        return self._handle.least_squares


class _MatrixDataSensitivity(_Sensitivity):
    """A sensitivity of a problem with a matrix A (M or W) and a solution x, whose gradient
    with respect to A is the outer product of a vector and x: dense when A was given dense, on
    A's pattern when sparse."""

    def __init__(self, handle, pattern, x, dense):
        super().__init__(handle)
        self._pattern = pattern
        self._x = x
        self._dense = dense

    def _dense_matrix_jacobian(self, name):
        _require_dense_size(self._x.size ** 3, name)
        return np.einsum("ij,k->ijk", self._handle.jacobian("q"), self._x)

    def _matrix_gradient(self, left):
        import scipy.sparse
        if self._dense:
            return np.outer(left, self._x)
        pattern = self._pattern.tocoo()
        return scipy.sparse.csc_matrix(
            (left[pattern.row] * self._x[pattern.col], (pattern.row, pattern.col)),
            shape=pattern.shape)


def _pattern_of(A, dense):
    import scipy.sparse
    return scipy.sparse.csc_matrix(A) if dense else A


class LinearSensitivity(_MatrixDataSensitivity):
    """Derivatives of an LCP / box MLCP solution z with respect to its data (q, M, lower,
    upper), by implicit differentiation of its active set (docs/derivatives.md).

    jacobian(name): the dense Jacobian of z: n x n for "q", "lower", "upper"; for "M", n x n x n
    (dz_i / dM_jk) when M was given dense, n x nnz(M) (M's nonzeros in CSC order) when sparse.
    jvp(q=, M=, lower=, upper=): dz for a perturbation of the data. vjp(g): the gradients of
    <g, z> as a dict {"q", "M", "lower", "upper"} ("M" dense, or scipy.sparse on M's pattern).
    degenerate: the indices where the solution map has a kink (at a bound with w_i = 0).
    """

    def __init__(self, M, q, lower, upper, z, dense, degenerate_side):
        n = q.size
        lower = np.zeros(n) if lower is None else lower
        upper = np.full(n, np.inf) if upper is None else upper
        pattern = _pattern_of(M, dense)
        z = np.array(z, dtype=float)
        super().__init__(_ncpkit._linear_sensitivity(pattern, q, lower, upper, z,
                                                     degenerate_side), pattern, z, dense)

    def jacobian(self, name):
        if name == "M" and self._dense:
            return self._dense_matrix_jacobian("M")
        return self._handle.jacobian(name)

    def jvp(self, q=None, M=None, lower=None, upper=None):
        n = self._x.size
        return self._handle.jvp(_or_empty(vector("q", q, n)), _or_empty(vector("lower", lower, n)),
                                _or_empty(vector("upper", upper, n)), _matrix_tangent("M", M, n))

    def vjp(self, g):
        dq, dl, du, left = self._handle.vjp(vector("g", g, self._x.size, required=True))
        return {"q": dq, "M": self._matrix_gradient(left), "lower": dl, "upper": du}


class McpSensitivity(_Sensitivity):
    """Derivatives of an MCP solution z: jacobian("F" | "lower" | "upper") (n x n; "F": with
    respect to an additive change of F at fixed z), jvp(F=, lower=, upper=), vjp(g) (a dict of
    the gradients of <g, z>: "F", "lower", "upper"), degenerate (docs/derivatives.md)."""

    def jacobian(self, name):
        return self._handle.jacobian(name)

    def jvp(self, F=None, lower=None, upper=None):
        return self._handle.jvp(*[_or_empty(vector(name, v)) for name, v in
                                  (("F", F), ("lower", lower), ("upper", upper))])

    def vjp(self, g):
        dF, dl, du = self._handle.vjp(vector("g", g, required=True))
        return {"F": dF, "lower": dl, "upper": du}


class FrictionSensitivity(_MatrixDataSensitivity):
    """Derivatives of a frictional contact solution r with respect to W, q and mu, by implicit
    differentiation of its contact states (docs/derivatives.md).

    jacobian("q" | "mu" | "W"): 3n_c x 3n_c, 3n_c x n_c, and for "W" 3n_c x 3n_c x 3n_c when W
    was given dense (3n_c x nnz(W) when sparse). jvp(q=, mu=, W=), vjp(g) (a dict "q", "mu",
    "W"), states (per contact: apart, sticking, sliding, frictionless), degenerate (contacts).
    """

    def __init__(self, W, q, mu, r, dense, degenerate_side):
        pattern = _pattern_of(W, dense)
        r = np.array(r, dtype=float)
        super().__init__(_ncpkit._friction_sensitivity(pattern, q, mu, r, degenerate_side),
                         pattern, r, dense)

    @property
    def states(self):
        return list(self._handle.states())

    def jacobian(self, name):
        if name == "W" and self._dense:
            return self._dense_matrix_jacobian("W")
        return self._handle.jacobian(name)

    def jvp(self, q=None, mu=None, W=None):
        n = self._x.size
        return self._handle.jvp(_or_empty(vector("q", q, n)), _or_empty(vector("mu", mu)),
                                _matrix_tangent("W", W, n))

    def vjp(self, g):
        dq, dmu, left = self._handle.vjp(vector("g", g, self._x.size, required=True))
        return {"q": dq, "mu": dmu, "W": self._matrix_gradient(left)}
