"""softmax/log_softmax (composites in coretorch) as fused numba kernels: one pass for the
maximum, one for the sum of exponentials, one to write; float32 rows use a vectorizable exp.
Rows (softmax over the last dim) and (N, Q) column blocks (any other dim) each have a loop;
large problems run their outer loop in parallel.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.extending import overload

from coretorch.backend_kit.array_kit import acc_float

from ..numpy_view import as_numpy
from ..registry import kernel
from ._common import writable_target, write

_PARALLEL_MIN = 1 << 16  # elements; smaller problems run the serial kernels
_EXP_LO, _EXP_HI = np.float32(-87.3), np.float32(88.7)


@numba.njit(cache=True, inline="always")
def _exp32(x):
    """float32 exp (Cephes expf, ~2 ulp) in plain arithmetic, so loops over it vectorize (numba
    has no vector math library here); below -87.3 it returns 0, NaN stays NaN."""
    c = min(max(x, _EXP_LO), _EXP_HI)
    fx = np.floor(c * np.float32(1.44269504088896341) + np.float32(0.5))
    r = c - fx * np.float32(0.693359375) + fx * np.float32(2.12194440e-4)
    p = (
        (
            (
                (np.float32(1.9875691500e-4) * r + np.float32(1.3981999507e-3)) * r
                + np.float32(8.3334519073e-3)
            )
            * r
            + np.float32(4.1665795894e-2)
        )
        * r
        + np.float32(1.6666665459e-1)
    ) * r + np.float32(5.0000001201e-1)
    p = p * (r * r) + r + np.float32(1.0)
    e = p * np.int32((np.int32(fx) + 127) << 23).view(np.float32)
    if x < _EXP_LO:
        e = np.float32(0.0)
    if x != x:
        e = x
    return e


def _exp(x):
    """exp in the precision of `x`: the vectorizable `_exp32` for float32 (jitted code only)."""
    return math.exp(x)


@overload(_exp)
def _exp_typed(x):
    if x == numba.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


def _zero(x):
    """A zero of `x`'s type (jitted code only)."""
    return 0


@overload(_zero)
def _zero_typed(x):
    zero = np.float32(0) if x == numba.float32 else 0.0
    return lambda x: zero


@numba.njit(cache=True, fastmath={"reassoc"})
def _softmax_row(x, y, log):
    # one contiguous row; NaN anywhere makes the sum (so the row) NaN, as in PyTorch
    n = x.shape[0]
    m = x[0]
    for j in range(1, n):
        v = x[j]
        if v > m:
            m = v
    s = _zero(m)
    if log:
        for j in range(n):
            s += _exp(x[j] - m)
        shift = m + math.log(s)
        for j in range(n):
            y[j] = x[j] - shift
    else:
        for j in range(n):
            e = _exp(x[j] - m)
            y[j] = e
            s += e
        inv = 1 / s
        for j in range(n):
            y[j] *= inv


@numba.njit(cache=True, fastmath={"reassoc"})
def _softmax_cols(x, y, log):
    # x, y: (N, Q), softmax along N for each of the Q columns (inner loops run over Q)
    N, Q = x.shape
    m = x[0].copy()
    for i in range(1, N):
        for q in range(Q):
            if x[i, q] > m[q]:
                m[q] = x[i, q]
    s = np.zeros_like(m)
    for i in range(N):
        for q in range(Q):
            e = _exp(x[i, q] - m[q])
            s[q] += e
            if not log:
                y[i, q] = e
    if log:
        for q in range(Q):
            s[q] = m[q] + math.log(s[q])
        for i in range(N):
            for q in range(Q):
                y[i, q] = x[i, q] - s[q]
    else:
        for q in range(Q):
            s[q] = 1 / s[q]
        for i in range(N):
            for q in range(Q):
                y[i, q] *= s[q]


def _softmax_block(x, y, log):
    """softmax of one block (jitted code only): a row (1-D) or (N, Q) columns (2-D)."""


@overload(_softmax_block)
def _softmax_block_typed(x, y, log):
    if x.ndim == 1:
        return lambda x, y, log: _softmax_row(x, y, log)
    return lambda x, y, log: _softmax_cols(x, y, log)


@numba.njit(cache=True)
def _softmax_serial(x, y, log):
    for p in range(x.shape[0]):
        _softmax_block(x[p], y[p], log)


@numba.njit(cache=True, parallel=True)
def _softmax_parallel(x, y, log):
    for p in numba.prange(x.shape[0]):
        _softmax_block(x[p], y[p], log)


def _softmax_into(out, self, d: int, log: bool) -> None:
    a = as_numpy(self)
    if a.size == 0:
        return
    shape = a.shape if a.ndim else (1,)
    P = int(np.prod(shape[:d], dtype=np.int64))
    N, Q = shape[d], int(np.prod(shape[d + 1 :], dtype=np.int64))
    cdt = acc_float(out._dtype)  # out is floating (the meta rule)
    # softmax over the last dim runs on contiguous rows; otherwise on (N, Q) column blocks
    blocks = (P, N) if Q == 1 else (P, N, Q)
    x = np.ascontiguousarray(a, dtype=cdt).reshape(blocks)
    y, copy = writable_target(out, cdt, blocks)
    fn = _softmax_parallel if P > 1 and a.size >= _PARALLEL_MIN else _softmax_serial
    fn(x, y, log)
    if copy:
        write(out, y.reshape(out._shape))


@kernel("softmax")
def softmax(out, self, dim, dtype):
    """out = exp(self - max) / sum(exp(self - max)) along dim"""
    _softmax_into(out, self, dim, False)


@kernel("log_softmax")
def log_softmax(out, self, dim, dtype):
    """out = self - max - log(sum(exp(self - max))) along dim"""
    _softmax_into(out, self, dim, True)
