"""Campaign files (docs/campaigns.md): read with tomllib, checked key by key, expanded into runs.

A run is a plain dict (it crosses process and machine boundaries to the workers):
key, case, path, kind ("file" or "scene"), solver, params, repetition, time_limit,
memory_limit_mb. Every error names the key it is about.
"""
import glob
import hashlib
import itertools
import json
import math
import os
import tomllib

TOP_KEYS = ("name", "cases", "solvers", "grid", "run")
CASE_KEYS = ("files", "scenes")
SOLVER_KEYS = ("names",)
RUN_KEYS = ("repetitions", "time_limit", "memory_limit_mb", "workers")
# Grid keys: the cases they apply to, and a check of one value (None: fine, else why not).
GRID_KEYS = {
    "tolerance": (("file", "scene"), lambda v: _positive(v)),
    "max_iterations": (("file", "scene"), lambda v: _integer(v, 1, 10**7)),
    "mu": (("scene",), lambda v: _number(v, 0.0)),
    "h": (("scene",), lambda v: _positive(v)),
    "duration": (("scene",), lambda v: _positive(v)),
    "threads": (("scene",), lambda v: _integer(v, 1, 256)),
    "seed": (("file",), lambda v: _integer(v, 1, 2**31 - 1)),
}
RUN_DEFAULTS = {"repetitions": 1, "time_limit": 60.0, "memory_limit_mb": 2048, "workers": 0}
# File kinds by how `ncpkit solve` tells them: FCLib .hdf5 and Siconos FC3D .dat files are
# frictional contact problems, other Siconos .dat files LCPs or MLCPs.
PROBLEM_SUFFIXES = (".hdf5", ".h5", ".dat")


class CampaignError(ValueError):
    """A campaign file that cannot be run; the message names the key."""


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _positive(v):
    return None if _is_number(v) and v > 0 else "expected a positive number"


def _number(v, least):
    return None if _is_number(v) and v >= least else "expected a number >= %g" % least


def _integer(v, least, most):
    ok = isinstance(v, int) and not isinstance(v, bool) and least <= v <= most
    return None if ok else "expected an integer in [%d, %d]" % (least, most)


def _check_keys(table, allowed, where):
    for key in table:
        if key not in allowed:
            raise CampaignError("%s: unknown key '%s' (expected %s)"
                                % (where, key, ", ".join(allowed)))


def _table(document, key):
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise CampaignError("%s: expected a table ([%s])" % (key, key))
    return value


def _string_list(table, key, where):
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CampaignError("%s.%s: expected a list of non-empty strings" % (where, key))
    return value


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_kind(path):
    """'friction' or 'linear' for a problem file, as `ncpkit solve` reads it; None for a file
    it does not read."""
    name = os.path.basename(path).lower()
    if name.endswith((".hdf5", ".h5")):
        return "friction"
    if name.endswith(".dat"):
        return "friction" if "fc3d" in name else "linear"
    return None


class Case:
    """One problem file or scene: its name as the campaign file's glob found it, its absolute
    path, its content's hash and what takes it."""

    def __init__(self, name, path, kind, problem, scene=None):
        self.name, self.path, self.kind, self.problem = name, path, kind, problem
        self.sha256 = _sha256(path)
        self.scene = scene
        self.default_variants = list(scene.default_variants) if scene is not None else []


