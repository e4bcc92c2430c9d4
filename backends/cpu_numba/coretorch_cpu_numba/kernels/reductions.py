"""Reduction kernels: sum here; prod, amax/amin, max/min along a dim, argmax/argmin, all/any,
cumsum/cumprod from the backend kit (`coretorch.backend_kit.reductions`) over numpy.

Full float sums of large dense tensors run in a parallel numba kernel: fixed 16K-element blocks
summed in 16 lanes, block results added in float64, so the result does not depend on the thread
count and the error stays close to pairwise summation. Other sums write numpy's pairwise sum
straight into `out` (the kit's generic sum goes through a temporary).
"""
from __future__ import annotations

import numba
import numpy as np

from coretorch.backend_kit.reductions import reduction_axes, reduction_kernels

from ..registry import TABLE, kernel
from ._common import KIT, arr, compute_dtype, write

_PARALLEL_MIN = 1 << 18   # below this a parallel kernel costs more than it saves
_BLOCK = 1 << 14
_LANES = 16


@numba.njit(parallel=True, cache=True)
def _sum_flat_parallel(x):
    # 16 independent lanes per block vectorize without fastmath; blocks add up in float64
    n = x.size
    nblocks = (n + _BLOCK - 1) // _BLOCK
    partial = np.empty(nblocks, np.float64)
    for b in numba.prange(nblocks):
        start = b * _BLOCK
        stop = min(start + _BLOCK, n)
        lanes = np.zeros(_LANES, x.dtype)
        i = start
        while i + _LANES <= stop:
            for k in range(_LANES):
                lanes[k] += x[i + k]
            i += _LANES
        acc = 0.0
        for k in range(_LANES):
            acc += lanes[k]
        for j in range(i, stop):
            acc += x[j]
        partial[b] = acc
    total = 0.0
    for b in range(nblocks):
        total += partial[b]
    return total


@kernel("sum")
def sum_(out, self, dim=None, keepdim=False, *, dtype=None):
    a, o = arr(self), arr(out)
    axes = reduction_axes("sum", dim, a)
    acc = compute_dtype(o.dtype)
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
