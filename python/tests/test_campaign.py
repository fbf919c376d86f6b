"""Campaigns (ncpkit.campaign, docs/campaigns.md): the file's checks, runs isolated with their
statuses, the store, resuming after an interrupted driver, and a Dask cluster on loopback."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import ncpkit
from ncpkit import campaign

PACKAGE = os.path.dirname(os.path.dirname(ncpkit.__file__))  # <build>/python, or site-packages


def _program():
    """The build tree's program beside its package, or the installed one of its prefix
    (<prefix>/lib/pythonX.Y/dist-packages/ncpkit)."""
    built = os.path.normpath(os.path.join(PACKAGE, "..", "apps", "ncpkit"))
    installed = os.path.normpath(os.path.join(PACKAGE, "..", "..", "..", "bin", "ncpkit"))
    return built if os.path.exists(built) else installed


PROGRAM = _program()
SHARED = os.environ.get("NCPKIT_SHARED_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
LCP_DIR = os.path.join(SHARED, "data", "lcp")
SOURCE = os.environ.get("NCPKIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

needs_shared = pytest.mark.skipif(not os.path.isdir(LCP_DIR), reason="no shared data")


@pytest.fixture(autouse=True)
def program(monkeypatch):
    monkeypatch.setenv("NCPKIT_PROGRAM", PROGRAM)
    return PROGRAM


def write(folder, name, text):
    path = os.path.join(str(folder), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def lcp_campaign(folder, repetitions=2, name="lcps", solvers='"lemke", "fb-newton"',
                 extra=""):
    return write(folder, "c.toml", """
