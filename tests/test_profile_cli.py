"""The coretorch-profile command, end to end in a subprocess."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_profiler_trace import check_trace

SCRIPT = Path(sys.executable).parent / "coretorch-profile"


def run(args: list[str], cwd: Path, console_script: bool = False) -> subprocess.CompletedProcess:
    cmd = [str(SCRIPT)] if console_script else [sys.executable, "-m", "coretorch_profiler"]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run(cmd + args, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def write(tmp: Path, name: str, body: str) -> Path:
    p = tmp / name
    p.write_text(textwrap.dedent(body))
    return p


OK = """
    import sys
    import coretorch as ct
    from coretorch_profiler import record_function
    with record_function("work"):
        x = ct.zeros(4, 4) + 1
        y = x + x
    print("device", y.device, "args", sys.argv[1:])
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""

FAILING = """
    import coretorch as ct

    def step():
        x = ct.zeros(3) + 2
        raise ValueError("boom in the script")

    step()
"""


def test_console_script_is_installed(tmp_path):
    if not SCRIPT.exists():
        pytest.fail(f"{SCRIPT} missing: install the profiler with pip install -e profiler")
    r = run(["--version"], tmp_path, console_script=True)
    assert r.returncode == 0 and r.stdout.startswith("coretorch-profile 0.2.0 (coretorch ")


def test_runs_script_prints_table_writes_trace_and_propagates_exit_code(tmp_path):
    write(tmp_path, "ok.py", OK)
    r = run(
        [
            "--record-shapes",
            "--memory",
            "--flops",
            "--sort",
            "self_cpu_time_total",
            "-o",
            "out.json",
            "ok.py",
            "3",
            "--not-ours",
        ],
        tmp_path,
    )
    assert r.returncode == 3, r.stderr
    assert "device cpu args ['3', '--not-ours']" in r.stdout
    for col in ("Self CPU %", "CPU total", "# of Calls", "Input Shapes", "CPU Mem", "FLOPs"):
        assert col in r.stdout
    assert "aten::add" in r.stdout and "work" in r.stdout and "Peak" in r.stdout
    assert "Trace written to out.json" in r.stdout
    doc = json.loads((tmp_path / "out.json").read_text())
    by_ph = check_trace(doc)
    assert {e["name"] for e in by_ph["X"]} >= {"work", "aten::add"}
    assert by_ph.get("C")  # --memory: counter track


def test_failing_script_still_writes_trace_and_table_then_traceback(tmp_path):
    write(tmp_path, "bad.py", FAILING)
    r = run(["-o", "t.json.gz", "bad.py"], tmp_path)
    assert r.returncode == 1
    assert "aten::add" in r.stdout and "Trace written to t.json.gz" in r.stdout
    assert "Traceback (most recent call last)" in r.stderr
    assert 'bad.py", line 8, in <module>' in r.stderr
    assert "ValueError: boom in the script" in r.stderr
    assert "runpy" not in r.stderr and "cli.py" not in r.stderr  # the user's frames only
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        check_trace(json.load(f))


