"""examples/train_digits.py --compile trains to exactly the eager run's weights (the last,
smaller batch is a second variant; the OneCycle schedule is read at each replay)."""

from __future__ import annotations

import io
import os
import sys
import warnings

import pytest

pytest.importorskip("sklearn")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import train_digits

import coretorch as ct


def test_train_digits_compiled_matches_eager(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    runs = {}
    for flag in ([], ["--compile"]):
        path = tmp_path / f"ck{len(flag)}.safetensors"
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            acc = train_digits.main(["--epochs", "1", "--checkpoint", str(path), *flag])
        runs[bool(flag)] = (acc, ct.load(path)["model"], [str(m.message) for m in w])
    assert runs[True][0] == runs[False][0]
    for k, v in runs[False][1].items():
        assert ct.equal(v, runs[True][1][k]), k
    compile_msgs = [m for m in runs[True][2] if "coretorch.compile" in m]
    expected = (
        "coretorch.compile: recording a new variant of step: argument 0: "
        "shape (32, 1, 8, 8) -> (29, 1, 8, 8)"
    )
    assert compile_msgs == [expected]
