"""PyTorch programs as written (tests/programs/) run under ``python -m coretorch.compat`` and
print what they printed under PyTorch (tests/programs/expected/, recorded by
tests/programs/record_pytorch_outputs.py)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def _runs() -> dict:
    spec = importlib.util.spec_from_file_location(
        "record_pytorch_outputs", PROGRAMS / "record_pytorch_outputs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RUNS


RUNS = _runs()

_NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def run_compat(name: str, tmp: Path) -> str:
    args = [a.format(tmp=tmp) for a in RUNS[name]]
    cmd = [sys.executable, "-m", "coretorch.compat", str(PROGRAMS / f"{name}.py"), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORETORCH_")}
    env["PYTHONWARNINGS"] = "ignore"
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def assert_same_output(ours: str, theirs: str, rel: float) -> None:
    """Same lines; numbers equal within `rel` (float32 training), the rest verbatim."""
    a, b = ours.splitlines(), theirs.splitlines()
    assert len(a) == len(b), f"coretorch printed\n{ours}\nPyTorch printed\n{theirs}"
    for la, lb in zip(a, b):
        assert _NUMBER.sub("#", la) == _NUMBER.sub("#", lb), (la, lb)
        for x, y in zip(_NUMBER.findall(la), _NUMBER.findall(lb)):
            assert float(x) == pytest.approx(float(y), rel=rel, abs=2e-6), (la, lb)


def expected(name: str) -> str:
    return (PROGRAMS / "expected" / f"{name}.txt").read_text()


def test_mnist_shaped_script_trains_and_reloads_as_in_pytorch(tmp_path):
    ours = run_compat("mnist_cnn", tmp_path)
    assert "reloaded checkpoint matches: True" in ours
    assert_same_output(ours, expected("mnist_cnn"), rel=1e-5)


def test_legacy_style_script_prints_what_pytorch_printed(tmp_path):
    ours = run_compat("legacy_policy", tmp_path)
    assert ours.splitlines()[0] == "weight type: torch.FloatTensor"
    assert_same_output(ours, expected("legacy_policy"), rel=1e-5)


def test_tensorboard_script_writes_readable_event_files(tmp_path):
    pytest.importorskip(
        "tensorboard",
        reason="the tensorboard package is an optional extra (pip install tensorboard)",
    )
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ours = run_compat("tensorboard_regression", tmp_path)
    assert_same_output(ours, expected("tensorboard_regression"), rel=1e-5)
    acc = EventAccumulator(str(tmp_path / "runs"))
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss/train"] and tags["histograms"] == ["weight"]
    assert tags["images"] == ["inputs"] and tags["tensors"] == ["setup/text_summary"]
    scalars = acc.Scalars("loss/train")
    assert [e.step for e in scalars] == list(range(10))
    assert scalars[-1].value == pytest.approx(float(ours.split()[2]), abs=1e-6)
    hp = EventAccumulator(str(tmp_path / "runs" / "hparams"))
    hp.Reload()
    assert set(hp.PluginTagToContent("hparams")) == {
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
    }