def in_process(args: list[str], cwd: Path, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of coretorch-profile run in this process: for the errors
    found before the program would run."""
    from coretorch_profiler.cli import main

    saved = os.getcwd()
    os.chdir(cwd)
    try:
        try:
            code = main(args)
        except SystemExit as e:  # argparse's errors
            code = e.code
    finally:
        os.chdir(saved)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_missing_script_is_a_one_line_error(tmp_path, capsys):
    code, out, err = in_process(["nothere.py"], tmp_path, capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "coretorch-profile: error: can't open file 'nothere.py': No such file or directory"
    ]
    code, out, err = in_process(["-m", "no_such_module_xyz"], tmp_path, capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1


def test_module_mode_device_and_schedule(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    write(
        pkg,
        "train.py",
        """
        import sys
        import coretorch as ct
        import coretorch_profiler
        print("argv", sys.argv[1:])
        for i in range(6):
            x = ct.zeros(i + 1) + 1
            coretorch_profiler.step()
        print("device", x.device)
    """,
    )
    r = run(
        [
            "--device",
            "meta",
            "--schedule",
            "1,1,2",
            "--record-shapes",
            "-m",
            "mypkg.train",
            "a",
            "-b",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "argv ['a', '-b']" in r.stdout and "device meta" in r.stdout
    doc = json.loads((tmp_path / "trace.json").read_text())
    xs = check_trace(doc)["X"]
    assert sorted(e["name"] for e in xs if e["name"].startswith("ProfilerStep")) == [
        "ProfilerStep#2",
        "ProfilerStep#3",
    ]
    assert [e["args"]["Input Dims"][0] for e in xs if e["name"] == "aten::add"] == [[3], [4]]


def test_bad_options(tmp_path, capsys):
    write(tmp_path, "ok.py", OK)
    for args, says in (
        (["--schedule", "1,2", "ok.py"], "--schedule"),
        (["--sort", "nope", "ok.py"], "invalid choice"),
        (["--device", "nosuchdevice", "ok.py"], "--device"),
        ([], "no script"),
    ):
        code, out, err = in_process(args, tmp_path, capsys)
        assert code == 2 and says in err and "device cpu" not in out


def test_detect_anomaly_option(tmp_path):
    write(
        tmp_path,
        "nan.py",
        """
        import coretorch as ct
        x = ct.tensor([1.0, 0.0])
        y = x.log()
        print("not reached")
    """,
    )
    r = run(["--detect-anomaly", "nan.py"], tmp_path)
    if "Could not run 'aten::log'" in r.stderr:
        pytest.skip("cpu log kernel not available yet")
    assert r.returncode == 1 and "not reached" not in r.stdout
    assert "aten::log returned inf values" in r.stderr and "nan.py:4" in r.stderr
    assert "y = x.log()" in r.stderr
    check_trace(json.loads((tmp_path / "trace.json").read_text()))


TRAIN = """
    import sys
    import coretorch as ct
    import coretorch.nn as nn
    import coretorch.nn.functional as F

    def train(steps):
        ct.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        opt = ct.optim.SGD(model.parameters(), lr=0.1)
        x, y = ct.randn(4, 8), ct.randint(0, 2, (4,))
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

    train(int(sys.argv[1]))
"""


def test_output_path_is_checked_before_the_program_runs(tmp_path, capsys):
    write(tmp_path, "ok.py", OK)
    code, out, err = in_process(["-o", "/nonexistent/t.json", "ok.py"], tmp_path, capsys)
    assert code == 2 and "device" not in out  # the program never ran
    assert err.strip() == (
        "coretorch-profile: error: --output: cannot write the trace to "
        "'/nonexistent/t.json': the folder '/nonexistent' does not exist"
    )
    code, out, err = in_process(["--html", str(tmp_path), "ok.py"], tmp_path, capsys)
    assert code == 2 and "is a directory" in err


def test_the_programs_status_survives_an_output_that_fails_late(tmp_path):
    (tmp_path / "out").mkdir()
    write(
        tmp_path,
        "rm.py",
        """
        import shutil, sys
        import coretorch as ct
        ct.ones(2) + 1
        shutil.rmtree(sys.argv[1])
        raise ValueError("the program's own error")
    """,
    )
    r = run(["-o", "out/t.json", "rm.py", str(tmp_path / "out")], tmp_path)
    assert r.returncode == 1
    err = r.stderr
    assert "writing the results failed" in err and "out/t.json" in err
    assert "ValueError: the program's own error" in err and 'rm.py", line 6' in err
    assert err.rstrip().endswith("the program exited with status 1")


def test_schedule_counts_optimizer_steps_and_stacks_end_at_the_script(tmp_path):
    write(tmp_path, "train.py", TRAIN)
    r = run(
        [
            "--schedule",
            "2,1,3",
            "--with-stack",
            "--with-modules",
            "--html",
            "r.html",
            "--stacks",
            "s.folded",
            "train.py",
            "8",
        ],
        tmp_path,
        console_script=True,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "trace.json").read_text())
    xs = check_trace(doc)["X"]
    assert sorted(e["name"] for e in xs if e["name"].startswith("ProfilerStep#")) == [
        "ProfilerStep#3",
        "ProfilerStep#4",
        "ProfilerStep#5",
    ]
    stacks = [e["args"]["Call stack"].split(";") for e in xs if "Call stack" in e["args"]]
    assert stacks and all(s[-1].endswith("): <module>") and "train.py" in s[-1] for s in stacks)
    assert "nn.Module: 0 (backward)" in {e["name"] for e in xs}
    assert "Module" in r.stdout and "Report written to r.html" in r.stdout
    page = (tmp_path / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script src=" not in page
    folded = (tmp_path / "s.folded").read_text().splitlines()
    assert folded and all(ln.startswith("ProfilerStep*;") for ln in folded)


def test_anomaly_traceback_shows_only_the_users_frames(tmp_path):
    write(
        tmp_path,
        "nan.py",
        """
        import coretorch as ct

        def f(x):
            return x.log()

        f(ct.tensor([1.0, 0.0]))
    """,
    )
    r = run(["--detect-anomaly", "nan.py"], tmp_path)
    assert r.returncode == 1
    tb = r.stderr[r.stderr.index("Traceback") :]
    files = [ln.split('"')[1] for ln in tb.splitlines() if ln.strip().startswith('File "')]
    assert [os.path.basename(f) for f in files] == ["nan.py", "nan.py"]
    assert "AnomalyError: Anomaly detected: aten::log returned inf" in tb


def test_diff_command_and_its_exit_status(tmp_path, capsys):
    from coretorch_profiler.cli import main

    write(tmp_path, "train.py", TRAIN)
    assert run(["-o", "a.json", "train.py", "3"], tmp_path).returncode == 0
    slower = json.loads((tmp_path / "a.json").read_text())
    for e in slower["traceEvents"]:  # every slice of b twice as long
        if e.get("ph") == "X":
            e["ts"], e["dur"] = 2 * e["ts"], 2 * e["dur"]
    (tmp_path / "b.json").write_text(json.dumps(slower))
    r = run(["diff", "a.json", "b.json", "--row-limit", "5"], tmp_path)
    assert r.returncode == 0 and "b vs a (per step)" in r.stdout and "Change %" in r.stdout
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert main(["diff", a, b, "--fail-if-slower", "10%"]) == 1
    assert "b is 100.0% slower than a (allowed: 10%)" in capsys.readouterr().err
    assert main(["diff", b, a, "--fail-if-slower", "10"]) == 0
    assert main(["diff", a, str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
