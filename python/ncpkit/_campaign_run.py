"""One campaign run, in its own process (docs/campaigns.md "Runs and statuses").

`execute(run, program)` starts the ncpkit program on the run's case (`solve FILE` or
`simulate SCENE`, with --json), under the run's address-space limit and one BLAS thread, kills
its process group at the time limit, and returns the row to store: the status word and the
program: a Dask worker needs the package importable and the program at the same path. A crash
of the run is a row, never an exception here.
"""
import json
import os
import resource
import signal
import socket
import subprocess
import tempfile
import threading
import time

STATUSES = ("converged", "not_converged", "diverged", "timeout", "crash", "oom", "input_error")
# The solver's own status words (solvers/base/status.cc) as campaign statuses.
SOLVER_STATUS = {"converged": "converged", "max_iterations": "not_converged",
                 "failed": "not_converged", "numerical_failure": "diverged",
                 "invalid_input": "input_error"}
# What a run that ran out of its address space prints (the program's own message for
# std::bad_alloc, the C++ runtime's when it cannot be caught, the loader's, OpenBLAS's, a
# Python program's).
OUT_OF_MEMORY = ("out of memory", "std::bad_alloc", "failed to map segment",
                 "cannot allocate memory", "memory allocation failed", "memoryerror")
STDERR_TAIL = 2000
# Past the time limit the solver was given (solve --time-limit), the process gets this much
# longer to report before it is killed and recorded as a timeout.
GRACE_SECONDS = 2.0

# The runs' processes alive in this process, so that a driver that stops takes them with it.
_live = set()
_live_lock = threading.Lock()


def kill_all():
    """Kills every run's process group started here and not yet finished."""
    with _live_lock:
        for child in list(_live):
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                pass


def default_program():
    """The ncpkit program runs call: $NCPKIT_PROGRAM, else `ncpkit` on PATH."""
    program = os.environ.get("NCPKIT_PROGRAM")
    if program:
        return os.path.abspath(program) if os.sep in program else program
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, "ncpkit")
        if os.access(candidate, os.X_OK):
            return candidate
    return "ncpkit"


def _limits(memory_limit_mb):
    def apply():
        os.setsid()  # its own process group, killed whole at the time limit
        limit = memory_limit_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _scene_with(path, params, folder):
    """A copy of the scene with the run's parameters set (mu as the default contact law's)."""
    with open(path, encoding="utf-8") as f:
        scene = json.load(f)
    if "mu" in params:
        scene.setdefault("contact", {})["mu"] = params["mu"]
    for key in ("h", "tolerance", "max_iterations", "threads"):
        if key in params:
            scene[key] = params[key]
    copy = os.path.join(folder, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        json.dump(scene, f)
    return copy


def command(run, program, folder):
    """The argument list of the run."""
    params = run["params"]
    if run["kind"] == "file":
        words = [program, "solve", run["path"], "--solver", run["solver"], "--json",
                 "--time-limit", repr(run["time_limit"])]
        if "tolerance" in params:
            words += ["--tol", repr(params["tolerance"])]
        if "max_iterations" in params:
            words += ["--max-iter", str(params["max_iterations"])]
        if "seed" in params:
            words += ["--seed", str(params["seed"])]
        return words
    scene = run["path"]
    if any(k in params for k in ("mu", "h", "tolerance", "max_iterations", "threads")):
        scene = _scene_with(run["path"], params, folder)
    words = [program, "simulate", scene, "--solver", run["solver"], "--json", "--quiet"]
    if "duration" in params:
        words += ["--duration", repr(params["duration"])]
    return words


def _last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def _finite(x):
    return isinstance(x, (int, float)) and x == x and abs(x) != float("inf")


def _solved(row, result, kind):
    """Fills the row from the program's JSON line of a run it finished."""
    if kind == "file":
        row["solver_status"] = result.get("status")
        row["status"] = SOLVER_STATUS.get(row["solver_status"], "not_converged")
        row["iterations"] = result.get("iterations")
        row["residual"] = result.get("natural_residual")
        row["seconds"] = result.get("time_us", 0.0) * 1e-6
        if row["status"] != "converged":
            row["error"] = result.get("message", "")
        row["measures"] = {k: v for k, v in result.items()
                           if k in ("n", "factorizations", "siconos_error", "message")}
        return
    failed = result.get("failed_steps", 0)
    residual = result.get("max_natural_residual")
    row["solver_status"] = "solved" if failed == 0 else "failed_steps"
    row["status"] = "converged" if failed == 0 else (
        "diverged" if not _finite(residual) else "not_converged")
    row["iterations"] = result.get("max_iterations")
    row["residual"] = residual if _finite(residual) else None
    row["seconds"] = result.get("wall_seconds")
    if failed:
        row["error"] = "%d of %d steps failed; first: %s" % (
            failed, result.get("steps", 0), result.get("first_failure", ""))
    row["measures"] = {k: v for k, v in result.items()
                       if k not in ("scene", "solver", "first_failure")}


def _classify(row, returncode, stdout, stderr, timed_out, kind):
    tail = stderr[-STDERR_TAIL:]
    lowered = stderr.lower()
    out_of_memory = any(p in lowered for p in OUT_OF_MEMORY)
    result = _last_json(stdout)
    row["exit_code"] = returncode
    if timed_out:
        row["status"], row["error"] = "timeout", "killed after %.3g s" % row["time_limit"]
    elif returncode < 0:
        try:
            row["signal"] = signal.Signals(-returncode).name
        except ValueError:  # a real-time signal has no name
            row["signal"] = "signal %d" % -returncode
        row["status"] = "oom" if out_of_memory else "crash"
        row["error"] = "ended by %s" % row["signal"]
        row["stderr_tail"] = tail
    elif result is not None and "error" in result:
        row["status"] = "oom" if out_of_memory else "input_error"
        row["error"] = result["error"].split("\nusage:")[0]
    elif result is not None and returncode in (0, 1):
        _solved(row, result, kind)
    else:
        row["status"] = "oom" if out_of_memory else "crash"
        row["error"] = "exit status %d without a result line" % returncode
        row["stderr_tail"] = tail


def execute(run, program=None):
    """Runs one campaign run in its own process; returns its row (a dict)."""
    program = program or default_program()
    if os.sep in program:  # the run starts in a folder of its own
        program = os.path.abspath(program)
    row = {k: run[k] for k in ("key", "case", "kind", "case_sha256", "solver", "params",
                               "repetition", "time_limit", "memory_limit_mb")}
    row.update(status=None, solver_status=None, iterations=None, residual=None, seconds=None,
               error=None, exit_code=None, signal=None, stderr_tail=None, measures=None,
               host=socket.gethostname())
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="ncpkit-run-") as folder:
        words = command(run, program, folder)
        start = time.monotonic()
        timed_out = False
        try:
            child = subprocess.Popen(words, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env, cwd=folder,
                                     preexec_fn=_limits(run["memory_limit_mb"]))
        except OSError as e:
            row.update(status="crash", error="cannot start %s: %s" % (program, e.strerror),
                       wall_seconds=0.0)
            return row
        with _live_lock:
            _live.add(child)
        try:
            stdout, stderr = child.communicate(timeout=run["time_limit"] + GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(child.pid, signal.SIGKILL)
            stdout, stderr = child.communicate()
        except BaseException:  # the driver is stopping: take the run with it
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        finally:
            with _live_lock:
                _live.discard(child)
        row["wall_seconds"] = time.monotonic() - start
    _classify(row, child.returncode, stdout.decode("utf-8", "replace"),
              stderr.decode("utf-8", "replace"), timed_out, run["kind"])
    return row
