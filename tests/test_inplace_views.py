"""In-place view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_, as_strided_):
geometry, data sharing and autograd as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct

CASES = [
    ("t_", (2, 3), ()),
    ("transpose_", (2, 3, 4), (0, 2)),
    ("swapaxes_", (2, 3), (0, 1)),
    ("swapdims_", (2, 3), (1, 0)),
    ("squeeze_", (1, 3, 1), ()),
    ("squeeze_", (1, 3, 1), (2,)),
    ("unsqueeze_", (2, 3), (1,)),
    ("as_strided_", (6,), ((2, 2), (1, 2))),
]


@pytest.mark.parametrize("name,shape,args", CASES)
def test_geometry_and_values_match_the_out_of_place_view(name, shape, args):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = ct.tensor(a)
    expected = getattr(x, name[:-1])(*args)
    assert getattr(x, name)(*args) is x
    assert x.shape == expected.shape and x.stride() == expected.stride()
    assert x.untyped_storage() is expected.untyped_storage()
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    x.add_(1)  # writes through the new geometry
    np.testing.assert_array_equal(x.numpy(), expected.numpy())


@pytest.mark.parametrize("name,shape,args", CASES)
def test_matches_torch(name, shape, args):
    torch = pytest.importorskip("torch")
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x, t = ct.tensor(a), torch.tensor(a)
    getattr(x, name)(*args)
    getattr(t, name)(*args)
    assert tuple(x.shape) == tuple(t.shape) and x.stride() == t.stride()
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_autograd_records_the_view_after_the_history():
    w = ct.randn(3, dtype=ct.float64, requires_grad=True)
    y = w * 2
    y.unsqueeze_(0)
    assert y.shape == (1, 3) and y.grad_fn.name() == "UnsqueezeBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    (y * ct.tensor([[1.0, 2.0, 3.0]], dtype=ct.float64)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0, 6.0])


def test_refusals():
    leaf = ct.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.unsqueeze_(0)
    with ct.no_grad():
        leaf.unsqueeze_(0)  # allowed without grad mode, as in PyTorch
    assert leaf.shape == (1, 3)
    w = ct.randn(3, requires_grad=True)
    u = w.exp()  # saves its result
    u.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        u.sum().backward()
