"""ncpkit: complementarity solvers and rigid-body contact simulation.

Solvers come from the C++ solver registry by name (``solvers()`` lists them) and take the
registry's options as keyword arguments (``tolerance``, ``max_iterations``, ``warm_start``,
``record_history``, ``project_onto_bounds``, ``start_acceptance``, ``equilibrate``, ``seed``,
``time_limit_seconds``)::

    z, summary = ncpkit.solve_lcp(M, q, solver="lemke")             # numpy or scipy.sparse M
    z, summary = ncpkit.solve_lcp(M, q, lower=l, upper=u)           # a box MLCP
    z, summary, sens = ncpkit.solve_lcp(M, q, sensitivities=True)   # sens.jacobian("q"), sens.vjp(g)
    z, summary = ncpkit.solve_mcp(F, J, lower, upper, start=x0)     # F, J: Python callables
    M, q, lower, upper = ncpkit.read_problem("lcp_deudeu.dat")      # the program's readers
    W, q, mu = ncpkit.read_friction_problem("RockPile_tob1.hdf5")   # FCLib / Siconos FC3D
    r, summary = ncpkit.solve_friction(W, q, mu, solver="auto", tolerance=1e-6)
    traj = ncpkit.simulate("scenes/sliding_cube.json", duration=0.5)
    traj["cube.x"], traj.time, traj.stats["failed_steps"]

Every error of the input (a bad matrix, an unknown solver or option, a malformed scene file)
raises ``ncpkit.InputError`` (a ``ValueError``) with the message the command-line program
prints.
"""
import os

import numpy as np

from ._ncpkit import InputError, Summary, read_problem, read_friction_problem
from ._ncpkit import scene_directory as _source_scene_directory
from ._ncpkit import solvers as _registry
from . import _ncpkit
from ._checks import vector as _vector
from ._sensitivity import FrictionSensitivity, LinearSensitivity, McpSensitivity


class SolveError(RuntimeError):
    """A result asked of a solve that did not converge (its summary's message says how far)."""

__all__ = ["InputError", "SolveError", "Summary", "LinearSensitivity", "McpSensitivity",
           "FrictionSensitivity", "read_problem", "read_friction_problem", "Scene", "Trajectory", "solvers", "solver_names",
           "solve_lcp", "solve_mcp", "solve_friction", "load_scene", "parse_scene", "simulate",
           "scene_directory", "scene_path"]


def solvers():
    """The solver registry: a list of dicts, one a solver: name, description, the problem kinds
    it takes as booleans (linear, mixed, friction, global_friction) and their names (kinds)."""
    return _registry()


def solver_names(kind="linear"):
    """Names of the solvers that take ``kind``: "linear" (LCP / box MLCP), "mixed" (MCP),
    "friction" (3D frictional contact with Coulomb cones), "global_friction" (its global form, as
    the explicit stepper poses it) or "convex" (the convex contact model of a frictional contact
    problem, convex_newton.h: solve_friction takes them by name; their residual is that
    model's)."""
    if kind not in ("linear", "mixed", "friction", "global_friction", "convex"):
        raise InputError("kind must be 'linear', 'mixed', 'friction', 'global_friction' or "
                         "'convex', not %r" % (kind,))
    if kind == "convex":
        return [s["name"] for s in _registry() if s["convex_model"]]
    return [s["name"] for s in _registry() if s[kind] and not s["convex_model"]]


def _csc(name, M):
    """A scipy.sparse matrix as CSC of floats; refused when its index arrays do not fit its
    shape (scipy builds such matrices without a full check, and converting one would read and
    write out of bounds)."""
    try:
        if M.format in ("csr", "csc", "bsr"):
            M.check_format(full_check=True)
        elif M.format == "coo":
            for index, bound in ((np.asarray(M.row), M.shape[0]), (np.asarray(M.col), M.shape[1])):
                if index.size and (index.min() < 0 or index.max() >= bound):
                    raise ValueError("a row or column index is outside the %d x %d shape"
                                     % M.shape)
    except ValueError as e:
        raise InputError("%s is a malformed sparse matrix: %s" % (name, e)) from None
    return M.tocsc().astype(float)


