"""Fused recurrent cells: the LSTM cell's pointwise part (`_lstm_cell`, a composite in
coretorch) and its backward (`_lstm_cell_backward`) each as one numba pass over the (N, H)
hidden units, instead of about eight ops forward and fifteen autograd nodes backward per time
step. Half-precision tensors compute in float32; large problems run their rows in parallel.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from coretorch.backend_kit.array_kit import acc_float

from ..registry import kernel
from ._common import arr, write, writable_target

_PARALLEL_MIN = 1 << 16  # hidden units (N * H); smaller problems run the serial loops


@numba.njit(cache=True, inline="always")
def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


@numba.njit(cache=True, inline="always")
def _lstm_row(gates, cx, hy, cy, ws, r):
    h = cx.shape[1]
    for j in range(h):
        i = _sigmoid(gates[r, j])
        f = _sigmoid(gates[r, h + j])
        g = math.tanh(gates[r, 2 * h + j])
        o = _sigmoid(gates[r, 3 * h + j])
        c = f * cx[r, j] + i * g
        cy[r, j] = c
        hy[r, j] = o * math.tanh(c)
        ws[r, j], ws[r, h + j], ws[r, 2 * h + j], ws[r, 3 * h + j] = i, f, g, o


@numba.njit(cache=True, inline="always")
def _lstm_backward_row(grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx, r):
    h = cx.shape[1]
    for j in range(h):
        i, f, g, o = ws[r, j], ws[r, h + j], ws[r, 2 * h + j], ws[r, 3 * h + j]
        t = math.tanh(cy[r, j])
        dh = grad_hy[r, j]
        dc = grad_cy[r, j] + dh * o * (1 - t * t)
        grad_gates[r, j] = (dc * g + grad_ws[r, j]) * i * (1 - i)
        grad_gates[r, h + j] = (dc * cx[r, j] + grad_ws[r, h + j]) * f * (1 - f)
        grad_gates[r, 2 * h + j] = (dc * i + grad_ws[r, 2 * h + j]) * (1 - g * g)
        grad_gates[r, 3 * h + j] = (dh * t + grad_ws[r, 3 * h + j]) * o * (1 - o)
        grad_cx[r, j] = dc * f


@numba.njit(cache=True)
def _lstm_serial(gates, cx, hy, cy, ws):
    for r in range(cx.shape[0]):
        _lstm_row(gates, cx, hy, cy, ws, r)


@numba.njit(cache=True, parallel=True)
def _lstm_parallel(gates, cx, hy, cy, ws):
    for r in numba.prange(cx.shape[0]):
        _lstm_row(gates, cx, hy, cy, ws, r)


@numba.njit(cache=True)
def _lstm_backward_serial(grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx):
    for r in range(cx.shape[0]):
        _lstm_backward_row(grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx, r)


@numba.njit(cache=True, parallel=True)
def _lstm_backward_parallel(grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx):
    for r in numba.prange(cx.shape[0]):
        _lstm_backward_row(grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx, r)


def _fused(serial, parallel, outs, ins) -> None:
    """Run loop `serial` (or `parallel` on large problems) on contiguous arrays of the compute
    dtype: inputs converted as needed, outputs written in place where they allow it."""
    cdt = acc_float(arr(outs[0]).dtype)  # floating (the meta rules)
    xs = [np.ascontiguousarray(arr(t), dtype=cdt) for t in ins]
    targets = [writable_target(o, cdt, tuple(o._shape)) for o in outs]
    n, h = xs[1].shape  # the (N, H) state: cx forward, grad_cy backward
    if n * h:
        fn = parallel if n > 1 and n * h >= _PARALLEL_MIN else serial
        fn(*xs, *[y for y, _ in targets])
    for o, (y, copy) in zip(outs, targets):
        if copy:
            write(o, y)


@kernel("_lstm_cell")
def lstm_cell(out, gates, cx):
    """(hy, cy, workspace) of one LSTM step's gates"""
    hy, cy, ws = out
    _fused(_lstm_serial, _lstm_parallel, (hy, cy, ws), (gates, cx))


@kernel("_lstm_cell_backward")
def lstm_cell_backward(out, grad_hy, grad_cy, grad_workspace, cx, cy, workspace):
    """(grad_gates, grad_cx) of `_lstm_cell`"""
    _fused(_lstm_backward_serial, _lstm_backward_parallel, tuple(out),
           (grad_hy, grad_cy, grad_workspace, cx, cy, workspace))