name = "%s"
[cases]
files = ["%s/lcp_*.dat"]
[solvers]
names = [%s]
[grid]
tolerance = [1e-8, 1e-10]
[run]
repetitions = %d
time_limit = 30
%s""" % (name, LCP_DIR, solvers, repetitions, extra))


def rows(db):
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute("SELECT * FROM runs")]


@pytest.mark.parametrize("text, key", [
    ('name = "x"\n[cases]\nfiles = ["nothing/*.dat"]\n[solvers]\nnames = ["lemke"]',
     "cases.files[0]"),
    ('name = "x"\ncolour = 1', "unknown key 'colour'"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["nsgs"]',
     "solvers.names[0]"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]\n'
     '[grid]\nmu = [0.1]', "grid.mu"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]\n'
     '[grid]\ntolerance = [1e-6, -1]', "grid.tolerance[1]"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]\n'
     '[grid]\nsteps = [1]', "grid: unknown key 'steps'"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]\n'
     '[run]\ntime_limit = "long"', "run.time_limit"),
    ('name = "x"\n[cases]\nfiles = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]\n'
     '[run]\nrepeats = 3', "run: unknown key 'repeats'"),
    ('name = "x"\n[cases]\nscenes = ["%s/lcp_mmc.dat"]\n[solvers]\nnames = ["lemke"]',
     "cases.scenes[0]"),
    ('name = "x"\n[cases]\nfiles = ["%s/CASES.md"]\n[solvers]\nnames = ["lemke"]',
     "cases.files[0]"),
    ('name = \n', "not a TOML file"),
    ('[cases]\nfiles = ["%s/lcp_mmc.dat"]', "name:"),
])
@needs_shared
def test_a_bad_campaign_file_names_its_key(tmp_path, text, key):
    path = write(tmp_path, "bad.toml", text.replace("%s", LCP_DIR))
    with pytest.raises(campaign.CampaignError, match=key.replace("[", r"\[").replace("]", r"\]")):
        campaign.load(path)


@needs_shared
def test_every_run_is_stored_once_and_a_rerun_submits_none(tmp_path):
    c = campaign.load(lcp_campaign(tmp_path))
    files = len([f for f in os.listdir(LCP_DIR) if f.startswith("lcp_") and f.endswith(".dat")])
    # Identical files run once.
    expected = (files - len(c.notes)) * 2 * 2 * 2
    db = str(tmp_path / "r.sqlite")
    first = campaign.run(c, db, workers=2, progress=None)
    assert first["runs"] == expected and first["submitted"] == expected
    stored = rows(db)
    assert len(stored) == expected and len({r["key"] for r in stored}) == expected
    assert {r["status"] for r in stored} <= set(campaign.STATUSES)
    # Lemke solves these LCPs (its expected failures are the tests' own, not the campaign's);
    # every row carries the solver's figures and the parameters it ran with.
    for r in stored:
        assert json.loads(r["params"])["tolerance"] in (1e-8, 1e-10)
        assert r["wall_seconds"] > 0 and r["repetition"] in (1, 2)
        if r["status"] == "converged":
            assert r["iterations"] is not None and r["residual"] <= json.loads(
                r["params"])["tolerance"]
    again = campaign.run(campaign.load(lcp_campaign(tmp_path)), db, progress=None)
    assert again["submitted"] == 0 and again["stored_before"] == expected
    with sqlite3.connect(db) as con:
        meta = con.execute('SELECT campaign, campaign_sha256, version, "commit", host, cpu, '
                           "runs_submitted FROM metadata ORDER BY session").fetchall()
    assert len(meta) == 2 and meta[0][0] == "lcps" and meta[1][6] == 0
    assert all(m[1] and m[2] and m[3] and m[4] and m[5] for m in meta)


@pytest.mark.skipif(not os.path.isdir(os.path.join(SOURCE, "campaigns")),
                    reason="no source tree")
def test_the_shipped_campaign_files_load():
    # The docs' tables come from these files: a scene renamed or a variant gone breaks them.
    names = sorted(n for n in os.listdir(os.path.join(SOURCE, "campaigns"))
                   if n.endswith(".toml"))
    assert "scenes.toml" in names and "variants.toml" in names
    for name in names:
        if name == "fclib.toml" and not os.path.isdir(os.path.join(SHARED, "data", "fclib")):
            continue
        c = campaign.load(os.path.join(SOURCE, "campaigns", name))
        assert c.runs(), name


@needs_shared
def test_a_dry_run_counts_the_runs_and_writes_nothing(tmp_path, capsys):
    path = lcp_campaign(tmp_path, repetitions=1)
    c = campaign.load(path)
    db = str(tmp_path / "d.sqlite")
    assert campaign.main(["run", path, "--db", db, "--dry-run", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    total = len(c.runs())
    assert "%d runs" % total in out and "0 stored" in out and "%d to run" % total in out
    assert "lemke" in out and "fb-newton" in out and not os.path.exists(db)
    # Each run to its 30 s limit and the 2 s grace, two at a time.
    assert campaign.plan(c, db, 2)["most_seconds"] == total * 32.0 / 2
    campaign.run(c, db, progress=None)
    stored = campaign.plan(c, db, 1)
    assert stored["stored"] == total and stored["to_run"] == 0 and stored["by_solver"] == {}
    assert campaign.plan(c, db, 1, rerun=["converged"])["to_run"] == sum(
        1 for r in rows(db) if r["status"] == "converged")
    assert campaign.main(["run", path, "--db", db, "--dry-run", "--rerun", "later"]) == 2
    assert campaign.main(["run", path, "--db", path, "--dry-run"]) == 2  # not a store
    # A store the run would refuse, the dry run refuses too, and leaves it as it was.
    other = campaign.load(lcp_campaign(tmp_path, repetitions=1, name="others"))
    before = os.path.getmtime(db), os.path.getsize(db)
    with pytest.raises(campaign.StoreError, match="holds the runs of campaign 'lcps'"):
        campaign.plan(other, db)
    assert (os.path.getmtime(db), os.path.getsize(db)) == before


@needs_shared
def test_statuses_to_rerun_are_run_again(tmp_path):
    db = str(tmp_path / "r.sqlite")
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1, solvers='"pgs"'))
    first = campaign.run(c, db, progress=None)
    refused = first["statuses"].get("input_error", 0)
    assert refused > 0  # PGS refuses the LCPs with a zero on the diagonal
    again = campaign.run(c, db, rerun=["input_error", "crash"], progress=None)
    assert again["submitted"] == refused
    assert len(rows(db)) == first["runs"]


@needs_shared
def test_a_store_of_another_campaign_or_program_is_refused(tmp_path):
    db = str(tmp_path / "r.sqlite")
    campaign.run(campaign.load(lcp_campaign(tmp_path, repetitions=1, solvers='"lemke"')), db,
                 progress=None)
    other = campaign.load(lcp_campaign(tmp_path, repetitions=1, solvers='"lemke"', name="b"))
    with pytest.raises(campaign.StoreError, match="holds the runs of campaign 'lcps'"):
        campaign.run(other, db, progress=None)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE metadata SET \"commit\" = 'an-older-one'")
    same = campaign.load(lcp_campaign(tmp_path, repetitions=2, solvers='"lemke"'))
    with pytest.raises(campaign.StoreError, match="another commit"):
        campaign.run(same, db, progress=None)
    mixed = campaign.run(same, db, mix=True, progress=None)
    assert mixed["stored_before"] == mixed["runs"] // 2


def wrapper(folder):
    """A program that aborts on a case named *abort*, exceeds its memory limit on *hog*, and is
    the real program otherwise."""
    return write(folder, "program.sh", """#!/bin/sh