def solve_lcp(M, q, lower=None, upper=None, solver="auto", start=None, sensitivities=False,
              degenerate_side="bound", **options):
    """Solves the LCP (or, with bounds, the box MLCP) w = M z + q.

    M: a square numpy array or scipy.sparse matrix; q: a vector. lower and upper default to 0
    and +inf. start (optional) warm-starts the solver. Returns (z, Summary); with
    sensitivities=True, (z, Summary, LinearSensitivity): the derivatives of z with respect to
    the data at the solution (degenerate_side: "bound" or "free", the one-sided derivative
    returned at a degenerate index; docs/derivatives.md).
    """
    q = _vector("q", q, required=True)
    lower = _vector("lower", lower, q.size)
    upper = _vector("upper", upper, q.size)
    start = _vector("start", start, q.size)
    if hasattr(M, "tocsc"):
        M = _csc("M", M)
        z, summary = _ncpkit._solve_sparse(M, q, lower, upper, solver, start, **options)
        dense = False
    else:
        M = np.asarray(M, dtype=float)
        if M.ndim != 2:
            raise InputError("M must be a matrix (2 dimensions), not %d" % M.ndim)
        z, summary = _ncpkit._solve_dense(M, q, lower, upper, solver, start, **options)
        dense = True
    if not sensitivities:
        return z, summary
    if not summary.solved:
        raise SolveError("no sensitivities: the solve did not converge (%s)" % summary.message)
    return z, summary, LinearSensitivity(M, q, lower, upper, z, dense, degenerate_side)


def solve_mcp(F, J, lower, upper, solver="auto", start=None, sensitivities=False,
              degenerate_side="bound", **options):
    """Solves the MCP: lower <= z <= upper complementary to F(z).

    F(z) returns a vector; J(z) its Jacobian, a scipy.sparse matrix (same pattern at every z) or
    a dense array. start: where the solve begins (default 0), projected onto the bounds.
    Returns (z, Summary). An exception raised by F or J is raised again after the solve. With
    sensitivities=True, (z, Summary, McpSensitivity): the derivatives of z with respect to an
    additive change of F (at fixed z) and to the bounds; for parameters theta of F,
    dz/dtheta = sens.jacobian("F") @ dF/dtheta (docs/derivatives.md).
    """
    lower = _vector("lower", lower, required=True)
    upper = _vector("upper", upper, lower.size, required=True)
    start = _vector("start", start, lower.size)
    z, summary = _ncpkit._solve_mcp(F, J, lower, upper, solver, start, **options)
    if not sensitivities:
        return z, summary
    if not summary.solved:
        raise SolveError("no sensitivities: the solve did not converge (%s)" % summary.message)
    return z, summary, McpSensitivity(
        _ncpkit._mcp_sensitivity(F, J, lower, upper, z, degenerate_side))


def solve_friction(W, q, mu, solver="auto", start=None, sensitivities=False,
                   degenerate_side="bound", **options):
    """Solves the 3D frictional contact problem u = W r + q with Coulomb cones (FCLib's local
    form): per contact [normal, tangent, tangent], mu one coefficient per contact.

    W: a scipy.sparse matrix or a numpy array (3 n_c x 3 n_c); start (optional) warm-starts the
    solver. The Summary's natural_residual is the FCLib error, siconos_error Siconos' measure.
    Returns (r, Summary); with sensitivities=True, (r, Summary, FrictionSensitivity): the
    derivatives of r with respect to W, q and mu (docs/derivatives.md).
    """
    q = _vector("q", q, required=True)
    mu = _vector("mu", mu, required=True)
    start = _vector("start", start, q.size)
    if hasattr(W, "tocsc"):
        W = _csc("W", W)
        r, summary = _ncpkit._solve_friction_sparse(W, q, mu, solver, start, **options)
        dense = False
    else:
        W = np.asarray(W, dtype=float)
        if W.ndim != 2:
            raise InputError("W must be a matrix (2 dimensions), not %d" % W.ndim)
        r, summary = _ncpkit._solve_friction_dense(W, q, mu, solver, start, **options)
        dense = True
    if not sensitivities:
        return r, summary
    if not summary.solved:
        raise SolveError("no sensitivities: the solve did not converge (%s)" % summary.message)
    return r, summary, FrictionSensitivity(W, q, mu, r, dense, degenerate_side)


def scene_directory():
    """The bundled scene files: $NCPKIT_SCENES, the package's own copy, or the source tree's."""
    if os.environ.get("NCPKIT_SCENES"):
        return os.environ["NCPKIT_SCENES"]
    packaged = os.path.join(os.path.dirname(__file__), "scenes")
    if os.path.isdir(packaged):
        return packaged
    return _source_scene_directory()


def scene_path(name):
    """The path of a bundled scene, e.g. scene_path("sliding_cube")."""
    if not name.endswith(".json"):
        name += ".json"
    return os.path.join(scene_directory(), name)


class Scene:
    """A scene file, read and checked. Attributes: name, description, stepper ("implicit" or
    "quasistatic"), duration, h, solver (the variant the file names), bodies, default_variants.
    """

    def __init__(self, handle, source):
        self._handle = handle
        self.source = source
        for key, value in _ncpkit._scene_info(handle).items():
            setattr(self, key, value)

    def __repr__(self):
        return "<ncpkit.Scene %s (%s, %g s, %s)>" % (self.name, self.stepper, self.duration,
                                                    self.solver)

    def simulate(self, solver=None, duration=None, max_steps=None, threads=None,
                 derivatives=False):
        """Steps the scene; see ncpkit.simulate."""
        return Trajectory(*_ncpkit._simulate(self._handle, solver, duration, max_steps, threads,
                                             derivatives))


