"""docs/compatibility.md is what `make compat-docs` generates now (regenerate it after adding or
removing public names)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compatibility.md"


def _installed(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_compatibility_doc_is_current(tmp_path):
    torch_version = _installed("torch")
    if torch_version is None:
        pytest.skip("PyTorch is not installed: it is the reference the table is read from")
    recorded = re.search(r"as of PyTorch (\S+)", DOC.read_text()).group(1)
    if torch_version.split("+")[0] != recorded:
        pytest.skip(f"the table was made against PyTorch {recorded}, {torch_version} is installed")
    if importlib.util.find_spec("tensorboard") is None:
        pytest.skip("coretorch.utils.tensorboard needs the tensorboard package to import")
    out = tmp_path / "compatibility.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORETORCH_")}
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compat_docs.py"), "-o", str(out)],
        check=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert out.read_text() == DOC.read_text(), (
        "docs/compatibility.md is out of date: run `make compat-docs` and commit the result"
    )


def test_doc_lists_every_namespace_with_its_counts():
    sys.path.insert(0, str(ROOT / "tools"))
    from compat_docs import NAMESPACES

    text = DOC.read_text()
    for path, _ in NAMESPACES:
        assert f"\n### {path}\n" in text, path
    rows = re.findall(r"^\| \[`(\S+)`\].*\| (\d+) \| (\d+) \| (\d+) \| (\d+%|-) \|$", text, re.M)
    assert len(rows) == len(NAMESPACES)
    for path, total, have, missing, _ in rows:
        assert int(total) == int(have) + int(missing), path
