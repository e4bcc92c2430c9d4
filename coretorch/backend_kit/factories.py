"""Filling kernels on the array API: fill_, arange, linspace (values as PyTorch computes them),
and `_copy_`."""
from __future__ import annotations

from typing import Callable

import numpy as np

from coretorch.tensor.impl import TensorImpl as _T

from .array_kit import ArrayKit, scalar_as

__all__ = ["factory_kernels"]


def factory_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """fill_, arange, linspace and _copy_ over `kit`'s array module, by op name."""
    xp, arr, scalar, write = kit.xp, kit.arr, kit.scalar, kit.write

    def fill_(out, self, value):
        """Fill `self` with `value` (a number or a 0-dim tensor), cast to self's dtype."""
        o = arr(out)
        value = scalar(value)
        if o.dtype.kind in "iu" and isinstance(value, (int, np.integer)) \
                and not isinstance(value, bool):
            info = np.iinfo(o.dtype)
            if not info.min <= value <= info.max:
                raise RuntimeError(f"fill_(): value cannot be converted to type "
                                   f"{out._dtype.name} without overflow (got {value}; the range "
                                   f"is [{info.min}, {info.max}])")
        o.fill(scalar_as(value, o.dtype) if o.dtype.kind in "iub" else o.dtype.type(value))

    def arange(out, start, end=None, step=1, *, dtype=None, layout=None, device=None,
               requires_grad=False, pin_memory=False):
        """out[i] = start + i * step, computed in float64 (int64 for integer arguments), cast."""
        o = arr(out)
        if end is None:
            start = 0
        vals = [scalar(v) for v in (start, step)]
        exact = all(isinstance(v, (int, np.integer)) for v in vals)
        idx = xp.arange(o.shape[0], dtype=np.int64 if exact else np.float64)
        write(out, vals[0] + idx * vals[1])

    def linspace(out, start, end, steps, *, dtype=None, layout=None, device=None,
                 requires_grad=False, pin_memory=False):
        """`steps` evenly spaced values from start to end, with PyTorch's symmetric formula (the
        first half counts up from start, the second half down from end)."""
        o = arr(out)
        if steps == 0:
            return
        start, end = scalar(start), scalar(end)
        if steps == 1:
            write(out, start)
            return
        c = o.dtype if o.dtype.kind == "f" and o.dtype.itemsize >= 4 else np.dtype(np.float64)
        if o.dtype == np.float16:
            c = np.dtype(np.float32)
        s0, s1 = c.type(start), c.type(end)
        step = (s1 - s0) / c.type(steps - 1)
        i = xp.arange(steps, dtype=c)
        half = steps // 2
        write(out, xp.where(i < half, s0 + step * i, s1 - step * (c.type(steps - 1) - i)))

    def copy_(out, self, src, non_blocking=False):
        """out[...] = src, broadcast and cast (float -> int truncates)"""
        s = arr(src)
        if isinstance(src, _T) and src._storage is out._storage:
            s = s.copy()  # CuPy does not order overlapping reads and writes as numpy does
        write(out, s)

    return {"fill_": fill_, "arange": arange, "linspace": linspace, "_copy_": copy_}
