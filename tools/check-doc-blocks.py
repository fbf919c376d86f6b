#!/usr/bin/python3
"""Runs the code blocks of README.md and docs/*.md, so that what they show works as written.

  tools/check-doc-blocks.py [--build build]

Per fenced block, by its language:
  python  run with Debian's /usr/bin/python3, the build's Python package on PYTHONPATH;
  sh      run with bash -e, unless the line before the fence is `<!-- not run: REASON -->`
          (installs, the whole test suite, benchmarks that take minutes);
  json    parsed; a scene file (one with "bodies") is also stepped for 0.05 s by `ncpkit simulate`;
  others  (cpp fragments, cmake, usage synopses without a language) are not run: the README's
          C++ example is examples/consumer/main.cc, built and run by the tests.
Each block runs in a scratch copy of the repository's layout (build/, scenes/, tools/, python/
linked; an empty docs/images/ so that figures are not overwritten; ../shared linked), with a
time limit of 300 s. Prints one line per block and exits 1 if any failed.

It also fails if a tracked file cites a source a reader of the repository does not have: the
papers are cited by author and year (docs/references.md), not by the names of working copies.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.+?)\s*-->\s*$")


def blocks(path):
    """(line, language, reason not to run or None, text) of every fenced block."""
    lines = path.read_text().split("\n")
    found, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        language, start = m.group(1), k
        before = lines[k - 1] if k > 0 else ""
        skip = NOT_RUN.match(before)
        k += 1
        body = []
        while k < len(lines) and not lines[k].startswith("```"):
            body.append(lines[k])
            k += 1
        found.append((start + 1, language, skip.group(1) if skip else None, "\n".join(body) + "\n"))
        k += 1
    return found


def scratch(build):
    """A folder laid out like the repository, with ../shared beside it."""
    top = pathlib.Path(tempfile.mkdtemp(prefix="ncpkit-docs-"))
    repo = top / "repo"
    repo.mkdir()
    for name in ("scenes", "tools", "python", "examples"):
        (repo / name).symlink_to(ROOT / name)
    (repo / "build").symlink_to(build)
    (repo / "docs" / "images").mkdir(parents=True)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (top / "shared").symlink_to(shared)
    return repo


def run(language, text, build):
    repo = scratch(build)
    try:
        return run_in(repo, language, text, build)
    finally:
        shutil.rmtree(repo.parent)


def run_in(repo, language, text, build):
    env = dict(os.environ, PYTHONPATH=str(build / "python"), MPLBACKEND="Agg")
    if language == "python":
        command = ["/usr/bin/python3", "-c", text]
    elif language == "sh":
        command = ["bash", "-e", "-c", text]
    elif language == "json":
        data = json.loads(text)
        if not (isinstance(data, dict) and "bodies" in data):
            return None
        (repo / "block.json").write_text(text)
        command = [str(build / "apps" / "ncpkit"), "simulate", "block.json", "--duration",
                   "0.05", "--quiet"]
    else:
        return None
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        return "exit %d: %s" % (done.returncode, (done.stderr or done.stdout).strip()[-600:])
    return ""


STRAY_CITATION = re.compile(r"\bseed 00\d|DESIGN\.md|shared/seeds")


def stray_citations():
    """(file, line) of every tracked text file's line citing a source outside the repository."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    names = listed.stdout.split() if listed.returncode == 0 else [
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and "build" not in p.parts]
    found = []
    for name in names:
        if name == "tools/check-doc-blocks.py":
            continue
        try:
            text = (ROOT / name).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for k, line in enumerate(text.split("\n")):
            if STRAY_CITATION.search(line):
                found.append("%s:%d" % (name, k + 1))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    ran = failed = 0
    for path in files:
        for line, language, reason, text in blocks(path):
            where = "%s:%d %s" % (path.relative_to(ROOT), line, language or "(plain)")
            if reason:
                print("skip  %s (not run: %s)" % (where, reason))
                continue
            try:
                outcome = run(language, text, build)
            except (ValueError, subprocess.TimeoutExpired) as e:
                outcome = str(e)
            if outcome is None:
                continue
            ran += 1
            if outcome:
                failed += 1
                print("FAIL  %s: %s" % (where, outcome))
            else:
                print("ok    %s" % where)
    print("documentation blocks: %d run, %d failed" % (ran, failed))
    stray = stray_citations()
    for where in stray:
        print("FAIL  %s cites a source outside the repository (cite it as docs/references.md does)"
              % where)
    return 1 if failed or ran == 0 or stray else 0


if __name__ == "__main__":
    sys.exit(main())
