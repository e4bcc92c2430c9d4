"""A 0-d integer tensor given for an ``int`` argument is read at the schema boundary (never kept
as a tensor in a shape); a floating or many-element tensor is refused with PyTorch's TypeError."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct


def test_narrow_with_a_tensor_start_keeps_an_int_shape_and_the_process_healthy():
    x = ct.arange(125.0).reshape(5, 5, 5)
    y = x.narrow(1, ct.tensor(2), 2)
    assert y.shape == (5, 2, 5) and all(type(n) is int for n in y.shape)
    np.testing.assert_array_equal(y.numpy(), x.numpy()[:, 2:4])
    z = ct.narrow(x, -1, ct.tensor(0), 0)
    assert z.shape == (5, 5, 0) and all(type(n) is int for n in z.shape)
    # later unrelated work runs normally (allocation, reductions, autograd)
    w = ct.randn(64, 64, requires_grad=True)
    (w @ w).sum().backward()
    assert w.grad.shape == (64, 64)


@pytest.mark.parametrize(
    "call, shape",
    [
        (lambda x, i: x.select(0, i), (4,)),
        (lambda x, i: x.reshape(i, -1), (2, 6)),
        (lambda x, i: x.view(ct.tensor(4), i + 1), (4, 3)),
        (lambda x, i: x.unsqueeze(0).expand(i, 3, 4), (2, 3, 4)),
        (lambda x, i: x.transpose(0, i - 1), (4, 3)),
        (lambda x, i: x.repeat(i, 1), (6, 4)),
        (lambda x, i: ct.zeros(i, 3), (2, 3)),
        (lambda x, i: x.new_ones((i, i)), (2, 2)),
        (lambda x, i: x.topk(i).values, (3, 2)),
        (lambda x, i: x.split(i, 1)[0], (3, 2)),
        (lambda x, i: x.roll(i, 1), (3, 4)),
        (lambda x, i: x.sum(dim=i - 1), (3,)),
    ],
)
def test_int_arguments_read_zero_dim_integer_tensors(call, shape):
    out = call(ct.arange(12.0).reshape(3, 4), ct.tensor(2))
    assert out.shape == shape and all(type(n) is int for n in out.shape)


@pytest.mark.parametrize("bad", [ct.tensor(2.0), ct.tensor([1, 2]), ct.tensor(True)])
def test_non_integer_tensor_for_an_int_is_a_type_error(bad):
    with pytest.raises(TypeError, match=r"narrow\(\): argument 'start' \(position 3\) must be int"):
        ct.arange(10.0).narrow(0, bad, 2)


def test_size_reads_integer_scalars_and_refuses_others():
    s = ct.Size([ct.tensor(2), np.int64(3), 4])
    assert s == (2, 3, 4) and all(type(n) is int for n in s)
    with pytest.raises(TypeError, match=r"item 0 is 'float'"):
        ct.Size([2.5])
    with pytest.raises(TypeError, match=r"item 1 is 'Tensor'"):
        ct.Size([1, ct.tensor(2.0)])
