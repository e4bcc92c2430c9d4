"""Tensor.fill_diagonal_ against numpy's fill_diagonal (and PyTorch's), new_empty_strided."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct


@pytest.mark.parametrize(
    "shape,wrap",
    [
        ((3, 3), False),
        ((3, 5), False),
        ((7, 3), False),
        ((7, 3), True),
        ((8, 2), True),
        ((3, 3, 3), False),
    ],
)
def test_fill_diagonal_matches_numpy(shape, wrap):
    x = ct.zeros(*shape)
    expected = np.zeros(shape, np.float32)
    np.fill_diagonal(expected, 5.0, wrap=wrap)
    assert x.fill_diagonal_(5.0, wrap=wrap) is x
    np.testing.assert_array_equal(x.numpy(), expected)


def test_fill_diagonal_on_a_transposed_view_and_with_autograd():
    base = ct.zeros(4, 3)
    base.t().fill_diagonal_(1.0)
    np.testing.assert_array_equal(base.numpy(), np.eye(4, 3))
    w = ct.ones(3, 3, dtype=ct.float64, requires_grad=True)
    y = (w * 2).fill_diagonal_(0.0)
    y.sum().backward()  # the filled entries pass no gradient
    np.testing.assert_array_equal(w.grad.numpy(), 2 * (1 - np.eye(3)))


def test_fill_diagonal_refusals():
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        ct.zeros(3).fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        ct.zeros(2, 3, 3).fill_diagonal_(1.0)


def test_new_empty_strided():
    t = ct.ones(2, dtype=ct.float64).new_empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.dtype is ct.float64