case "$2" in
  *abort*) echo "about to abort" >&2; kill -ABRT $$ ;;
  *hog*) exec %s -c "x = bytearray(1 << 34)" ;;
esac
exec %s "$@"
""" % (sys.executable, PROGRAM))


@needs_shared
def test_a_crash_and_a_run_out_of_memory_are_recorded_and_the_campaign_goes_on(tmp_path,
                                                                                 monkeypatch):
    program = wrapper(tmp_path)
    os.chmod(program, 0o755)
    monkeypatch.setenv("NCPKIT_PROGRAM", program)
    cases = tmp_path / "cases"
    cases.mkdir()
    mmc = open(os.path.join(LCP_DIR, "lcp_mmc.dat")).read()
    for name in ("lcp_abort.dat", "lcp_hog.dat", "lcp_fine.dat"):
        # Distinct contents: the store keys runs by their file's content.
        write(cases, name, mmc + "\n" * (len(name) % 7 + 1) + "# %s\n" % name)
    c = campaign.load(write(tmp_path, "c.toml", """
name = "faults"
[cases]
files = ["cases/*.dat"]
[solvers]
names = ["lemke"]
[run]
memory_limit_mb = 256
"""))
    db = str(tmp_path / "r.sqlite")
    result = campaign.run(c, db, progress=None)
    by_case = {os.path.basename(r["case"]): r for r in rows(db)}
    assert result["submitted"] == 3 and len(by_case) == 3
    assert by_case["lcp_abort.dat"]["status"] == "crash"
    assert by_case["lcp_abort.dat"]["signal"] == "SIGABRT"
    assert "about to abort" in by_case["lcp_abort.dat"]["stderr_tail"]
    assert by_case["lcp_hog.dat"]["status"] == "oom"
    assert by_case["lcp_fine.dat"]["status"] == "converged"


@needs_shared
def test_the_memory_limit_applies_to_the_program_itself(tmp_path):
    # 64 MB of address space is less than the program's libraries take to load.
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1, solvers='"lemke"',
                                   extra="memory_limit_mb = 64\n"))
    db = str(tmp_path / "r.sqlite")
    result = campaign.run(c, db, progress=None)
    assert result["statuses"] == {"oom": result["runs"]}


def test_a_run_ended_by_a_signal_without_a_name_is_a_crash():
    from ncpkit._campaign_run import _classify
    row = {"time_limit": 1.0}
    _classify(row, -40, "", "", False, "file")
    assert row["status"] == "crash" and row["signal"] == "signal 40"


def test_a_run_past_its_time_limit_is_a_timeout(tmp_path, monkeypatch):
    program = write(tmp_path, "slow.sh", "#!/bin/sh\nsleep 30\n")
    os.chmod(program, 0o755)
    run = {"key": "k", "case": "x.dat", "path": str(tmp_path / "x.dat"), "kind": "file",
           "case_sha256": "0", "solver": "lemke", "params": {}, "repetition": 1,
           "time_limit": 0.5, "memory_limit_mb": 256}
    from ncpkit._campaign_run import execute
    start = time.monotonic()
    row = execute(run, program)
    assert row["status"] == "timeout" and time.monotonic() - start < 10


def test_scene_runs_take_the_grid(tmp_path):
    scenes = os.path.join(SOURCE, "scenes")
    c = campaign.load(write(tmp_path, "s.toml", """
