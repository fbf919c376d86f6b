#!/usr/bin/env python3
"""Shares of an explicit step's time by stage, from a `perf report` of self time per function.

  perf record -o pile.data build/bench/ncpkit_bench \\
      --benchmark_filter='BM_Engine/engine/pile200.json/cone/nsgs-velocity@5/' --benchmark_min_time=3
  perf report -i pile.data --no-children --percent-limit 0.05 --stdio -g none > pile.txt
  tools/perf_stages.py pile.txt

Each function goes to the first stage whose patterns its name contains (STAGES, in order): the
solver's sweeps, its error checks, and the step's fixed cost — the contact search, the frame
rows, posing the problem, the solver's set-up, the impulses and free velocities — and "other"
(the stepper's remaining bookkeeping, the kernel). Prints each stage's share of the samples
listed, the fixed cost's in all, and the largest functions left in "other".
"""

import argparse
import re
import signal
import sys

# (stage, patterns, part of the step's fixed cost)
STAGES = [
    ("sweeps", ["Sweep<", "PolishDirection", "SlidingSolves", "SolveSingleContact",
                "StickManifold", "ManifoldMayStick", "FactorizeManifold", "SolvesManifold",
                "InsideCones", "SlidingCandidate", "SlidingDirections", "ComplexSchur",
                "Hessenberg", "MayStickIsland", "StickImpulses", "ProjectionSteps"], False),
    ("error checks", ["FrictionErrorsOf", "ContactVelocities", "NaturalMap",
                      "DescribeFrictionPoint"], False),
    ("contact search", ["SeparatingAxis", "BoundsMeet", "FaceContact", "ClipAxis",
                        "pair<double, int>", "BroadPhase", "ReducePolygon", "AddPairContacts",
                        "UniquePoints", "PlaneBox", "MatchPreviousContacts", "SearchPairs",
                        "FindContacts", "PatchPoints", "EdgeContact", "BoxBox", "pair<int, int>",
                        "Previous", "IslandFinder", "UpdateBounds", "GrowReaches", "Reach",
                        "Supports", "NewContactViolated"], True),
    ("frame rows", ["FrameRows", "TangentBasis", "NormalOffset"], True),
    ("posing", ["Assemble", "Order", "FiguresOf", "Finalize", "AddContactBlock", "AddBlock",
                "memmove", "memcpy", "range_insert", "Validate", "ConeModel::Solve"], True),
    ("solver set-up", ["MakeReady", "SetDiagonalBlock", "Prepare", "FindManifolds",
                       "FindScalarBlocks", "ContactVelocity", "::Velocity",
                       "VelocityGaussSeidel::Solve"], True),
    ("impulses, free velocities", ["ApplyImpulses", "ImpulseInFrame", "ComputeFreeVelocities"],
     True),
]

# "  12.54%  ncpkit_bench  ncpkit_bench  [.] ncpkit::VelocityGaussSeidel::Sweep<true>"
LINE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)%\s+\S+\s+\S+\s+\[.\]\s+(.*\S)\s*$")


def stage_of(name):
    for stage, patterns, _ in STAGES:
        if any(p in name for p in patterns):
            return stage
    return "other"


def shares(lines):
    """Per stage the percentage of the samples listed; and the functions left in "other"."""
    totals = {stage: 0.0 for stage, _, _ in STAGES}
    totals["other"] = 0.0
    others = []
    for line in lines:
        match = LINE.match(line)
        if not match:
            continue
        value, name = float(match.group(1)), match.group(2)
        stage = stage_of(name)
        totals[stage] += value
        if stage == "other":
            others.append((value, name))
    listed = sum(totals.values())
    if listed <= 0.0:
        raise ValueError("no function lines in the report (perf report --stdio -g none)")
    return {k: 100.0 * v / listed for k, v in totals.items()}, sorted(others, reverse=True)


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head`: end quietly, as other tools do
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="perf report --no-children --stdio -g none output")
    args = parser.parse_args(argv)
    try:
        with open(args.report, encoding="utf-8", errors="replace") as f:
            result, others = shares(f)
    except (OSError, ValueError) as e:
        print(f"perf_stages.py: {args.report}: {e}", file=sys.stderr)
        return 2
    for stage, share in result.items():
        print(f"{stage:28s} {share:5.1f} %")
    fixed = sum(result[stage] for stage, _, is_fixed in STAGES if is_fixed) + result["other"]
    print(f"{'fixed cost (all but sweeps and checks)':40s} {fixed:5.1f} %")
    for value, name in others[:5]:
        print(f"  other: {value:5.2f} % {name[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
