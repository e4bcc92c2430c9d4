"""Reduction kernels: sum here; prod, amax/amin, max/min along a dim, argmax/argmin, all/any,
cumsum/cumprod from the backend kit (`coretorch.backend_kit.reductions`) over numpy.

Full float sums of large dense tensors run in a parallel numba kernel: fixed 16K-element blocks,
each summed across the vector lanes, block results added in float64, so the result does not
depend on the thread count and the error stays close to pairwise summation. Other sums write
numpy's pairwise sum straight into `out` (the kit's generic sum goes through a temporary).
"""
from __future__ import annotations

import numba
import numpy as np

from coretorch.backend_kit.array_kit import acc_float
from coretorch.backend_kit.reductions import reduction_axes, reduction_kernels

from ..registry import TABLE, kernel
from ._common import KIT, arr, write

_PARALLEL_MIN = 1 << 18   # below this a parallel kernel costs more than it saves
_BLOCK = 1 << 14


# `reassoc` lets LLVM split the sum over several vector registers; without `nnan`/`ninf`, NaN
# and Inf still propagate. Indexing a contiguous slice (not `range(start, stop)` on the whole
# array, and not `for v in y`) is what keeps the loads plain vector loads instead of gathers.
@numba.njit(fastmath={"reassoc"}, cache=True)
def _sum_block(y):
    acc = y.dtype.type(0)
    for i in range(y.size):
        acc += y[i]
    return acc


@numba.njit(parallel=True, cache=True)
def _sum_flat_parallel(x):
    n = x.size
    nblocks = (n + _BLOCK - 1) // _BLOCK
    partial = np.empty(nblocks, np.float64)
    for b in numba.prange(nblocks):
        partial[b] = _sum_block(x[b * _BLOCK:min(b * _BLOCK + _BLOCK, n)])
    total = 0.0
    for b in range(nblocks):
        total += partial[b]
    return total


@kernel("sum")
def sum_(out, self, dim=None, keepdim=False, *, dtype=None):
    a, o = arr(self), arr(out)
    axes = reduction_axes("sum", dim, a)
    acc = acc_float(o.dtype)
    full = axes is None or len(axes) == a.ndim
    if (full and a.size >= _PARALLEL_MIN and acc.kind == "f" and a.dtype.kind == "f"
            and a.dtype != np.float16 and (a.flags.c_contiguous or a.flags.f_contiguous)):
        o[...] = _sum_flat_parallel(a.ravel(order="K"))  # a view: element order is irrelevant
        return
    if acc == o.dtype:
        np.sum(a, axis=axes, dtype=acc, keepdims=keepdim, out=o)
    else:
        write(out, np.sum(a, axis=axes, dtype=acc, keepdims=keepdim))


TABLE.add_all(reduction_kernels(KIT), skip=("sum",))
