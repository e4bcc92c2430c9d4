"""Gradients at kinks and degenerate inputs are PyTorch's finite subgradients, not NaN: the norm
of zeros, std of a constant, normalize of a zero vector, atan2(0, 0), cross entropy / nll where
every target is ignored, binary cross entropy at 0 and 1. Each case states the expected
gradient (a fact) and is compared with PyTorch where it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct

NAN = math.nan


def _zeros(m, *shape):
    return [m.zeros(*shape, dtype=m.float64)]


def _ones(m, *shape):
    return [m.ones(*shape, dtype=m.float64)]


def _ignored(m):
    return m.tensor([-100, -100])


# name -> (make inputs from module m, f(m, *inputs) -> loss, expected gradients per input)
CASES = {
    "norm": (lambda m: _zeros(m, 3), lambda m, x: x.norm(), [[0.0] * 3]),
    "norm_dim": (lambda m: _zeros(m, 2, 3), lambda m, x: x.norm(dim=1).sum(), [[[0.0] * 3] * 2]),
    "norm_p3": (lambda m: _zeros(m, 3), lambda m, x: x.norm(3), [[0.0] * 3]),
    "std": (lambda m: _ones(m, 3), lambda m, x: x.std(), [[0.0] * 3]),
    "std_dim": (lambda m: _ones(m, 2, 3), lambda m, x: x.std(1).sum(), [[[0.0] * 3] * 2]),
    "normalize": (
        lambda m: _zeros(m, 1, 3),
        lambda m, x: m.nn.functional.normalize(x).sum(),
        [[[1e12] * 3]],
    ),
    "atan2": (
        lambda m: _zeros(m, 1) + _zeros(m, 1),
        lambda m, a, b: m.atan2(a, b).sum(),
        [[0.0], [0.0]],
    ),
    "cross_entropy_all_ignored": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.cross_entropy(x, _ignored(m)),
        [[[0.0] * 3] * 2],
    ),
    "cross_entropy_ignore_index": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([1, 1]), ignore_index=1),
        [[[0.0] * 3] * 2],
    ),
    "cross_entropy_weighted_all_ignored": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.cross_entropy(
            x, _ignored(m), weight=m.ones(3, dtype=m.float64)
        ),
        [[[0.0] * 3] * 2],
    ),
    "cross_entropy_smoothed_all_ignored": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.cross_entropy(x, _ignored(m), label_smoothing=0.1),
        [[[0.0] * 3] * 2],
    ),
    "nll_loss_all_ignored": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.nll_loss(x, _ignored(m)),
        [[[0.0] * 3] * 2],
    ),
    # PyTorch's NaN where the total weight is 0 without ignored targets is kept
    "cross_entropy_zero_weight": (
        lambda m: _zeros(m, 2, 3),
        lambda m, x: m.nn.functional.cross_entropy(
            x, m.tensor([0, 0]), weight=m.zeros(3, dtype=m.float64)
        ),
        [[[NAN] * 3] * 2],
    ),
    "binary_cross_entropy_at_0_and_1": (
        lambda m: [m.tensor([0.0, 1.0, 0.0, 1.0], dtype=m.float64)],
        lambda m, x: m.nn.functional.binary_cross_entropy(
            x, m.tensor([0.0, 1.0, 1.0, 0.0], dtype=m.float64), reduction="sum"
        ),
        [[0.0, 0.0, -1e12, 1e12]],
    ),
}


def _grads(m, name: str, device: str = "cpu"):
    make, f, _ = CASES[name]
    with m.device(device):  # every tensor the case makes is on `device`
        xs = make(m)
        for x in xs:
            x.requires_grad_(True)
        f(m, *xs).backward()
    return [np.asarray(x.grad.tolist()) for x in xs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_subgradient(name, data_device):
    for got, want in zip(_grads(ct, name, data_device), CASES[name][2]):
        np.testing.assert_allclose(got, np.asarray(want, dtype=np.float64), rtol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_subgradient_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_grads(ct, name), _grads(torch, name)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8)  # PyTorch's eps rounds at 4e-9


def test_all_ignored_cross_entropy_is_nan_as_pytorch(data_device):
    with ct.device(data_device):
        assert math.isnan(ct.nn.functional.cross_entropy(ct.zeros(2, 3), _ignored(ct)).item())


def test_binary_cross_entropy_target_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for m in (ct, torch):
        x = m.tensor([0.0, 0.3, 1.0, 0.9], dtype=m.float64)
        t = m.tensor([0.0, 1.0, 1.0, 0.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)
        m.nn.functional.binary_cross_entropy(x, t, weight=w).backward()
        out.append(np.asarray(t.grad.tolist()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-9)


def test_binary_cross_entropy_gradients_away_from_the_kinks():
    """The custom derivative is the true one inside (0, 1), to second order."""
    from coretorch.autograd import gradcheck, gradgradcheck

    x = ct.tensor([0.2, 0.5, 0.7], dtype=ct.float64, requires_grad=True)
    t = ct.tensor([0.0, 1.0, 0.3], dtype=ct.float64, requires_grad=True)

    def bce(a, b):
        return ct.nn.functional.binary_cross_entropy(a, b)

    assert gradcheck(bce, (x, t))
    assert gradgradcheck(bce, (x, t))