def load_scene(path):
    """Reads a scene file (the JSON schema of the README's "Scene files"), or a MuJoCo MJCF
    model (.xml; docs/steppers.md, "MJCF files")."""
    return Scene(_ncpkit._load_scene(os.fspath(path)), os.fspath(path))


def parse_scene(text, source="<string>"):
    """A scene from the text of a scene file (MJCF if it starts with '<')."""
    return Scene(_ncpkit._parse_scene(text, source), source)


def simulate(scene, solver=None, duration=None, max_steps=None, threads=None,
             derivatives=False):
    """Steps a scene (a Scene or a file path) to its duration (or ``duration``) with its own
    solver variant (or ``solver``, e.g. "fb-newton-dense" or "qp-lcp/lemke"), its islands solved
    on the scene's ``threads`` (or ``threads``; the trajectory is the same for any number).
    ``derivatives=True`` keeps every step's derivative for Trajectory.gradient and
    Trajectory.jacobian (explicit scenes of every model, implicit scenes, quasistatic
    scenes of the qp, qp-lcp and dlc models; a step without one raises, saying why). Returns a
    Trajectory."""
    if not isinstance(scene, Scene):
        scene = load_scene(scene)
    return scene.simulate(solver=solver, duration=duration, max_steps=max_steps, threads=threads,
                          derivatives=derivatives)


