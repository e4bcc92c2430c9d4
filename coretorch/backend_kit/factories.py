"""Filling kernels on the array API: fill_, arange (values as PyTorch computes them) and
`_copy_`."""

from __future__ import annotations

import numpy as np

from coretorch.ops.factories import check_fill_value
from coretorch.tensor.tensor import Tensor

from .array_kit import kit_of, scalar_as

__all__ = ["KERNELS"]


def fill_(out, self, value):
    """Fill `out` with `value` (a number, or a 0-d tensor whose value is read here), cast to
    out's dtype."""
    k = kit_of(out)
    o = k.arr(out)
    if isinstance(value, Tensor):
        value = value.item()
        check_fill_value(out._dtype, value)  # a value read from data: checked here
    o.fill(scalar_as(value, o.dtype) if o.dtype.kind in "iub" else o.dtype.type(value))


def arange(out, start, end, step, dtype, layout, device, requires_grad, pin_memory):
    """out[i] = start + i * step, computed in int64 for integer arguments (else float64) and
    cast; ``arange(end)`` counts from 0."""
    k = kit_of(out)
    if end is None:
        start = 0
    exact = all(isinstance(v, (int, np.integer)) for v in (start, step))
    idx = k.xp.arange(k.arr(out).shape[0], dtype=np.int64 if exact else np.float64)
    k.write(out, start + idx * step)


def _copy_(out, self, src, non_blocking):
    """out[...] = src, broadcast and cast (float -> int truncates)"""
    k = kit_of(out)
    s = k.arr(src)
    if src._storage is out._storage:
        s = s.copy()  # CuPy does not order overlapping reads and writes as numpy does
    k.write(out, s)


KERNELS = {"fill_": fill_, "arange": arange, "_copy_": _copy_}
