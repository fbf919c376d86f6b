"""The campaign store: one SQLite file, written by the driver alone (docs/campaigns.md "The
store").

Tables: `runs`, one row a run, keyed by the hash of (problem file content, solver, limits,
parameters, repetition); `metadata`, one row each time a driver ran the campaign on the file
(its session): the campaign file's hash, the program's version and commit, the host and its CPU.
"""
import json
import os
import pathlib
import platform
import socket
import sqlite3
import time

RUN_COLUMNS = (
    ("key", "TEXT PRIMARY KEY"), ("session", "INTEGER"), ("campaign", "TEXT"), ("case", "TEXT"),
    ("kind", "TEXT"), ("case_sha256", "TEXT"), ("solver", "TEXT"), ("params", "TEXT"),
    ("repetition", "INTEGER"), ("status", "TEXT"), ("solver_status", "TEXT"),
    ("iterations", "INTEGER"), ("residual", "REAL"), ("seconds", "REAL"),
    ("wall_seconds", "REAL"), ("error", "TEXT"), ("exit_code", "INTEGER"), ("signal", "TEXT"),
    ("stderr_tail", "TEXT"), ("measures", "TEXT"), ("time_limit", "REAL"),
    ("memory_limit_mb", "INTEGER"), ("host", "TEXT"), ("finished", "TEXT"))
METADATA_COLUMNS = (
    ("session", "INTEGER PRIMARY KEY AUTOINCREMENT"), ("started", "TEXT"), ("campaign", "TEXT"),
    ("campaign_file", "TEXT"), ("campaign_sha256", "TEXT"), ("version", "TEXT"),
    ("commit", "TEXT"), ("program", "TEXT"), ("host", "TEXT"), ("cpu", "TEXT"),
    ("scheduler", "TEXT"), ("workers", "INTEGER"), ("runs_submitted", "INTEGER"))
# What makes runs comparable: the same program (version and commit) on the same kind of CPU.
SETTINGS = ("version", "commit", "cpu")


class StoreError(ValueError):
    """A store that cannot take this campaign's runs (the message says why)."""


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _quoted(name):
    return '"%s"' % name


class Store:
    def __init__(self, path, read_only=False):
        """The store at `path`, created if missing; `read_only`: an existing store, opened
        without writing anything (a report, a dry run)."""
        self.path = path
        if read_only and not os.path.isfile(path):
            raise StoreError("%s: no such store" % path)
        try:
            if read_only:
                self.db = sqlite3.connect(pathlib.Path(os.path.abspath(path)).as_uri()
                                          + "?mode=ro", uri=True)
            else:
                self.db = sqlite3.connect(path)
                self._create()
            names = {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
        except sqlite3.DatabaseError as e:
            raise StoreError("%s: not a campaign store (%s)" % (path, e)) from None
        missing = [n for n, _ in RUN_COLUMNS if n not in names]
        if missing:
            raise StoreError("%s: its runs table has no %s: not a campaign store"
                             % (path, ", ".join(missing)))
        self.session = None

    def _create(self):
        # Write-ahead log without a sync at each commit: a row stored survives the driver
        # being killed (not a power cut, after which a rerun submits the lost runs again),
        # and storing costs tens of microseconds a row instead of a disk sync.
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS runs (%s)" % ", ".join(
            "%s %s" % (_quoted(n), t) for n, t in RUN_COLUMNS))
        self.db.execute("CREATE TABLE IF NOT EXISTS metadata (%s)" % ", ".join(
            "%s %s" % (_quoted(n), t) for n, t in METADATA_COLUMNS))
        self.db.commit()

    def check_settings(self, settings, campaign_name, mix):
        """Raises StoreError if the store holds runs of another campaign, program or CPU,
        unless `mix`."""
        for row in self.db.execute('SELECT campaign, version, "commit", cpu, host '
                                   "FROM metadata ORDER BY session"):
            old = dict(zip(("campaign",) + SETTINGS + ("host",), row))
            if old["campaign"] != campaign_name:
                raise StoreError("%s holds the runs of campaign '%s', not '%s' (another --db)"
                                 % (self.path, old["campaign"], campaign_name))
            differ = [k for k in SETTINGS if old[k] != settings[k]]
            if differ and not mix:
                raise StoreError(
                    "%s holds runs made with another %s (%s; now %s): they are not mixed with "
                    "these unless asked (--mix), or use another --db"
                    % (self.path, " and ".join(differ),
                       ", ".join("%s %s" % (k, old[k]) for k in differ),
                       ", ".join("%s %s" % (k, settings[k]) for k in differ)))

    def begin(self, values):
        values = dict(values, started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                      host=socket.gethostname(), cpu=cpu_model())
        names = [n for n, _ in METADATA_COLUMNS if n in values]
        cursor = self.db.execute(
            "INSERT INTO metadata (%s) VALUES (%s)" % (", ".join(_quoted(n) for n in names),
                                                       ", ".join("?" * len(names))),
            [values[n] for n in names])
        self.db.commit()
        self.session = cursor.lastrowid

    def statuses(self):
        """key -> status of every stored run."""
        return dict(self.db.execute("SELECT key, status FROM runs"))

    def put(self, row, campaign_name):
        row = dict(row, session=self.session, campaign=campaign_name,
                   finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        for key in ("params", "measures"):
            if row.get(key) is not None and not isinstance(row[key], str):
                row[key] = json.dumps(row[key], sort_keys=True)
        names = [n for n, _ in RUN_COLUMNS]
        self.db.execute(
            "INSERT OR REPLACE INTO runs (%s) VALUES (%s)"
            % (", ".join(_quoted(n) for n in names), ", ".join("?" * len(names))),
            [row.get(n) for n in names])
        self.db.commit()

    def rows(self):
        """Every run as a dict (params and measures decoded)."""
        cursor = self.db.execute("SELECT * FROM runs ORDER BY \"case\", solver, params, repetition")
        names = [d[0] for d in cursor.description]
        out = []
        for values in cursor:
            row = dict(zip(names, values))
            for key in ("params", "measures"):
                row[key] = json.loads(row[key]) if row[key] else {}
            out.append(row)
        return out

    def metadata(self):
        cursor = self.db.execute("SELECT * FROM metadata ORDER BY session")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, v)) for v in cursor]

    def close(self):
        self.db.close()
