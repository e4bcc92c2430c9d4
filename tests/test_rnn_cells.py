"""The fused LSTM cell ops (`_lstm_cell`, `_lstm_cell_backward`): the cpu backend's native
kernels equal the composites written with ops, autograd goes through the op's own derivative
(native backward kernel included), and second derivatives still work."""
from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck, gradgradcheck
from coretorch.dispatch.keys import DispatchKey
from coretorch.ops import REGISTRY

CELL, BACKWARD = REGISTRY["_lstm_cell"], REGISTRY["_lstm_cell_backward"]
TOL = {ct.float64: 1e-12, ct.float32: 1e-6, ct.bfloat16: 1e-2}


def _rand(rng, shape, dtype, transposed=False):
    if transposed:
        return ct.tensor(rng.standard_normal(shape[::-1])).to(dtype).t()
    return ct.tensor(rng.standard_normal(shape)).to(dtype)


def _assert_close(got, want, dtype):
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype is b.dtype
        np.testing.assert_allclose(a.detach().double().numpy(), b.detach().double().numpy(),
                                   rtol=TOL[dtype], atol=TOL[dtype])


def test_cpu_registers_native_kernels():
    assert CELL.op.has_kernel(DispatchKey.CPU) and BACKWARD.op.has_kernel(DispatchKey.CPU)
    # the forward carries its own derivative; the backward is differentiated through its ops
    assert (CELL.kind, BACKWARD.kind) == ("composite_explicit", "composite_implicit")


@pytest.mark.parametrize("dtype", [ct.float64, ct.float32, ct.bfloat16])
@pytest.mark.parametrize("n,h,transposed", [(5, 3, False), (4, 6, True), (300, 256, False),
                                            (0, 4, False)])
def test_native_equals_composite(dtype, n, h, transposed):
    # (300, 256) takes the parallel loops
    rng = np.random.default_rng(n * h)
    gates, cx = _rand(rng, (n, 4 * h), dtype, transposed), _rand(rng, (n, h), dtype, transposed)
    native = CELL.op.entry(gates, cx)
    composite = CELL.impl(gates, cx)
    _assert_close(native, composite, dtype)
    grads = [_rand(rng, (n, h), dtype), _rand(rng, (n, h), dtype), _rand(rng, (n, 4 * h), dtype)]
    args = (*grads, cx, composite[1], composite[2])
    _assert_close(BACKWARD.op.entry(*args), BACKWARD.impl(*args), dtype)


def test_autograd_uses_the_derivative():
    rng = np.random.default_rng(0)
    gates = _rand(rng, (3, 8), ct.float64).requires_grad_()
    cx = _rand(rng, (3, 2), ct.float64).requires_grad_()
    hy, cy, ws = CELL.op.entry(gates, cx)
    assert type(hy.grad_fn).__name__ == "LstmCellBackward0"
    loss = (hy * 2 + cy * 3).sum() + ws[:, 1].sum()
    fused = ct.autograd.grad(loss, (gates, cx))
    hy, cy, ws = CELL.impl(gates, cx)  # differentiated through the ops it is written with
    loss = (hy * 2 + cy * 3).sum() + ws[:, 1].sum()
    _assert_close(fused, ct.autograd.grad(loss, (gates, cx)), ct.float64)


def test_first_and_second_derivatives():
    rng = np.random.default_rng(1)
    gates = _rand(rng, (2, 12), ct.float64).requires_grad_()
    cx = _rand(rng, (2, 3), ct.float64).requires_grad_()
    assert gradcheck(CELL.op.entry, (gates, cx))
    assert gradgradcheck(CELL.op.entry, (gates, cx))


def test_lstm_gradients_through_fused_cell(monkeypatch):
    """An LSTM's outputs and gradients are those of the same network differentiated op by op."""
    from coretorch.nn.functional import rnn as rnn_mod
    ct.manual_seed(0)
    lstm = ct.nn.LSTM(4, 3, num_layers=2).double()
    x = ct.randn(5, 2, 4, dtype=ct.float64)

    def run():
        for p in lstm.parameters():
            p.grad = None
        out, (h, c) = lstm(x)
        (out.sum() + h.sum() + c.square().sum()).backward()
        return (out, h, c), [p.grad for p in lstm.parameters()]
    fused_out, fused_grads = run()
    monkeypatch.setattr(rnn_mod, "aten", _Decomposed(rnn_mod.aten))
    ops_out, ops_grads = run()
    _assert_close(fused_out, ops_out, ct.float64)
    _assert_close(fused_grads, ops_grads, ct.float64)


class _Decomposed:
    """`aten` with `_lstm_cell` replaced by its composite (autograd then records its ops)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return CELL.impl if name == "_lstm_cell" else getattr(self.inner, name)
