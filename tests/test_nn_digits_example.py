"""examples/train_digits.py: trains, checkpoints, and --resume continues exactly where an
interrupted run stopped."""

from __future__ import annotations

import io
import os
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import train_digits  # noqa: E402

import coretorch as ct  # noqa: E402


def _run(args, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    return train_digits.main(args)


def test_interrupted_run_resumes_to_the_same_result(tmp_path, monkeypatch):
    straight = tmp_path / "straight.safetensors"
    acc = _run(["--epochs", "2", "--checkpoint", str(straight)], monkeypatch)
    assert 0.5 < acc <= 1.0
    ck = ct.load(straight)
    assert ck["epoch"] == 1 and ck["epochs"] == 2 and set(ck) >= {"model", "optimizer", "scheduler"}

    # the same run, killed right after the first epoch's checkpoint was written
    resumed = tmp_path / "resumed.safetensors"
    real_save = ct.save

    def save_then_die(obj, path):
        real_save(obj, path)
        raise KeyboardInterrupt

    monkeypatch.setattr(train_digits.ct, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        _run(["--epochs", "2", "--checkpoint", str(resumed)], monkeypatch)
    monkeypatch.setattr(train_digits.ct, "save", real_save)
    assert ct.load(resumed)["epoch"] == 0
    acc2 = _run(["--epochs", "2", "--checkpoint", str(resumed), "--resume"], monkeypatch)
    assert acc2 == acc
    a, b = ct.load(straight)["model"], ct.load(resumed)["model"]
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=k)


def test_resume_without_checkpoint_fails_clearly(tmp_path, monkeypatch):
    with pytest.raises(SystemExit, match="no checkpoint"):
        _run(["--resume", "--checkpoint", str(tmp_path / "none")], monkeypatch)


def _no_load():
    raise AssertionError("scikit-learn was asked again")


def test_digits_arrays_are_scikit_learns_and_load_from_the_cache(tmp_path, monkeypatch):
    from sklearn.datasets import load_digits

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ref = load_digits()
    for i in range(2):  # the first call writes the cache, the second reads only it
        x, y = train_digits.digits_arrays()
        assert x.dtype == np.float32 and y.dtype == np.int64
        np.testing.assert_array_equal(x, (ref.data / 16.0).astype(np.float32))
        np.testing.assert_array_equal(y, ref.target)
        if i == 0:
            monkeypatch.setattr("sklearn.datasets.load_digits", _no_load)
    cache = tmp_path / "coretorch" / "digits.npz"
    assert [p.name for p in cache.parent.iterdir()] == ["digits.npz"]
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.write_bytes(b"not an npz")  # a damaged cache is loaded again from scikit-learn
    np.testing.assert_array_equal(train_digits.digits_arrays()[1], ref.target)