name = "scenes"
[cases]
scenes = ["%s/sliding_cube.json", "%s/engine/stack50.json"]
[solvers]
names = ["fb-newton", "cone/nsgs"]
[grid]
mu = [0.1, 0.5]
duration = [0.1]
""" % (scenes, scenes)))
    db = str(tmp_path / "s.sqlite")
    result = campaign.run(c, db, progress=None)
    assert result["runs"] == 4 and result["statuses"] == {"converged": 4}
    stored = rows(db)
    for r in stored:
        measures = json.loads(r["measures"])
        assert measures["steps"] == 10 and measures["failed_steps"] == 0
    # The sliding cube decelerates by mu g: the friction coefficient reached the run.
    cube = {json.loads(r["params"])["mu"]: r for r in stored if "sliding" in r["case"]}
    assert set(cube) == {0.1, 0.5}


def test_every_variant_means_those_the_scene_takes(tmp_path):
    # The quasistatic fence scene refuses qp-lcp (an unactuated body without regularization):
    # "*" leaves it out, and naming it for that scene alone is an error saying why.
    fence = os.path.join(SOURCE, "scenes", "fence_particle.json")
    c = campaign.load(write(tmp_path, "f.toml", """
name = "fence"
[cases]
scenes = ["%s"]
[solvers]
names = ["*"]
""" % fence))
    solvers = {r["solver"] for r in c.runs()}
    assert solvers and not any(s.startswith("qp-lcp/") for s in solvers)
    assert "dlc/lemke" in solvers
    with pytest.raises(campaign.CampaignError, match="regularization"):
        campaign.load(write(tmp_path, "g.toml", """
