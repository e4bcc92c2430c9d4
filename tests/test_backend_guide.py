"""docs/writing-a-backend.md stays true: its primitive list is the core's."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_guide_lists_the_primitives_the_core_declares():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "backend_guide_primitives.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
