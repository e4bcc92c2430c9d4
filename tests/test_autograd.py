"""Autograd engine semantics: graph recording, backward/grad, accumulation, retain/create graph,
hooks, retain_grad, RecordFunction of backward nodes. Values are checked against hand-derived
formulas (numpy) or torch; shapes against the meta device."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import coretorch as ct
from coretorch import autograd, record_function as rf
from coretorch.autograd.node import FREED_MESSAGE


def leaf(values, device="cpu", dtype=None):
    return ct.tensor(values, dtype=dtype or ct.float64, device=device, requires_grad=True)


def npy(t):
    return np.asarray(t.detach())


# ---- recording ------------------------------------------------------------------------------


def test_grad_fn_names_and_edges(device):
    x = ct.ones(3, device=device, requires_grad=True)
    y = ct.ones(3, device=device)
    z = x * y
    assert type(z.grad_fn).__name__ == "MulBackward0" and z.grad_fn.name() == "MulBackward0"
    (acc, nr), (none, _) = z.grad_fn.next_functions
    assert acc.name() == "AccumulateGrad" and acc.variable is x and nr == 0 and none is None
    assert z.requires_grad and not z.is_leaf and x.is_leaf and x.grad_fn is None
    w = (z + 1).exp()
    assert w.grad_fn.name() == "ExpBackward0"
    assert w.grad_fn.next_functions[0][0].name() == "AddBackward0"
    assert x.double().grad_fn.name() == "ToCopyBackward0"
    assert x.view(3, 1).grad_fn.name() == "ViewBackward0"
    assert x[1:].grad_fn.name() == "SliceBackward0"


def test_outputs_without_grad(device):
    x = ct.ones(3, device=device, requires_grad=True)
    assert not (x > 0).requires_grad  # non-differentiable op
    assert not x.detach().requires_grad and x.detach().grad_fn is None
    assert not ct.ones(3, device=device).add(1).requires_grad
    with ct.no_grad():
        assert not (x * 2).requires_grad
    assert not (x * 2).detach().requires_grad


def test_backward_values_with_reuse(data_device):
    # f = sum(exp(x * y + x)) with x used twice: gradients from both uses add up
    xv, yv = np.array([0.1, 0.2, 0.3]), np.array([0.4, -0.5, 0.6])
    x, y = leaf(xv, data_device), leaf(yv, data_device)
    f = (x * y + x).exp()
    f.backward(ct.ones(3, dtype=ct.float64, device=data_device))
    e = np.exp(xv * yv + xv)
    np.testing.assert_allclose(npy(x.grad), e * (yv + 1))
    np.testing.assert_allclose(npy(y.grad), e * xv)
    assert x.grad.dtype is ct.float64 and not x.grad.requires_grad


def test_accumulates_across_calls_and_retain_graph(data_device):
    x = leaf([1.0, 2.0], data_device)
    y = x * x
    g = ct.ones(2, dtype=ct.float64, device=data_device)
    y.backward(g, retain_graph=True)
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0])
    y.backward(g)
    np.testing.assert_allclose(npy(x.grad), [4.0, 8.0])
    with pytest.raises(RuntimeError) as e:
        y.backward(g)
    assert str(e.value) == FREED_MESSAGE
    assert "Trying to backward through the graph a second time" in str(e.value)


def test_graph_without_saved_tensors_can_run_twice(device):
    x = ct.ones(2, device=device, requires_grad=True)
    y = x + 1
    g = ct.ones(2, device=device)
    y.backward(g)
    y.backward(g)  # AddBackward0 saves nothing: PyTorch allows this too


def test_backward_errors(device):
    x = ct.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        ct.ones(1, device=device).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\] has a shape"):
        (x * 2).backward(ct.ones(2, device=device))


def test_scalar_backward_implicit_ones(data_device):
    x = leaf([3.0], data_device)
    (x * x).reshape(()).backward()
    np.testing.assert_allclose(npy(x.grad), [6.0])


def test_broadcast_gradient_is_reduced(device):
    a = ct.ones(2, 3, device=device, requires_grad=True)
    b = ct.ones(3, device=device, requires_grad=True)
    c = ct.ones(2, 1, device=device, requires_grad=True)
    out = a * b + c
    out.backward(ct.ones(2, 3, device=device))
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == (2, 1)
    if device != "meta":
        np.testing.assert_allclose(npy(b.grad), [2.0, 2.0, 2.0])
        np.testing.assert_allclose(npy(c.grad), [[3.0], [3.0]])


def test_gradient_cast_to_input_dtype(device):
    a = ct.ones(3, dtype=ct.float32, device=device, requires_grad=True)
    b = ct.ones(3, dtype=ct.float64, device=device, requires_grad=True)
    out = a * b
    assert out.dtype is ct.float64
    out.backward(ct.ones(3, dtype=ct.float64, device=device))
    assert a.grad.dtype is ct.float32 and b.grad.dtype is ct.float64


def test_autograd_grad(data_device):
    x = leaf([1.0, 2.0, 3.0], data_device)
    y = leaf([1.0, 1.0, 1.0], data_device)
    out = x * x * 3
    (gx,) = autograd.grad(out, x, ct.ones(3, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(gx), [6.0, 12.0, 18.0])
    assert x.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(x * 2, [x, y], ct.ones(3, dtype=ct.float64, device=data_device))
    gx, gy = autograd.grad(
        x * 2, [x, y], ct.ones(3, dtype=ct.float64, device=data_device), allow_unused=True
    )
    assert gy is None
    np.testing.assert_allclose(npy(gx), [2.0, 2.0, 2.0])
    gx, gy = autograd.grad(
        x * 2, [x, y], ct.ones(3, dtype=ct.float64, device=data_device), materialize_grads=True
    )
    np.testing.assert_allclose(npy(gy), [0.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad(x * 2, ct.ones(3, device=data_device), ct.ones(3, device=data_device))


def test_grad_wrt_intermediate(data_device):
    x = leaf([1.0, 2.0], data_device)
    h = x * 3
    out = h * h
    (gh,) = autograd.grad(out, h, ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(gh), [6.0, 12.0])


def test_higher_order(data_device):
    x = leaf([0.5, 2.0], data_device)
    y = x * x * x
    one = ct.ones(2, dtype=ct.float64, device=data_device)
    (g,) = autograd.grad(y, x, one, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(npy(g), 3 * np.array([0.5, 2.0]) ** 2)
    (g2,) = autograd.grad(g, x, one, create_graph=True)
    np.testing.assert_allclose(npy(g2), 6 * np.array([0.5, 2.0]))
    (g3,) = autograd.grad(g2, x, one)
    np.testing.assert_allclose(npy(g3), [6.0, 6.0])


def test_higher_order_through_saved_result(data_device):
    x = leaf([0.3, -0.7], data_device)
    one = ct.ones(2, dtype=ct.float64, device=data_device)
    (g,) = autograd.grad(x.tanh(), x, one, create_graph=True)  # tanh saves its result
    (g2,) = autograd.grad(g, x, one)
    t = np.tanh([0.3, -0.7])
    np.testing.assert_allclose(npy(g), 1 - t * t)
    np.testing.assert_allclose(npy(g2), -2 * t * (1 - t * t))


def test_backward_create_graph_then_grad_of_grad(data_device):
    x = leaf([2.0], data_device)
    (x * x * x).backward(ct.ones(1, dtype=ct.float64, device=data_device), create_graph=True)
    gx = x.grad
    assert gx.requires_grad
    (g2,) = autograd.grad(gx, x, ct.ones(1, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(g2), [12.0])


def test_backward_inputs(data_device):
    x, y = leaf([1.0], data_device), leaf([2.0], data_device)
    h = x * y
    out = h * h
    out.backward(ct.ones(1, dtype=ct.float64, device=data_device), inputs=[x])
    assert y.grad is None
    np.testing.assert_allclose(npy(x.grad), [2 * 2.0 * 2.0])


def test_retain_grad(data_device):
    x = leaf([1.0, 2.0], data_device)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    (h * h).backward(ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(h.grad), [4.0, 8.0])
    other = x * 2
    assert other.grad is None


def test_tensor_hooks(data_device):
    x = leaf([1.0, 2.0], data_device)
    seen = []
    hx = x.register_hook(lambda g: seen.append(("x", npy(g).copy())))
    h = x * 3
    h.register_hook(lambda g: g * 10)  # replaces the gradient flowing into h's history
    (h * 1).backward(ct.ones(2, dtype=ct.float64, device=data_device))
    np.testing.assert_allclose(npy(x.grad), [30.0, 30.0])
    assert seen and seen[0][0] == "x"
    np.testing.assert_allclose(seen[0][1], [30.0, 30.0])
    hx.remove()
    x.grad = None
    (x * 1).backward(ct.ones(2, dtype=ct.float64, device=data_device))
    assert len(seen) == 1
    np.testing.assert_allclose(npy(x.grad), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ct.ones(1, device=data_device).register_hook(lambda g: g)


def test_post_accumulate_grad_hook(data_device):
    x = leaf([1.0], data_device)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(npy(t.grad).copy()))
    (x * 5).backward(ct.ones(1, dtype=ct.float64, device=data_device))
    assert len(seen) == 1 and seen[0][0] == 5.0
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks(data_device):
    x = leaf([1.0], data_device)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.backward(ct.ones(1, dtype=ct.float64, device=data_device))
    assert calls == ["pre", "post"]


def test_requires_grad_rules(device):
    x = ct.ones(2, device=device, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating point"):
        ct.ones(2, dtype=ct.int64, device=device).requires_grad_()
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.untyped_storage() is y.untyped_storage()


def test_integer_output_of_differentiable_op_has_no_grad(device):
    x = ct.ones(3, device=device, requires_grad=True)
    i = ct.ones(3, dtype=ct.int64, device=device)
    assert (i * 2).grad_fn is None
    assert (x * i).requires_grad


def test_missing_derivative_raises_at_backward(device):
    lib = ct.library.Library("agtest", "DEF")
    try:
        lib.define("twice(Tensor self) -> Tensor")

        def twice_kernel(self):
            return self.detach() * 2

        from coretorch.device import get_device_type

        for key in {"CPU", "Meta", get_device_type(device).dispatch_key.name}:
            lib.impl("twice", twice_kernel, dispatch_key=key)
        x = ct.ones(2, device=device, requires_grad=True)
        y = ct.ops.agtest.twice(x)
        assert y.requires_grad
        with pytest.raises(
            NotImplementedError, match="the derivative for 'agtest::twice' is not implemented"
        ):
            y.backward(ct.ones(2, device=device))
    finally:
        lib._destroy()


def test_out_argument_with_grad_raises(device):
    x = ct.ones(2, device=device, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="out=... arguments don't support automatic differentiation"
    ):
        ct.add(x, x, out=ct.empty(2, device=device))


def test_backward_record_function(data_device):
    events = []
    handle = rf.add_thread_local_callback(
        lambda r: events.append((r.scope, r.name, r.seq_nr)),
        lambda r, s: events.append(("end", r.name, r.outputs, (r.extra or {}).get("node"))),
    )
    try:
        x = leaf([1.0, 2.0], data_device)
        y = x * x
        y.backward(ct.ones(2, dtype=ct.float64, device=data_device))
    finally:
        rf.remove_callback(handle)
    fwd = [e for e in events if e[0] == rf.RecordScope.FUNCTION and e[1] == "aten::mul"]
    bwd = [e for e in events if e[0] == rf.RecordScope.BACKWARD_FUNCTION]
    assert [e[1] for e in bwd] == ["MulBackward0", "AccumulateGrad"]
    assert fwd and fwd[0][2] == bwd[0][2] >= 0  # backward carries the forward's sequence nr
    end = [e for e in events if e[0] == "end" and e[1] == "MulBackward0"][0]
    assert len(end[2]) == 2 and end[3] is y.grad_fn
    np.testing.assert_allclose(npy(end[2][0]), [1.0, 2.0])  # d(x*x)/d(first x) = x


def test_long_chain_no_recursion_limit(device):
    x = ct.ones(2, device=device, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    y.backward(ct.ones(2, device=device))
    assert x.grad.shape == (2,)


def test_backward_in_threads(data_device):
    errors = []

    def work(k):
        try:
            x = leaf([float(k)], data_device)
            for _ in range(20):
                x.grad = None
                (x * x).backward(ct.ones(1, dtype=ct.float64, device=data_device))
                assert npy(x.grad)[0] == 2.0 * k
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_matches_torch(data_device):
    torch = pytest.importorskip("torch")
    xv = np.array([[0.5, -1.2, 2.0], [0.3, 0.9, -0.4]])
    bv = np.array([0.1, 0.2, 0.3])
    x, b = leaf(xv, data_device), leaf(bv, data_device)
    out = ((x * b).sin() / (x * x + 1) - b.exp()).tanh()
    g = np.linspace(-1, 1, 6).reshape(2, 3)
    out.backward(ct.tensor(g, dtype=ct.float64, device=data_device))
    tx = torch.tensor(xv, requires_grad=True)
    tb = torch.tensor(bv, requires_grad=True)
    tout = ((tx * tb).sin() / (tx * tx + 1) - tb.exp()).tanh()
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(npy(x.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(npy(b.grad), tb.grad.numpy(), rtol=1e-12)


def test_leaf_gradients_never_alias_other_tensors():
    """AccumulateGrad may adopt a fresh gradient as `.grad` without copying it (as PyTorch
    steals it), but never one that something else can still see or mutate."""
    kept = []
    e = ct.randn(3, requires_grad=True)
    e.register_hook(lambda g: kept.append(g))
    (e * 3).sum().backward()
    assert kept[0] is not e.grad
    user = ct.ones(3)
    f = ct.randn(3, requires_grad=True)
    f.backward(user)
    assert f.grad is not user and f.grad._storage is not user._storage
    a = ct.randn(4, requires_grad=True)
    b = ct.randn(4, requires_grad=True)
    (a.view(2, 2) + b.view(2, 2)).sum().backward()  # one gradient flows to both leaves
    assert a.grad._storage is not b.grad._storage
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(4, np.float32))


def test_linear_weight_gradient_is_adopted_in_the_weights_layout():
    lin = ct.nn.Linear(5, 3)
    lin(ct.randn(4, 5)).sum().backward()
    assert lin.weight.grad.stride() == lin.weight.stride()
    assert lin.weight.grad._base is not None  # adopted without a copy
