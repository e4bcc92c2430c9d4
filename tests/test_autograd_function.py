"""Custom autograd.Function: forward/backward, ctx.save_for_backward, needs_input_grad,
mark_non_differentiable, mark_dirty, set_materialize_grads, setup_context, double backward."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch import autograd
from coretorch.autograd import Function


def leaf(values, device="cpu"):
    return ct.tensor(values, dtype=ct.float64, device=device, requires_grad=True)


def npy(t):
    return np.asarray(t.detach())


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class ScaleBoth(Function):
    """(a * k, b * k) for a Python scalar k; records needs_input_grad."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        return a * k, b * k

    @staticmethod
    def backward(ctx, ga, gb):
        ctx.got = (ga, gb)
        return ga * ctx.k, gb * ctx.k, None


def test_custom_function_values_and_name(data_device):
    x = leaf([0.0, 1.0], data_device)
    y = MyExp.apply(x)
    assert y.grad_fn.name() == "MyExpBackward" and type(y.grad_fn).__name__ == "MyExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.backward(ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(x.grad), np.exp([0.0, 1.0]))


def test_custom_function_on_meta():
    x = ct.ones(2, 3, device="meta", requires_grad=True)
    y = MyExp.apply(x)
    y.backward(ct.ones(2, 3, device="meta"))
    assert x.grad.shape == (2, 3)


def test_needs_input_grad_and_materialized_zeros(data_device):
    a = leaf([1.0, 2.0], data_device)
    b = ct.tensor([3.0, 4.0], dtype=ct.float64, device=data_device)
    oa, ob = ScaleBoth.apply(a, b, 3.0)
    assert oa.requires_grad and ob.requires_grad
    oa.backward(ct.ones(2, dtype=ct.float64, device=data_device))
    ctx = oa.grad_fn
    assert ctx.seen_needs == (True, False, False)
    assert npy(ctx.got[1]).tolist() == [0.0, 0.0]  # the unused output got zeros
    np.testing.assert_allclose(npy(a.grad), [3.0, 3.0])


def test_set_materialize_grads_false(data_device):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1, g2)
            return g1 if g2 is None else g1 + g2 * 2

    x = leaf([1.0], data_device)
    o1, o2 = F.apply(x)
    o1.backward(ct.ones(1, dtype=ct.float64, device=data_device))
    assert o1.grad_fn.got[1] is None
    np.testing.assert_allclose(npy(x.grad), [1.0])


def test_mark_non_differentiable(data_device):
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = ct.tensor([1, 0], device=x.device)
            ctx.mark_non_differentiable(idx)
            flag = x * 0
            ctx.mark_non_differentiable(idx, flag)
            return x * 2, idx, flag

        @staticmethod
        def backward(ctx, g, gi, gf):
            assert gi is None
            return g * 2

    x = leaf([1.0, 2.0], data_device)
    y, idx, flag = SortLike.apply(x)
    assert y.requires_grad and not idx.requires_grad and not flag.requires_grad
    y.backward(ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


def test_mark_dirty(data_device):
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf([1.0, 2.0], data_device)
    h = x * 3
    out = AddOneInplace.apply(h)
    assert out is h and h.grad_fn.name() == "AddOneInplaceBackward"
    (h * h).backward(ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(x.grad), 6 * (3 * np.array([1.0, 2.0]) + 1))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInplace.apply(leaf([1.0], data_device))


def test_setup_context_style(data_device):
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = leaf([3.0], data_device)
    Square.apply(x).backward(ct.ones(1, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(x.grad), [6.0])


def test_wrong_number_of_gradients(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = ct.ones(2, device=device, requires_grad=True)
    out = Bad.apply(x, x)
    with pytest.raises(
        RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"
    ):
        out.backward(ct.ones(2, device=device))


def test_saved_tensor_modified_and_freed(device):
    x = ct.ones(2, device=device, requires_grad=True)
    h = x * 1
    y = MyExp.apply(h)
    y.mul_(2)  # MyExp saved y
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(ct.ones(2, device=device))
    y = MyExp.apply(x)
    y.backward(ct.ones(2, device=device))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(ct.ones(2, device=device))


def test_no_recording_without_grad(device):
    x = ct.ones(2, device=device)
    assert MyExp.apply(x).grad_fn is None
    with ct.no_grad():
        assert MyExp.apply(ct.ones(2, device=device, requires_grad=True)).grad_fn is None


def test_double_backward_through_custom_function(data_device):
    x = leaf([0.5, -0.3], data_device)
    one = ct.ones(2, dtype=ct.float64, device=data_device)
    (g,) = autograd.grad(MyExp.apply(x), x, one, create_graph=True)
    (g2,) = autograd.grad(g, x, one)
    np.testing.assert_allclose(npy(g2), np.exp([0.5, -0.3]))


def test_gradcheck_custom_function(data_device):
    x = leaf([0.1, 0.2, -0.4], data_device)
    assert autograd.gradcheck(MyExp.apply, (x,))
    assert autograd.gradgradcheck(MyExp.apply, (x,))


def test_gradcheck_catches_wrong_backward(data_device):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 * x * g

    x = leaf([0.7, 1.3], data_device)
    with pytest.raises(
        autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        autograd.gradcheck(Wrong.apply, (x,))
    assert autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
