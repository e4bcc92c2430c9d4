"""Reduction kernels the cpu backend runs faster than the backend kit's array-API ones: the full
sum of a large dense float tensor. Every other reduction (and sums of other shapes) comes from
`coretorch.backend_kit.reductions` over numpy.

The parallel sum runs over fixed 16K-element blocks, each summed across the vector lanes, block
results added in float64, so the result does not depend on the thread count and the error stays
close to pairwise summation.
"""

from __future__ import annotations

import numba
import numpy as np

from coretorch.backend_kit import reductions as kit

from ..numpy_view import as_numpy
from ..registry import kernel

_PARALLEL_MIN = 1 << 18  # below this a parallel kernel costs more than it saves
_BLOCK = 1 << 14
_F16 = np.dtype(np.float16)


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
        partial[b] = _sum_block(x[b * _BLOCK : min(b * _BLOCK + _BLOCK, n)])
    total = 0.0
    for b in range(nblocks):
        total += partial[b]
    return total


@kernel("sum")
def sum_(out, self, dim, keepdim, dtype):
    """out = the sum of self over dim (a large dense float sum of every element in parallel)"""
    a = as_numpy(self)
    if (
        a.size >= _PARALLEL_MIN
        and (dim is None or len(dim) in (0, a.ndim))
        and a.dtype.kind == "f"
        and a.dtype != _F16
        and out._dtype.is_floating_point
        and (a.flags.c_contiguous or a.flags.f_contiguous)
    ):
        as_numpy(out)[...] = _sum_flat_parallel(a.ravel(order="K"))  # a view: order is irrelevant
        return
    kit.sum(out, self, dim, keepdim, dtype)
