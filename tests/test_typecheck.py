"""The type checker's view of coretorch: the generated stubs are current, and mypy (configured in
pyproject.toml: the core, every backend and the profiler, defaults plus check_untyped_defs)
reports nothing. Its cache (.mypy_cache/) makes a rerun take seconds."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_stubs_match_the_op_schemas():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "tensor_stub.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_checks_every_distribution():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    packages = {
        p.parent.relative_to(ROOT).as_posix()
        for p in ROOT.glob("backends/*/coretorch_*/__init__.py")
    }
    assert packages and packages <= set(files), sorted(packages - set(files))
    assert {"coretorch", "profiler/coretorch_profiler"} <= set(files)


def test_mypy_reports_no_errors():
    pytest.importorskip("mypy", reason="mypy is a test dependency (make install installs it)")
    out = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 0 and not errors, (
        f"mypy found {len(errors)} error(s):\n" + (out.stdout + out.stderr)[-20000:]
    )
