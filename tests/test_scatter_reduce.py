"""scatter(reduce=), scatter_reduce (every reduction, include_self) and int32 indices for
gather/scatter/index_select, compared with PyTorch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def test_scatter_reduce_by_hand():
    x = ct.tensor([1.0, 2.0, 3.0, 4.0])
    idx = ct.tensor([0, 0, 2, 2, 2])
    src = ct.tensor([5.0, 6.0, 7.0, 8.0, 9.0])
    expect = {
        "sum": [12, 2, 27, 4],
        "prod": [30, 2, 1512, 4],
        "mean": [4, 2, 6.75, 4],
        "amax": [6, 2, 9, 4],
        "amin": [1, 2, 3, 4],
    }
    for reduce, values in expect.items():
        np.testing.assert_allclose(x.scatter_reduce(0, idx, src, reduce).numpy(), values)
    np.testing.assert_allclose(
        x.scatter_reduce(0, idx, src, "amin", include_self=False).numpy(), [5, 2, 7, 4]
    )
    np.testing.assert_allclose(
        x.scatter_reduce(0, idx, src, "mean", include_self=False).numpy(), [5.5, 2, 8, 4]
    )
    y = x.clone()
    assert y.scatter_reduce_(0, idx, src, "sum") is y
    np.testing.assert_allclose(y.numpy(), expect["sum"])


def test_integer_mean_floors():
    x = ct.tensor([0, 0])
    out = x.scatter_reduce(
        0, ct.tensor([0, 0, 0]), ct.tensor([-1, -1, 1]), "mean", include_self=False
    )
    assert out.tolist() == [-1, 0]  # floor(-1 / 3)


def test_scatter_reduce_argument():
    x = ct.ones(2, 3)
    idx = ct.tensor([[0, 0], [2, 1]], dtype=ct.int32)
    np.testing.assert_allclose(x.scatter(1, idx, 2.0, reduce="add").numpy(), [[5, 1, 1], [1, 3, 3]])
    np.testing.assert_allclose(
        x.scatter(1, idx, ct.full((2, 2), 3.0), reduce="multiply").numpy(), [[9, 1, 1], [1, 3, 3]]
    )
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(1, idx, 2.0, reduce="max")


def test_int32_indices_and_uint8_refused():
    x = ct.arange(12.0).reshape(3, 4)
    i32 = ct.tensor([[0, 3], [1, 1], [2, 0]], dtype=ct.int32)
    np.testing.assert_array_equal(x.gather(1, i32).numpy(), [[0, 3], [5, 5], [10, 8]])
    np.testing.assert_array_equal(
        x.index_select(0, ct.tensor([2, 0], dtype=ct.int32)).numpy(), x.numpy()[[2, 0]]
    )
    out = ct.zeros(3, 4).scatter(1, i32[:, :1], 1.0)
    assert out.sum().item() == 3.0
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int32/int64 for index"):
        x.gather(1, i32.to(ct.uint8))


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_matches_pytorch_values_and_gradients(reduce, include_self):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(reduce) + include_self)
    x, src = rng.standard_normal((4, 5)), rng.standard_normal((4, 6))
    idx = rng.integers(0, 5, (3, 6))
    tx = torch.tensor(x, requires_grad=True)
    ts = torch.tensor(src[:3], requires_grad=True)
    tout = tx.scatter_reduce(
        1, torch.tensor(idx[:, :5]), ts[:, :5], reduce, include_self=include_self
    )
    cx = ct.tensor(x, requires_grad=True)
    cs = ct.tensor(src[:3], requires_grad=True)
    cout = cx.scatter_reduce(1, ct.tensor(idx[:, :5]), cs[:, :5], reduce, include_self=include_self)
    np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    tg = torch.autograd.grad(tout.pow(2).sum(), [tx, ts])
    cg = ct.autograd.grad(cout.pow(2).sum(), [cx, cs])
    for a, b in zip(cg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    ints = torch.tensor(rng.integers(-4, 5, (4, 5)))
    isrc = torch.tensor(rng.integers(-4, 5, (3, 5)))
    expected = ints.scatter_reduce(
        0, torch.tensor(idx[:, :5] % 4), isrc, reduce, include_self=include_self
    )
    got = ct.tensor(ints.numpy()).scatter_reduce(
        0, ct.tensor(idx[:, :5] % 4), ct.tensor(isrc.numpy()), reduce, include_self=include_self
    )
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
