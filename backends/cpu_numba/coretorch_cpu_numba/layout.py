"""Pointwise kernels writing into an output laid out in another memory order than their inputs.

A new elementwise result already takes its inputs' layout (`coretorch.tensor.layout`: PyTorch's
TensorIterator rule), so ``a.t() + b.t()`` reads and writes in memory order. An output given by
the caller (``out=``, an in-place op on a row-major tensor with a transposed operand) keeps its own
layout: computed straight into it, numpy's loop strides across rows and runs about 30x slower.
There the kernel runs into a buffer laid out like its first full-shape tensor operand (every
operand then read in memory order), and one cache-blocked transposing copy moves the result into
the output. `memory_order` lets the numba loops flatten operands in that order too.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import uint64 as U

from coretorch.tensor.impl import TensorImpl
from coretorch.tensor.layout import POINTWISE_FAMILIES

from .numpy_view import as_numpy, wrap_numpy
from .scratch import scratch

__all__ = ["dense_order", "follow_input_layout", "memory_order", "POINTWISE_FAMILIES"]

_T = TensorImpl
_MIN_NUMEL = 1 << 14  # below this the strided loop costs less than the extra copy
_TILE = 8  # measured on 1024 x 1024 float32: 8 beats 4, 16, 32 and 64 (power-of-two strides)


def dense_order(shape: tuple, stride: tuple):
    """The dims of a non-overlapping dense tensor from outermost to innermost in memory, when
    that is not the row-major order; None for row-major, broadcast or gapped layouts."""
    n = len(shape)
    order = sorted(range(n), key=lambda i: (-stride[i], -i))
    if order == list(range(n)):
        return None
    expect = 1
    for i in reversed(order):
        if shape[i] != 1 and stride[i] != expect:
            return None
        expect *= shape[i]
    return order


def _layout_source(out, args):
    """The first tensor argument of out's shape (None when one shares out's memory)."""
    shape = out._shape
    for a in args:
        if isinstance(a, _T):
            if a._storage is out._storage:
                return None
            if a._shape == shape:
                return a
    return None


@numba.njit(cache=True)
def _transpose_copy(src, dst):
    """dst[b, i, j] = src[b, j, i] in 8 x 8 tiles (both sides stay in cache); flat unsigned
    offsets, as a signed index costs a wrap-around test per access."""
    nb, rows, cols = dst.shape
    sf, df = src.ravel(), dst.ravel()
    tr = (rows + _TILE - 1) // _TILE
    tc = (cols + _TILE - 1) // _TILE
    for t in range(nb * tr * tc):  # serial: memory-bound, and the parallel form ran 3x slower
        b = t // (tr * tc)
        i0 = (t // tc) % tr * _TILE
        j0 = t % tc * _TILE
        ni, nj = U(min(_TILE, rows - i0)), U(min(_TILE, cols - j0))
        base = U(b * rows * cols)
        for i in range(ni):
            d = base + U(i0 + i) * U(cols) + U(j0)
            s = base + U(j0) * U(rows) + U(i0) + i
            for j in range(nj):
                df[d + j] = sf[s + j * U(rows)]


def _copy_in_order(dst: np.ndarray, buf: np.ndarray, order: list) -> None:
    """dst (row-major) = buf (the same values with dims in `order`): a tiled transpose when
    `order` is leading dims in place, then two blocks of dims swapped (order[k:] = m..n-1,
    k..m-1: a transpose, a batched one, a channels-last layout), else numpy's copy."""
    n = len(order)
    k = next(i for i in range(n) if order[i] != i)
    m = order[k]
    if order[k:] == list(range(m, n)) + list(range(k, m)):
        shape = dst.shape
        nb, rows, cols = (
            int(np.prod(shape[:k])),
            int(np.prod(shape[k:m])),
            int(np.prod(shape[m:])),
        )
        _transpose_copy(buf.reshape(nb, cols, rows), dst.reshape(nb, rows, cols))
        return
    np.copyto(dst, buf.transpose(np.argsort(order)))


def follow_input_layout(fn):
    """`fn` (a pointwise kernel ``fn(out, *args)``) run in the memory order of its first
    full-shape tensor operand when that differs from row-major out's (see the module
    docstring)."""

    def run(out, *args, **kwargs):
        if out.__class__ is not tuple and len(out._shape) > 1:
            src = _layout_source(out, args)
            if src is not None and src._stride != out._stride:
                o = as_numpy(out)
                order = (
                    dense_order(src._shape, src._stride)
                    if o.size >= _MIN_NUMEL and o.flags.c_contiguous
                    else None
                )
                if order is not None:
                    buf = scratch("layout", tuple(o.shape[i] for i in order), o.dtype)
                    fn(wrap_numpy(buf.transpose(np.argsort(order))), *args, **kwargs)
                    _copy_in_order(o, buf, order)
                    return None
        return fn(out, *args, **kwargs)

    run.__name__ = getattr(fn, "__name__", "kernel")
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return run


def memory_order(a):
    """The transposition of numpy array `a` that makes it C-contiguous, or None (already
    C-contiguous, or not dense)."""
    if a.flags.c_contiguous or a.ndim < 2:
        return None
    isz = a.itemsize
    order = dense_order(a.shape, tuple(s // isz if s % isz == 0 else -1 for s in a.strides))
    return tuple(order) if order is not None else None