name = "fence"
[cases]
scenes = ["%s"]
[solvers]
names = ["qp-lcp/lemke"]
""" % fence))


@needs_shared
def test_an_interrupted_driver_resumes_with_only_the_missing_runs(tmp_path):
    # 80 runs of some 70 ms each, one at a time: the driver is stopped after 10, seconds before
    # it could end on its own.
    path = lcp_campaign(tmp_path, repetitions=1)
    db = str(tmp_path / "r.sqlite")
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    command = [sys.executable, "-m", "ncpkit.campaign", "run", path, "--db", db, "--workers",
               "1", "--quiet"]
    driver = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.05)
        if os.path.exists(db):
            try:
                stored = len(rows(db))
            except sqlite3.OperationalError:
                continue
            if stored >= 10:
                break
    assert driver.poll() is None, "the campaign ended before it could be interrupted"
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    kept = {r["key"] for r in rows(db)}
    total = campaign.load(path).runs()
    assert 10 <= len(kept) < len(total)
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    final = rows(db)
    assert len(final) == len(total) == len({r["key"] for r in final})
    assert "%d run now" % (len(total) - len(kept)) in second.stdout


@needs_shared
def test_the_command_line_program_runs_a_campaign(tmp_path):
    path = lcp_campaign(tmp_path, repetitions=1, solvers='"lemke"')
    db = str(tmp_path / "r.sqlite")
    env = {k: v for k, v in os.environ.items() if k not in ("NCPKIT_PROGRAM", "PYTHONPATH")}
    done = subprocess.run([PROGRAM, "campaign", "run", path, "--db", db], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "to run" in done.stderr and "at a time" in done.stderr
    with sqlite3.connect(db) as con:
        program = con.execute("SELECT program FROM metadata").fetchone()[0]
    assert os.path.realpath(program) == os.path.realpath(PROGRAM)
    bad = subprocess.run([PROGRAM, "campaign", "run", path + ".missing", "--db", db], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "cannot be read" in bad.stderr
    # The program prints its own usage for --help after other commands; a campaign's is the
    # campaign program's.
    helped = subprocess.run([PROGRAM, "campaign", "run", "--help"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ncpkit campaign run")


def local_cluster():
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    host="127.0.0.1", dashboard_address=None)


def comparable(stored):
    return sorted((r["key"], r["status"], r["iterations"]) for r in stored)


@needs_shared
def test_a_dask_cluster_gives_the_rows_of_the_local_pool(tmp_path):
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1))
    local, remote = str(tmp_path / "local.sqlite"), str(tmp_path / "dask.sqlite")
    campaign.run(c, local, workers=2, progress=None)
    with local_cluster() as cluster:
        result = campaign.run(c, remote, scheduler=cluster.scheduler_address, progress=None)
    assert result["lost"] == []
    assert comparable(rows(local)) == comparable(rows(remote))


@needs_shared
def test_a_worker_killed_mid_campaign_loses_nothing(tmp_path):
    # 80 runs; the worker is killed after 10 are stored.
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1))
    db = str(tmp_path / "r.sqlite")
    from distributed import Client
    with local_cluster() as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        outcome = {}
        driver = threading.Thread(target=lambda: outcome.update(
            campaign.run(c, db, scheduler=cluster.scheduler_address, progress=None)))
        driver.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(0.05)
            try:
                if os.path.exists(db) and len(rows(db)) >= 10:
                    break
            except sqlite3.OperationalError:
                pass
        at_kill = len(rows(db))
        os.kill(pids[0], signal.SIGKILL)
        driver.join(timeout=300)
    assert not driver.is_alive()
    assert at_kill < len(c.runs()), "the campaign ended before the worker was killed"
    final = rows(db)
    assert outcome["lost"] == [] and outcome["submitted"] == len(c.runs())
    assert len(final) == len(c.runs()) == len({r["key"] for r in final})


def test_performance_profile_by_hand():
    from ncpkit._campaign_report import performance_profile, shifted_geometric_mean

    def row(case, solver, status, seconds, repetition=1):
        return {"case": case, "params": {}, "solver": solver, "status": status,
                "seconds": seconds, "iterations": 1, "repetition": repetition}
    rows = [row("p", "a", "converged", 1.0), row("p", "b", "converged", 4.0),
            row("q", "a", "converged", 2.0), row("q", "a", "converged", 6.0, 2),
            row("q", "b", "converged", 2.0),
            row("r", "a", "timeout", None), row("r", "b", "converged", 3.0)]
    profile = performance_profile(rows, "seconds")
    # a: p best, q median 4 against 2 (log2 2 = 1), r failed; b: p 4x, q best, r best.
    assert profile["a"] == [0.0, 1.0, float("inf")]
    assert profile["b"] == [0.0, 0.0, 2.0]
    assert abs(shifted_geometric_mean([1.0, 4.0], 0.0) - 2.0) < 1e-12


def test_the_case_table_by_hand():
    from ncpkit._campaign_report import _same_columns, _short_cases, case_table

    def scene(solver, status, steps, failed, median_us, repetition=1):
        return {"case": "../scenes/engine/pile.json", "kind": "scene", "params": {"mu": 0.5},
                "solver": solver, "status": status, "seconds": 1.0, "iterations": 3,
                "residual": 1e-7, "repetition": repetition,
                "measures": {"steps": steps, "failed_steps": failed,
                             "median_us_per_step": median_us, "max_us_per_step": 10 * median_us,
                             "median_contacts": 800, "max_penetration": 2e-3}}
    rows = [scene("a", "converged", 200, 0, 100.0), scene("a", "converged", 200, 0, 300.0, 2),
            scene("b", "not_converged", 200, 172, 5e5),
            dict(scene("c", "timeout", 0, 0, 0.0), measures={}),
            {"case": "../p.dat", "kind": "file", "params": {"mu": 0.5}, "solver": "a",
             "status": "converged", "seconds": 2e-3, "iterations": 7, "residual": 1e-9,
             "repetition": 1, "measures": {}}]
    table = _same_columns(case_table(rows))
    by = {(e["case"], e["solver"]): e for e in table}
    a = by[("../scenes/engine/pile.json", "a")]
    assert a["runs"] == 2 and a["status"] == "converged" and a["failed steps"] == "0 of 200"
    assert a["median µs a step"] == 200.0 and a["max µs a step"] == 2000.0
    assert a["params"] == "mu=0.5" and a["median_seconds"] == ""
    b = by[("../scenes/engine/pile.json", "b")]
    assert b["status"] == "not_converged" and b["failed steps"] == "172 of 200"
    c = by[("../scenes/engine/pile.json", "c")]
    assert c["status"] == "timeout" and c["failed steps"] == "—"
    f = by[("../p.dat", "a")]
    assert f["median_seconds"] == 2e-3 and f["median_iterations"] == 7 and f["failed steps"] == ""
    assert {e["case"] for e in _short_cases(table)} == {"scenes/engine/pile.json", "p.dat"}
    # Globs of absolute and relative paths in one campaign: nothing in common, nothing cut.
    mixed = [dict(table[0], case="/data/a.dat"), dict(table[1], case="b.dat")]
    assert [e["case"] for e in _short_cases(mixed)] == ["/data/a.dat", "b.dat"]


@needs_shared
def test_the_report_writes_tables_profiles_and_a_page(tmp_path, monkeypatch):
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1))
    db = str(tmp_path / "r.sqlite")
    campaign.run(c, db, progress=None)
    out = tmp_path / "report"
    before = os.path.getmtime(db), os.path.getsize(db)
    assert campaign.main(["report", db, "-o", str(out)]) == 0
    assert (os.path.getmtime(db), os.path.getsize(db)) == before  # read, not written
    names = set(os.listdir(out))
    assert {"solvers.md", "solvers.csv", "cases.md", "cases.csv", "runs.csv", "profile_time.png",
            "profile_iterations.png", "sweep_tolerance.png", "report.html"} <= names
    table = (out / "solvers.md").read_text()
    assert "| lemke |" in table and "| fb-newton |" in table
    # One row a (case, parameters, solver), the cases' common folder left out.
    cases = (out / "cases.md").read_text().splitlines()
    assert len(cases) == 2 + len(c.runs())
    assert cases[2].startswith("| lcp_") and "| tolerance=1e-" in cases[2]
    missing = str(tmp_path / "missing.sqlite")
    assert campaign.main(["report", missing, "-o", str(out)]) == 2
    assert not os.path.exists(missing)
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "lemke" in page
    with open(out / "runs.csv") as f:
        assert sum(1 for _ in f) == len(c.runs()) + 1
    assert "The first" not in page
    # A page of a very large campaign keeps its first cases; the CSV all of them.
    from ncpkit import _campaign_report
    monkeypatch.setattr(_campaign_report, "HTML_CASES", 2)
    assert campaign.main(["report", db, "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "The first 2 of %d; cases.csv holds them all." % len(c.runs()) in page


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "data", "fclib")),
                    reason="no shared data")
def test_solves_and_simulations_release_the_gil():
    # While a solve runs in C++, another Python thread keeps running: a GIL held through the
    # call would stop that thread for the whole solve (its longest pause, measured here).
    W, q, mu = ncpkit.read_friction_problem(
        os.path.join(SHARED, "data", "fclib", "RockPile", "RockPile_tob1.hdf5"))
    scene = ncpkit.load_scene(os.path.join(SOURCE, "scenes", "engine", "stack50.json"))
    calls = {"solve": lambda: ncpkit.solve_friction(W, q, mu, solver="nsgs", tolerance=1e-7),
             "simulate": lambda: scene.simulate(solver="cone/nsgs", duration=10.0)}
    for name, call in calls.items():
        pause = [0.0]
        stop = threading.Event()

        def count():
            last = time.monotonic()
            while not stop.is_set():
                now = time.monotonic()
                pause[0] = max(pause[0], now - last)
                last = now

        counter = threading.Thread(target=count)
        counter.start()
        time.sleep(0.05)
        pause[0] = 0.0
        start = time.monotonic()
        call()
        elapsed = time.monotonic() - start
        stop.set()
        counter.join()
        assert elapsed > 0.2, "%s too short to tell (%.3f s)" % (name, elapsed)
        assert pause[0] < elapsed / 2, "%s held the GIL: the other thread paused %.3f of " \
            "%.3f s" % (name, pause[0], elapsed)


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "data", "fclib")),
                    reason="no shared data")
def test_the_seed_reaches_the_shuffled_solver(tmp_path):
    c = campaign.load(write(tmp_path, "seeds.toml", """
