"""Fused recurrent cells: the LSTM and GRU cells' pointwise parts (`_lstm_cell`, `_gru_cell`,
composites in coretorch) and their backwards each as one numba pass over the (N, H) hidden
units, instead of about eight ops forward and fifteen autograd nodes backward per time step.
Half-precision tensors compute in float32; large problems run their rows in parallel.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from coretorch.backend_kit.array_kit import acc_float

from ..registry import kernel
from ._common import arr, writable_target, write

_PARALLEL_MIN = 1 << 16  # hidden units (N * H); smaller problems run the serial loops


@numba.njit(cache=True, inline="always")
def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


@numba.njit(cache=True, inline="always")
def _lstm_row(arrays, r):
    gates, cx, hy, cy, ws = arrays
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
def _lstm_backward_row(arrays, r):
    grad_hy, grad_cy, grad_ws, cx, cy, ws, grad_gates, grad_cx = arrays
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


@numba.njit(cache=True, inline="always")
def _gru_row(arrays, r):
    input_gates, hidden_gates, hx, hy, ws = arrays
    h = hx.shape[1]
    for j in range(h):
        rg = _sigmoid(input_gates[r, j] + hidden_gates[r, j])
        z = _sigmoid(input_gates[r, h + j] + hidden_gates[r, h + j])
        hn = hidden_gates[r, 2 * h + j]
        n = math.tanh(input_gates[r, 2 * h + j] + rg * hn)
        hy[r, j] = n + z * (hx[r, j] - n)
        ws[r, j], ws[r, h + j], ws[r, 2 * h + j], ws[r, 3 * h + j] = rg, z, n, hn


@numba.njit(cache=True, inline="always")
def _gru_backward_row(arrays, r):
    grad_hy, grad_ws, hx, ws, grad_input, grad_hidden, grad_hx = arrays
    h = hx.shape[1]
    for j in range(h):
        rg, z, n, hn = ws[r, j], ws[r, h + j], ws[r, 2 * h + j], ws[r, 3 * h + j]
        g = grad_hy[r, j]
        dn = (g * (1 - z) + grad_ws[r, 2 * h + j]) * (1 - n * n)
        dr = (dn * hn + grad_ws[r, j]) * rg * (1 - rg)
        dz = (g * (hx[r, j] - n) + grad_ws[r, h + j]) * z * (1 - z)
        grad_input[r, j] = grad_hidden[r, j] = dr
        grad_input[r, h + j] = grad_hidden[r, h + j] = dz
        grad_input[r, 2 * h + j] = dn
        grad_hidden[r, 2 * h + j] = dn * rg + grad_ws[r, 3 * h + j]
        grad_hx[r, j] = g * z


# One serial and one parallel driver per cell. A generic driver taking the row function as an
# argument cannot be cached: numba keys each cache entry by the function's dispatcher object, so
# every process added entries to the index, and loading another process's entry raised
# "ReferenceError: underlying object has vanished".
@numba.njit(cache=True)
def _lstm_serial(arrays, n):
    for r in range(n):
        _lstm_row(arrays, r)


@numba.njit(cache=True, parallel=True)
def _lstm_parallel(arrays, n):
    for r in numba.prange(n):
        _lstm_row(arrays, r)


@numba.njit(cache=True)
def _lstm_backward_serial(arrays, n):
    for r in range(n):
        _lstm_backward_row(arrays, r)


@numba.njit(cache=True, parallel=True)
def _lstm_backward_parallel(arrays, n):
    for r in numba.prange(n):
        _lstm_backward_row(arrays, r)


@numba.njit(cache=True)
def _gru_serial(arrays, n):
    for r in range(n):
        _gru_row(arrays, r)


@numba.njit(cache=True, parallel=True)
def _gru_parallel(arrays, n):
    for r in numba.prange(n):
        _gru_row(arrays, r)


@numba.njit(cache=True)
def _gru_backward_serial(arrays, n):
    for r in range(n):
        _gru_backward_row(arrays, r)


@numba.njit(cache=True, parallel=True)
def _gru_backward_parallel(arrays, n):
    for r in numba.prange(n):
        _gru_backward_row(arrays, r)


def _fused(serial, parallel, outs, ins, state: int) -> None:
    """Run a cell's row function over the N rows through its `serial` or (on large problems)
    `parallel` driver, on contiguous arrays of the compute dtype: inputs converted as needed,
    outputs written in place where they allow it. `ins[state]` is an (N, H) state tensor (it
    sizes the problem)."""
    cdt = acc_float(arr(outs[0]).dtype)  # floating (the meta rules)
    xs = [np.ascontiguousarray(arr(t), dtype=cdt) for t in ins]
    targets = [writable_target(o, cdt, tuple(o._shape)) for o in outs]
    n, h = xs[state].shape
    if n * h:
        loop = parallel if n > 1 and n * h >= _PARALLEL_MIN else serial
        loop((*xs, *[y for y, _ in targets]), n)
    for o, (y, copy) in zip(outs, targets):
        if copy:
            write(o, y)


@kernel("_lstm_cell")
def lstm_cell(out, gates, cx):
    """(hy, cy, workspace) of one LSTM step's gates"""
    hy, cy, ws = out
    _fused(_lstm_serial, _lstm_parallel, (hy, cy, ws), (gates, cx), 1)


@kernel("_lstm_cell_backward")
def lstm_cell_backward(out, grad_hy, grad_cy, grad_workspace, cx, cy, workspace):
    """(grad_gates, grad_cx) of `_lstm_cell`"""
    _fused(
        _lstm_backward_serial,
        _lstm_backward_parallel,
        tuple(out),
        (grad_hy, grad_cy, grad_workspace, cx, cy, workspace),
        0,
    )


@kernel("_gru_cell")
def gru_cell(out, input_gates, hidden_gates, hx):
    """(hy, workspace) of one GRU step's gates"""
    _fused(_gru_serial, _gru_parallel, tuple(out), (input_gates, hidden_gates, hx), 2)


@kernel("_gru_cell_backward")
def gru_cell_backward(out, grad_hy, grad_workspace, hx, workspace):
    """(grad_input_gates, grad_hidden_gates, grad_hx) of `_gru_cell`"""
    _fused(
        _gru_backward_serial,
        _gru_backward_parallel,
        tuple(out),
        (grad_hy, grad_workspace, hx, workspace),
        0,
    )
