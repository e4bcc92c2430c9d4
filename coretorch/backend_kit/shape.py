"""The shape primitive that copies data, on the array API: cat (stack, flip, repeat, roll,
triu/tril are composites in `coretorch.ops.shape_ops`)."""

from __future__ import annotations

from coretorch.ops.shape_ops import cat_skipped

from .array_kit import kit_of

__all__ = ["KERNELS"]


def cat(out, tensors, dim, wrapped):
    """out = the tensors joined along dim `wrapped` (1-D empty tensors are skipped)"""
    k = kit_of(out)
    o = k.arr(out)
    if o.size == 0:
        return
    start = 0
    for t in tensors:  # one slice copy per part: no concatenated temporary
        if cat_skipped(t):
            continue
        a = k.arr(t)
        n = a.shape[wrapped]
        k.xp.copyto(o[(slice(None),) * wrapped + (slice(start, start + n),)], a, casting="unsafe")
        start += n


KERNELS = {"cat": cat}
