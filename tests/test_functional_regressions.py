"""Calls PyTorch's operator database found wrong or refused: negative pads in every pad mode,
batch_norm of an empty input, instance_norm's running stats, embedding's scale_grad_by_freq,
zero-size matmul, integer avg_pool rounding, and the in-place free functions."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F


def _x():
    return ct.arange(12.0).reshape(1, 1, 3, 4)


@pytest.mark.parametrize(
    "mode, expect",
    [
        # pad = (left, right) on the last dim: (-1, 2) crops one column and pads two
        ("replicate", [[1, 2, 3, 3, 3], [5, 6, 7, 7, 7], [9, 10, 11, 11, 11]]),
        ("reflect", [[1, 2, 3, 2, 1], [5, 6, 7, 6, 5], [9, 10, 11, 10, 9]]),
        ("circular", [[1, 2, 3, 1, 2], [5, 6, 7, 5, 6], [9, 10, 11, 9, 10]]),
    ],
)
def test_negative_and_positive_pads_in_non_constant_modes(mode, expect):
    out = F.pad(_x(), (-1, 2), mode=mode)
    np.testing.assert_array_equal(out.numpy()[0, 0], expect)


@pytest.mark.parametrize("mode", ["replicate", "reflect", "circular", "constant"])
def test_negative_pads_crop_and_match_pytorch_with_gradients(mode):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6))
    for pad in [(-1, 2, 2, -1), (-1, -1, -1, -1), (-2, 4, 1, 1), (-2, -3, 1, 1)]:
        c = ct.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        out_c, out_t = F.pad(c, pad, mode=mode), torch.nn.functional.pad(t, pad, mode=mode)
        np.testing.assert_allclose(out_c.detach().numpy(), out_t.detach().numpy())
        (out_c**2).sum().backward()
        (out_t**2).sum().backward()
        np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy())


def test_batch_norm_of_an_empty_input():
    out = F.batch_norm(ct.zeros(0), ct.zeros(0), ct.ones(0), training=True)
    assert out.shape == (0,)
    rm = ct.zeros(3)
    out = F.batch_norm(ct.zeros(0, 3), rm, ct.ones(3), ct.ones(3), ct.ones(3), training=True)
    assert out.shape == (0, 3) and rm.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="expected at least 2D input"):
        F.batch_norm(ct.ones(3), ct.zeros(3), ct.ones(3))


def test_instance_norm_uses_and_updates_running_stats():
    x = ct.tensor(np.random.default_rng(1).standard_normal((2, 3, 4)))
    rm, rv = (
        ct.tensor([0.5, -1.0, 2.0], dtype=ct.float64),
        ct.tensor([1.0, 4.0, 0.25], dtype=ct.float64),
    )
    out = F.instance_norm(x, rm, rv, use_input_stats=False, eps=0.0)
    expect = (x.numpy() - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None])
    np.testing.assert_allclose(out.numpy(), expect)
    F.instance_norm(x, rm, rv, momentum=1.0)
    np.testing.assert_allclose(rm.numpy(), x.numpy().mean(2).mean(0))


def test_embedding_scale_grad_by_freq():
    w = ct.ones(4, 2, requires_grad=True)
    idx = ct.tensor([1, 1, 1, 3])
    F.embedding(idx, w, scale_grad_by_freq=True).sum().backward()
    # row 1 is used three times: three gradients of 1, each divided by 3
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [1, 1], [0, 0], [1, 1]])
    w.grad = None
    F.embedding(idx, w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_zero_size_matmul():
    assert (ct.ones(0, 3) @ ct.ones(3, 4)).shape == (0, 4)
    np.testing.assert_array_equal((ct.ones(2, 0) @ ct.ones(0, 4)).numpy(), np.zeros((2, 4)))
    assert (ct.ones(0, 2, 3) @ ct.ones(3, 4)).shape == (0, 2, 4)


def test_integer_avg_pool_truncates_toward_zero():
    x = ct.tensor([[[[7, -7], [0, 0]]]])
    assert F.avg_pool2d(x, 2, divisor_override=2).item() == 0
    x = ct.tensor([[[[7, 0], [0, 0]]]])
    assert F.avg_pool2d(x, 2, divisor_override=-2).item() == -3  # -3.5 truncates to -3
    assert F.avg_pool2d(-x, 2, divisor_override=2).item() == -3


def test_inplace_free_functions():
    x = ct.ones(3)
    assert ct.zero_(x) is x and x.tolist() == [0.0, 0.0, 0.0]
    assert ct.fill_(x, 2.5) is x and x.tolist() == [2.5, 2.5, 2.5]
    y = ct.tensor([-1.0, 2.0])
    assert ct.relu_(y) is y and y.tolist() == [0.0, 2.0]


def test_std_and_var_take_unbiased_positionally():
    x = ct.tensor([1.0, 2.0, 4.0])
    assert ct.std(x, False).item() == pytest.approx(np.std([1.0, 2.0, 4.0]))
    assert x.var(True).item() == pytest.approx(np.var([1.0, 2.0, 4.0], ddof=1))
    assert x.var(0).item() == pytest.approx(np.var([1.0, 2.0, 4.0], ddof=1))
    with pytest.raises(TypeError, match=r"std\(\): the \(input, unbiased\) form"):
        x.std(True, True)
