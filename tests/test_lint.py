"""The repository is clean under ruff, with the configuration in pyproject.toml ([tool.ruff]): the
linter reports nothing and the formatter would change no file. .pre-commit-config.yaml runs the same
two checks before each commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess:
    pytest.importorskip("ruff")  # installed by `make install` (the docs build uses it too)
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_check_finds_nothing():
    r = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert r.returncode == 0, (
        f"`ruff check .` found (`ruff check --fix .` fixes those marked [*]):\n{r.stdout}{r.stderr}"
    )


def test_ruff_format_changes_nothing():
    r = _ruff("format", "--no-cache", "--check", "--output-format", "concise", ".")
    assert r.returncode == 0, (
        f"`ruff format .` would reformat these files (run it and commit):\n{r.stdout}{r.stderr}"
    )
