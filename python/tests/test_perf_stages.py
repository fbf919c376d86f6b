"""tools/perf_stages.py: a perf report's functions grouped into an explicit step's stages."""
import importlib.util
import os
import re
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "perf_stages.py")


def load_tool():
    spec = importlib.util.spec_from_file_location("perf_stages", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPORT = """# Samples: 1K of event 'cpu-clock:ppp'
#
    40.00%  ncpkit_bench  ncpkit_bench  [.] void ncpkit::VelocityGaussSeidel::Sweep<true>(ncpkit::GlobalFrictionContactProblem const&, int, bool, Eigen::Matrix<double, -1, 1, 0, -1, 1>*)
    10.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::internal::FrictionErrorsOf
    20.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::(anonymous namespace)::BestSeparatingAxis
     5.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::ExplicitStepper::FrameRowsOf
     5.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::internal::ConeModel::Assemble
     5.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::VelocityGaussSeidel::MakeReady
     5.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::internal::ExplicitContactModel::ApplyImpulses
     5.00%  ncpkit_bench  [kernel.kallsyms]  [k] __schedule
     5.00%  ncpkit_bench  ncpkit_bench  [.] ncpkit::SomethingElse
"""


def test_stages_add_up_and_each_function_goes_to_its_stage():
    tool = load_tool()
    result, others = tool.shares(REPORT.splitlines())
    assert abs(sum(result.values()) - 100.0) < 1e-9
    assert result["sweeps"] == 40.0
    assert result["error checks"] == 10.0
    assert result["contact search"] == 20.0
    assert result["frame rows"] == 5.0
    assert result["posing"] == 5.0
    assert result["solver set-up"] == 5.0
    assert result["impulses, free velocities"] == 5.0
    assert result["other"] == 10.0  # the kernel's and the unknown function
    assert [name for _, name in others] == ["ncpkit::SomethingElse", "__schedule"]


def test_the_command_prints_the_fixed_cost_and_refuses_a_file_without_functions(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    run = subprocess.run([sys.executable, TOOL, str(report)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # Fixed: contact search, frame rows, posing, set-up, impulses and other: 50 of 100.
    assert re.search(r"^fixed cost \(all but sweeps and checks\) +50\.0 %$", run.stdout, re.M)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    run = subprocess.run([sys.executable, TOOL, str(empty)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "no function lines" in run.stderr