name = "seeds"
[cases]
files = ["%s/data/fclib/Capsules/Capsules-i101-404.hdf5"]
[solvers]
names = ["nsgs-shuffled"]
[grid]
tolerance = [1e-6]
seed = [1, 2, 3]
""" % SHARED))
    db = str(tmp_path / "r.sqlite")
    result = campaign.run(c, db, progress=None)
    assert result["statuses"] == {"converged": 3}
    by_seed = {json.loads(r["params"])["seed"]: r["iterations"] for r in rows(db)}
    assert set(by_seed) == {1, 2, 3}
    # Another random order sweeps to the tolerance in another number of sweeps.
    assert len(set(by_seed.values())) > 1, by_seed


@needs_shared
def test_a_relative_program_path_is_the_callers(tmp_path, monkeypatch):
    # Runs start in folders of their own: NCPKIT_PROGRAM relative to where the driver started.
    monkeypatch.chdir(os.path.dirname(PROGRAM))
    monkeypatch.setenv("NCPKIT_PROGRAM", os.path.join(".", os.path.basename(PROGRAM)))
    c = campaign.load(lcp_campaign(tmp_path, repetitions=1, solvers='"lemke"'))
    result = campaign.run(c, str(tmp_path / "r.sqlite"), progress=None)
    assert "crash" not in result["statuses"], result["statuses"]