class Campaign:
    """A checked campaign file. `runs()` lists every run it asks for."""

    def __init__(self, path, document, text):
        self.path = os.path.abspath(path)
        self.directory = os.path.dirname(self.path)
        self.sha256 = hashlib.sha256(text).hexdigest()
        _check_keys(document, TOP_KEYS, "campaign file")
        self.name = document.get("name")
        if not isinstance(self.name, str) or not self.name.strip():
            raise CampaignError("name: expected a non-empty string (name = \"...\")")
        self.notes = []
        self.cases = self._read_cases(_table(document, "cases"))
        solvers = _table(document, "solvers")
        _check_keys(solvers, SOLVER_KEYS, "solvers")
        self.solvers = _string_list(solvers, "names", "solvers")
        if not self.solvers:
            raise CampaignError("solvers.names: expected at least one solver name (or \"*\": "
                                "every solver that takes the case)")
        self.grid = self._read_grid(_table(document, "grid"))
        self.limits = self._read_run(_table(document, "run"))
        self._check_solvers()

    def _read_cases(self, table):
        _check_keys(table, CASE_KEYS, "cases")
        cases, seen = [], {}
        for key in CASE_KEYS:
            for index, pattern in enumerate(_string_list(table, key, "cases")):
                where = "cases.%s[%d]" % (key, index)
                full = pattern if os.path.isabs(pattern) else os.path.join(self.directory, pattern)
                matches = sorted(p for p in glob.glob(full, recursive=True) if os.path.isfile(p))
                if not matches:
                    raise CampaignError("%s: '%s' matches no file (paths are relative to the "
                                        "campaign file's folder, %s)" % (where, pattern,
                                                                         self.directory))
                for match in matches:
                    name = match if os.path.isabs(pattern) else os.path.relpath(match,
                                                                                self.directory)
                    case = self._read_case(key, where, name, match)
                    if case.sha256 in seen:
                        self.notes.append("%s has the same content as %s: run once"
                                          % (case.name, seen[case.sha256]))
                        continue
                    seen[case.sha256] = case.name
                    cases.append(case)
        if not cases:
            raise CampaignError("cases: expected files = [...] or scenes = [...]")
        return cases

    def _read_case(self, key, where, name, path):
        if key == "files":
            kind = file_kind(path)
            if kind is None:
                raise CampaignError("%s: %s is not a problem file ncpkit solve reads on its own "
                                    "(%s)" % (where, name, ", ".join(PROBLEM_SUFFIXES)))
            return Case(name, os.path.abspath(path), "file", kind)
        from . import InputError, load_scene
        try:
            scene = load_scene(path)
        except InputError as e:
            raise CampaignError("%s: %s: %s" % (where, name, e)) from None
        return Case(name, os.path.abspath(path), "scene", None, scene)

    def _read_grid(self, table):
        grid = {}
        kinds = {c.kind for c in self.cases}
        for key, values in table.items():
            if key not in GRID_KEYS:
                raise CampaignError("grid: unknown key '%s' (expected %s)"
                                    % (key, ", ".join(GRID_KEYS)))
            applies, check = GRID_KEYS[key]
            if not kinds & set(applies):
                raise CampaignError("grid.%s: applies to %s, and the campaign has none"
                                    % (key, " and ".join(a + "s" for a in applies)))
            if not isinstance(values, list):
                values = [values]
            if not values:
                raise CampaignError("grid.%s: expected at least one value" % key)
            for index, value in enumerate(values):
                why = check(value)
                if why:
                    raise CampaignError("grid.%s[%d]: %s, got %r" % (key, index, why, value))
            if len(set(values)) != len(values):
                raise CampaignError("grid.%s: a value is listed twice" % key)
            grid[key] = values
        return grid

    @staticmethod
    def _read_run(table):
        _check_keys(table, RUN_KEYS, "run")
        limits = dict(RUN_DEFAULTS)
        checks = {"repetitions": lambda v: _integer(v, 1, 1000),
                  "time_limit": _positive,
                  "memory_limit_mb": lambda v: _integer(v, 64, 1 << 24),
                  "workers": lambda v: _integer(v, 0, 4096)}
        for key, value in table.items():
            why = checks[key](value)
            if why:
                raise CampaignError("run.%s: %s, got %r" % (key, why, value))
            limits[key] = value
        limits["time_limit"] = float(limits["time_limit"])
        return limits

    def solvers_for(self, case):
        """The solver names of the campaign that take `case` ("*": every one that does)."""
        names = []
        for name in self.solvers:
            for solver in (self._every(case) if name == "*" else [name]):
                if solver not in names and _takes(case, solver):
                    names.append(solver)
        return names

    @staticmethod
    def _every(case):
        from . import solver_names
        return solver_names(case.problem) if case.kind == "file" else case.default_variants

    def _check_solvers(self):
        for index, name in enumerate(self.solvers):
            if name != "*" and not any(_takes(c, name) for c in self.cases):
                raise CampaignError("solvers.names[%d]: no case takes '%s' (%s)"
                                    % (index, name, _why_not(self.cases, name)))

    def skipped_pairs(self):
        """How many (case, named solver) pairs are left out: the case does not take it."""
        named = [n for n in self.solvers if n != "*"]
        return sum(1 for c in self.cases for n in named if not _takes(c, n))

    def runs(self):
        """Every run: case x solver x grid point x repetition."""
        out = []
        for case in self.cases:
            keys = [k for k in self.grid if case.kind in GRID_KEYS[k][0]]
            for solver in self.solvers_for(case):
                for point in itertools.product(*(self.grid[k] for k in keys)):
                    params = dict(zip(keys, point))
                    for repetition in range(1, self.limits["repetitions"] + 1):
                        out.append(self._run(case, solver, params, repetition))
        return out

    def _run(self, case, solver, params, repetition):
        limits = {"time_limit": self.limits["time_limit"],
                  "memory_limit_mb": self.limits["memory_limit_mb"]}
        identity = json.dumps({"content": case.sha256, "kind": case.kind, "solver": solver,
                               "params": params, "repetition": repetition, "limits": limits},
                              sort_keys=True)
        return {"key": hashlib.sha256(identity.encode()).hexdigest(), "case": case.name,
                "path": case.path, "kind": case.kind, "case_sha256": case.sha256,
                "solver": solver, "params": params, "repetition": repetition, **limits}


def _takes(case, solver):
    if case.kind == "file":
        from . import solver_names
        return solver in solver_names(case.problem)
    return _scene_variant_error(case, solver) == ""


def _scene_variant_error(case, solver):
    """Why the scene takes no such variant (its stepper's grammar or its own settings), or ''."""
    from ._ncpkit import _scene_variant_error as why
    return why(case.scene._handle, solver)


def _why_not(cases, name):
    for case in cases:
        if case.kind == "scene":
            return "%s: %s" % (case.name, _scene_variant_error(case, name))
    from . import solver_names
    kinds = sorted({c.problem for c in cases})
    return "; ".join("%s problems take %s" % (k, ", ".join(solver_names(k))) for k in kinds)


def load(path):
    """The campaign of a TOML file; raises CampaignError naming the key that is wrong."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise CampaignError("%s: cannot be read (%s)" % (path, e.strerror)) from None
    try:
        document = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise CampaignError("%s: not a TOML file: %s" % (path, e)) from None
    return Campaign(path, document, text)