class Trajectory:
    """A run's table, column by column, as the trajectory CSV has it: ``t``, per moving body
    ``<body>.x`` ... ``<body>.wz``, per contact pair ``<a>-<b>.<quantity>`` (NaN while the pair
    has no contact), ``solver.iterations``, ``solver.residual``, ``solver.time_us``, and for
    dynamic scenes ``energy`` and ``impulse``. ``solver.status`` holds text. ``stats``: the
    run's summary (steps, failed_steps, max_natural_residual, median_us_per_step, ...).
    """

    def __init__(self, names, columns, status, stats, layout, derivatives=None):
        self.names = list(names)
        self._columns = dict(zip(self.names, columns))
        self.status = list(status)
        self.stats = dict(stats)
        self.bodies = list(layout["bodies"])  # the moving bodies
        self.pairs = list(layout["pairs"])  # "a-b" for each pair that had contact
        self.pair_quantities = list(layout["pair_quantities"])  # e.g. pn, gap (implicit)
        self._derivatives = derivatives

    def __getitem__(self, name):
        if name == "solver.status":
            return self.status
        try:
            return self._columns[name]
        except KeyError:
            raise KeyError("no column %r; columns: %s" % (name, ", ".join(self.names))) from None

    def __contains__(self, name):
        return name in self._columns or name == "solver.status"

    def __len__(self):
        return len(self.status)

    @property
    def time(self):
        return self._columns["t"]

    def columns(self):
        """A plain dict of the columns (numpy arrays; solver.status a list of str)."""
        d = dict(self._columns)
        d["solver.status"] = list(self.status)
        return d

    def array(self):
        """The numeric columns as one 2-D array (rows = steps), in the order of ``names``."""
        return np.column_stack([self._columns[n] for n in self.names]) if self.names else \
            np.empty((0, 0))

    def _require_derivatives(self):
        if self._derivatives is None:
            raise InputError("this trajectory has no derivatives: simulate(..., derivatives=True)")
        return self._derivatives

    def wrt_names(self):
        """The names gradient() and jacobian() take in ``wrt``: the parameters ("h", "mu",
        "restitution", "mu(a,b)", "restitution(a,b)", "<body>.mass"), per moving body the start
        state's "<body>.position", "<body>.rotation" (a world-frame turn, rad), "<body>.velocity",
        "<body>.angular_velocity", and "<body>.impulse" (the impulse applied at each step); for
        quasistatic scenes per actuator its start position "<actuator>.q" and "<actuator>.q_cmd"
        (its commanded position at each step); for implicit scenes with a compliant layer that
        carries state, the start layer state "<a>-<b>.deflection", ".elastic_t", ".elastic_o",
        ".elastic_r" and the layer's coefficients ("stiffness", "damping",
        "tangential_stiffness", "tangential_damping")."""
        return list(self._require_derivatives().wrt_names())

    def state_columns(self):
        """The columns a loss may read: per moving body x, y, z, qw, ..., wz (quasistatic: to
        qz, and per actuator "<actuator>.q"; implicit scenes with a compliant layer that carries
        state also its "<a>-<b>.deflection", ".elastic_t", ".elastic_o", ".elastic_r", which a
        dict loss may weight but the table does not hold)."""
        return list(self._require_derivatives().state_columns())

    def gradient(self, loss, wrt=None, step=None):
        """The gradient of a scalar of the trajectory with respect to each name of ``wrt`` (a
        name or a list; default every name of wrt_names()), by one reverse pass through the steps'
        derivatives. ``loss``:
        - a state column's name, e.g. "cube.x": that column at row ``step`` (default the last);
        - a dict {column: dL/dcolumn} of arrays of one weight per row: the gradient of any loss
          of the columns whose derivatives you have;
        - a function of a dict of the state columns (numpy arrays, one entry per row) returning
          a float: its derivatives with respect to the columns it reads by central differences
          (2 calls per entry of each such column; exact to rounding for losses quadratic in
          the columns), then the reverse pass.
        Returns {name: float for a parameter or an actuator's start position, array (3,) for a
        start-state vector, array (steps, 6) for "<body>.impulse", array (steps,) for
        "<actuator>.q_cmd"}."""
        d = self._require_derivatives()
        if isinstance(wrt, str):
            wrt = [wrt]
        wrt = list(d.wrt_names()) if wrt is None else list(wrt)
        weights = self._loss_weights(d, loss, step)
        for name, w in weights.items():
            if not np.all(np.isfinite(w)):
                raise InputError("the loss's gradient with respect to %s is not finite" % name)
        values, undetermined, degenerate = d.gradient(weights, wrt)
        self.undetermined_steps = list(undetermined)
        self.degenerate_contacts = list(degenerate)
        return {name: (float(v[0, 0]) if v.shape == (1, 1) else
                       (v[:, 0].copy() if v.shape[1] == 1 else v))
                for name, v in values}

    def _loss_weights(self, d, loss, step):
        n = d.steps()
        if isinstance(loss, str):
            k = n - 1 if step is None else int(step)
            if k < 0:
                k += n
            if not 0 <= k < n:
                raise IndexError("step %s out of range for %d steps" % (step, n))
            w = np.zeros(n)
            w[k] = 1.0
            return {loss: w}
        if isinstance(loss, dict):
            return {name: np.asarray(w, dtype=float) for name, w in loss.items()}
        if callable(loss):
            return self._numeric_weights(d, loss)
        raise TypeError("loss must be a column name, a dict of column weights or a function")

    def _numeric_weights(self, d, loss):
        # The state columns the table holds (an implicit run's compliant-layer state is not one).
        names = [name for name in d.state_columns() if name in self._columns]
        columns = {name: np.array(self._columns[name], dtype=float) for name in names}
        columns["t"] = np.array(self._columns["t"])
        weights = {}
        for name in names:
            column = columns[name]
            step = 1e-6 * max(1.0, float(np.max(np.abs(column))) if column.size else 1.0)
            saved = column.copy()
            column += step
            base = float(loss(dict(columns)))
            column[:] = saved
            if base == float(loss(dict(columns))):
                continue  # the loss does not read this column
            w = np.zeros(column.size)
            for k in range(column.size):
                column[k] = saved[k] + step
                up = float(loss(dict(columns)))
                column[k] = saved[k] - step
                down = float(loss(dict(columns)))
                column[k] = saved[k]
                w[k] = (up - down) / (2.0 * step)
            weights[name] = w
        return weights

    def jacobian(self, columns, wrt=None):
        """Forward derivatives: for each name of ``wrt`` (parameters and start-state entries)
        and each state column of ``columns`` (a name or a list), the column's derivative at every
        row, by one chain of Jacobian-vector products per scalar. Returns {name: {column: array
        (steps,) for a parameter, (steps, 3) for a start-state vector}} (a single column: {name:
        array})."""
        d = self._require_derivatives()
        single = isinstance(columns, str)
        columns = [columns] if single else list(columns)
        if isinstance(wrt, str):
            wrt = [wrt]
        per_step = (".impulse", ".q_cmd")
        wrt = [n for n in d.wrt_names() if not n.endswith(per_step)] if wrt is None else list(wrt)
        values = d.column_jacobians(columns, wrt)
        result = {}
        for name, per_column in zip(wrt, values):
            arrays = {c: (m[:, 0].copy() if m.shape[1] == 1 else m)
                      for c, m in zip(columns, per_column)}
            result[name] = arrays[columns[0]] if single else arrays
        return result

    def step_modes(self, k):
        """Step k's derivative: (determined, contact modes 'a'/'s'/'l'/'f' per contact, the
        degenerate contacts)."""
        determined, modes, degenerate = self._require_derivatives().step_info(int(k))
        return bool(determined), str(modes), list(degenerate)

    def __repr__(self):
        return "<ncpkit.Trajectory %s, %d steps, %d failed>" % (
            self.stats.get("scene"), len(self), self.stats.get("failed_steps", 0))
