"""The fused recurrent cell ops (`_lstm_cell`, `_gru_cell` and their backwards): the cpu
backend's native kernels equal the composites written with ops, autograd goes through the op's
own derivative (native backward kernel included), and second derivatives still work."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck, gradgradcheck
from coretorch.dispatch.keys import DispatchKey
from coretorch.ops import REGISTRY

CELL, BACKWARD = REGISTRY["_lstm_cell"], REGISTRY["_lstm_cell_backward"]
GRU, GRU_BACKWARD = REGISTRY["_gru_cell"], REGISTRY["_gru_cell_backward"]
TOL = {ct.float64: 1e-12, ct.float32: 1e-6, ct.bfloat16: 1e-2}


def _rand(rng, shape, dtype, transposed=False):
    if transposed:
        return ct.tensor(rng.standard_normal(shape[::-1])).to(dtype).t()
    return ct.tensor(rng.standard_normal(shape)).to(dtype)


def _assert_close(got, want, dtype):
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype is b.dtype
        np.testing.assert_allclose(
            a.detach().double().numpy(),
            b.detach().double().numpy(),
            rtol=TOL[dtype],
            atol=TOL[dtype],
        )


@pytest.mark.parametrize("cell,backward", [(CELL, BACKWARD), (GRU, GRU_BACKWARD)])
def test_cpu_registers_native_kernels(cell, backward):
    assert cell.op.has_kernel(DispatchKey.CPU) and backward.op.has_kernel(DispatchKey.CPU)
    # the forward carries its own derivative; the backward is differentiated through its ops
    assert (cell.kind, backward.kind) == ("composite_explicit", "composite_implicit")


@pytest.mark.parametrize("dtype", [ct.float64, ct.float32, ct.bfloat16])
@pytest.mark.parametrize(
    "n,h,transposed", [(5, 3, False), (4, 6, True), (300, 256, False), (0, 4, False)]
)
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


@pytest.mark.parametrize("dtype", [ct.float64, ct.float32, ct.bfloat16])
@pytest.mark.parametrize(
    "n,h,transposed", [(5, 3, False), (4, 6, True), (300, 256, False), (0, 4, False)]
)
def test_gru_native_equals_composite(dtype, n, h, transposed):
    rng = np.random.default_rng(n * h + 1)
    args = [
        _rand(rng, (n, 3 * h), dtype, transposed),
        _rand(rng, (n, 3 * h), dtype, transposed),
        _rand(rng, (n, h), dtype, transposed),
    ]
    composite = GRU.impl(*args)
    _assert_close(GRU.op.entry(*args), composite, dtype)
    args = (_rand(rng, (n, h), dtype), _rand(rng, (n, 4 * h), dtype), args[2], composite[1])
    _assert_close(GRU_BACKWARD.op.entry(*args), GRU_BACKWARD.impl(*args), dtype)


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


def test_gru_autograd_uses_the_derivative():
    rng = np.random.default_rng(2)
    args = [_rand(rng, shape, ct.float64).requires_grad_() for shape in ((3, 6), (3, 6), (3, 2))]
    hy, ws = GRU.op.entry(*args)
    assert type(hy.grad_fn).__name__ == "GruCellBackward0"
    fused = ct.autograd.grad((hy * 2).sum() + ws[:, 3].sum(), args)
    hy, ws = GRU.impl(*args)
    _assert_close(fused, ct.autograd.grad((hy * 2).sum() + ws[:, 3].sum(), args), ct.float64)


@pytest.mark.parametrize(
    "cell,shapes", [(CELL, ((2, 12), (2, 3))), (GRU, ((2, 9), (2, 9), (2, 3)))]
)
def test_first_and_second_derivatives(cell, shapes):
    rng = np.random.default_rng(1)
    args = tuple(_rand(rng, shape, ct.float64).requires_grad_() for shape in shapes)
    assert gradcheck(cell.op.entry, args)
    assert gradgradcheck(cell.op.entry, args)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_network_gradients_through_fused_cell(kind, monkeypatch):
    """A network's outputs and gradients are those of the same network differentiated op by op
    (bidirectional, so the reversed direction is covered too)."""
    from coretorch.nn.functional import rnn as rnn_mod

    ct.manual_seed(0)
    lstm = getattr(ct.nn, kind)(4, 3, num_layers=2, bidirectional=True).double()
    x = ct.randn(5, 2, 4, dtype=ct.float64)

    def run():
        for p in lstm.parameters():
            p.grad = None
        out, state = lstm(x)
        state = state if isinstance(state, tuple) else (state,)
        (out.sum() + sum(s.square().sum() for s in state)).backward()
        return (out, *state), [p.grad for p in lstm.parameters()]

    fused_out, fused_grads = run()
    monkeypatch.setattr(rnn_mod, "aten", _Decomposed(rnn_mod.aten))
    ops_out, ops_grads = run()
    _assert_close(fused_out, ops_out, ct.float64)
    _assert_close(fused_grads, ops_grads, ct.float64)


class _Decomposed:
    """`aten` with the fused cells replaced by their composites (autograd then records the ops
    they are written with)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        cell = {"_lstm_cell": CELL, "_gru_cell": GRU}.get(name)
        return cell.impl if cell is not None else getattr(self.inner, name)
