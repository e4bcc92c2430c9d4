"""The type checker's view of coretorch: the generated stubs are current, and mypy (configured in
pyproject.toml: the core, every backend and the profiler) reports nothing."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_stubs_match_the_op_schemas():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "tensor_stub.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
