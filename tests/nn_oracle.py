"""Helpers for the layer tests that compare coretorch with PyTorch (the oracle) and with values
recorded from PyTorch (tests/data/layers_expected.json, written by tests/data/record_layers.py)
so that part of the checks runs without PyTorch installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import coretorch as ct

EXPECTED = Path(__file__).parent / "data" / "layers_expected.json"


def torch_or_skip():
    return pytest.importorskip("torch")


def to_ct(t, requires_grad: bool = False):
    """A coretorch copy of a torch tensor (or numpy array)."""
    arr = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    out = ct.tensor(arr.copy())
    return out.requires_grad_() if requires_grad else out


def to_np(t) -> np.ndarray:
    return t.detach().numpy()


def load_from_torch(ours, theirs) -> None:
    """Copy `theirs`' state_dict into `ours`; the keys must be the same, in the same order."""
    sd = theirs.state_dict()
    assert list(ours.state_dict()) == list(sd)
    ours.load_state_dict({k: to_ct(v) for k, v in sd.items()})


def close(ours, theirs, atol: float = 1e-12, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(to_np(ours), to_np(theirs), atol=atol, rtol=rtol)


def grads_close(ours_params, theirs_params, atol: float = 1e-11, rtol: float = 1e-9) -> None:
    for p, q in zip(list(ours_params), list(theirs_params), strict=True):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=atol, rtol=rtol)


def seeded_state(shapes: dict, seed: int) -> dict:
    """Deterministic float64 values for each named shape (the recorded cases' weights)."""
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-0.5, 0.5, shape) for name, shape in shapes.items()}


def seeded(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def expected() -> dict:
    with open(EXPECTED) as f:
        return json.load(f)
