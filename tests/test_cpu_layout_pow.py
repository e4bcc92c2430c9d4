"""cpu pointwise kernels on permuted layouts (written through in the inputs' memory order) and
float pow on negative bases (a small-integer power loop and the |x| ** y sign/NaN fix-up),
against numpy and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch_cpu_numba.layout import dense_order, memory_order

torch = pytest.importorskip("torch")

PERMS = [
    ((300, 200), (1, 0)),
    ((4, 130, 140), (0, 2, 1)),
    ((4, 130, 140), (2, 0, 1)),
    ((40, 30, 50), (1, 2, 0)),
    ((5, 6, 70, 80), (0, 1, 3, 2)),
    ((5, 6, 70, 80), (3, 2, 1, 0)),
    ((5, 6, 70, 80), (0, 2, 3, 1)),
]


def _cases(x, y, lib):
    """The pointwise calls checked, written once for coretorch and PyTorch."""
    return (
        x + y,
        x * y,
        lib.exp(x),
        lib.sigmoid(x),
        x**3.0,
        lib.where(x > 0.5, x, y),
        x + y[..., :1],
        x.lerp(y, 0.3),
    )


@pytest.mark.parametrize("shape,perm", PERMS)
def test_pointwise_on_permuted_inputs(shape, perm):
    """Values as numpy's; results laid out in the inputs' memory order, as PyTorch lays them."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 0.9, shape).astype(np.float32)
    b = rng.uniform(0.1, 0.9, shape).astype(np.float32)
    ta, tb = ct.from_numpy(a).permute(*perm), ct.from_numpy(b).permute(*perm)
    na, nb = a.transpose(perm), b.transpose(perm)
    wants = (
        na + nb,
        na * nb,
        np.exp(na),
        1 / (1 + np.exp(-na)),
        na**3,
        np.where(na > 0.5, na, nb),
        na + nb[..., :1],
        na + 0.3 * (nb - na),
    )
    theirs = _cases(torch.from_numpy(a).permute(*perm), torch.from_numpy(b).permute(*perm), torch)
    for got, want, their in zip(_cases(ta, tb, ct), wants, theirs):
        assert got.stride() == their.stride()
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_permuted_inplace_and_out():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((200, 300)).astype(np.float32)
    x = ct.from_numpy(a.copy())
    x.add_(x.t().contiguous().t())  # same memory order: in place
    np.testing.assert_allclose(x.numpy(), 2 * a, rtol=1e-6)
    y = ct.from_numpy(a.copy())
    out = ct.empty(200, 300)
    ct.mul(y.t().contiguous().t(), 2.0, out=out)
    np.testing.assert_allclose(out.numpy(), 2 * a, rtol=1e-6)
    sq = ct.from_numpy(rng.standard_normal((64, 64)).astype(np.float32))
    want = sq.numpy() + sq.numpy().T
    sq.add_(sq.t())  # overlapping operand: computed from a copy
    np.testing.assert_allclose(sq.numpy(), want, rtol=1e-6)


def test_dense_order():
    assert dense_order((3, 4), (4, 1)) is None
    assert dense_order((3, 4), (1, 3)) == [1, 0]
    assert dense_order((2, 3, 4), (1, 8, 2)) == [1, 2, 0]
    assert dense_order((3, 4), (0, 1)) is None  # broadcast
    assert dense_order((3, 4), (1, 6)) is None  # gapped
    assert memory_order(np.ones((3, 4), order="F")) == (1, 0)


def _same(a, b, rtol):
    m = ~np.isnan(b)
    np.testing.assert_allclose(a, b, rtol=rtol, equal_nan=True)
    assert (np.signbit(a[m]) == np.signbit(b[m])).all()


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.parametrize(
    "e",
    [
        3.0,
        2.0,
        -1.0,
        -2.0,
        -3.0,
        0.0,
        2.5,
        -1.5,
        float("inf"),
        -float("inf"),
        20.0,
        21.0,
        3,
        -3,
        8,
        -8.0,
    ],
)
def test_pow_negative_bases(dtype, e):
    x = np.array([-2.0, -0.5, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, -3.0], dtype)
    _same(
        (ct.tensor(x) ** e).numpy(),
        (torch.tensor(x) ** e).numpy(),
        1e-6 if dtype == np.float32 else 1e-12,
    )


def test_pow_tensor_exponents_negative_bases():
    x = np.array([-2.0, -0.5, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, -3.0], np.float32)
    y = np.array([3.0, 2.5, -1.0, 0.5, np.inf, -np.inf, np.nan, 2.0, -3.0], np.float32)
    _same(
        (ct.tensor(x) ** ct.tensor(y)).numpy(), (torch.tensor(x) ** torch.tensor(y)).numpy(), 1e-6
    )
    _same(((-2.0) ** ct.tensor(y)).numpy(), ((-2.0) ** torch.tensor(y)).numpy(), 1e-6)
    # |x| ** y hides a base of -1: (-1) ** nan is nan (only +1 ** nan is 1)
    for base in (-1.0, 1.0):
        for t in (ct.tensor(x), ct.tensor(y)):
            _same((base**t).numpy(), (base ** torch.tensor(t.numpy())).numpy(), 1e-6)
        _same(
            (ct.tensor([base]) ** ct.tensor(y)).numpy(),
            (torch.tensor([base]) ** torch.tensor(y)).numpy(),
            1e-6,
        )
    _same(
        (ct.tensor(x).half() ** 3.0).float().numpy(),
        (torch.tensor(x).half() ** 3.0).float().numpy(),
        1e-3,
    )
