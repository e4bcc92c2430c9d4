"""Shape kernels that copy data, on the array API: cat, flip, triu/tril."""
from __future__ import annotations

from typing import Callable

from coretorch.ops.meta_rules import wrap_dim
from coretorch.ops.shape_ops import cat_skipped

from .array_kit import ArrayKit

__all__ = ["shape_kernels"]


def shape_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """The data-copying shape kernels over `kit`'s array module, by op name."""
    xp, arr, write = kit.xp, kit.arr, kit.write

    def cat(out, tensors, dim=0):
        """out = the tensors joined along `dim` (legacy 1-D empty tensors are skipped)"""
        o = arr(out)
        parts = [t for t in tensors if not cat_skipped(t)]
        if o.size == 0 or not parts:
            return
        d = wrap_dim("cat", dim, o.ndim)
        start = 0
        for t in parts:  # one slice copy per part: no concatenated temporary
            a = arr(t)
            n = a.shape[d]
            idx = (slice(None),) * d + (slice(start, start + n),)
            xp.copyto(o[idx], a, casting="unsafe")
            start += n

    def flip(out, self, dims):
        """out = self reversed along `dims`"""
        a = arr(self)
        if a.ndim == 0:
            write(out, a)
            return
        dims = [dims] if isinstance(dims, int) else dims
        axes = tuple(wrap_dim("flip", d, a.ndim) for d in dims)
        if axes:
            a = a[tuple(slice(None, None, -1) if i in axes else slice(None)
                        for i in range(a.ndim))]
        # CuPy does not order overlapping reads and writes as numpy does
        write(out, a.copy() if self._storage is out._storage else a)

    def tri_kernel(op: str, lower: bool):
        def k(out, self, diagonal=0):
            a = arr(self)
            if a.ndim < 2:
                raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
            n, m = a.shape[-2:]
            rows = xp.arange(n).reshape(n, 1)
            cols = xp.arange(m).reshape(1, m)
            keep = cols - rows <= diagonal if lower else cols - rows >= diagonal
            write(out, xp.where(keep, a, a.dtype.type(0)))
        k.__name__ = op
        k.__doc__ = f"out = the {'lower' if lower else 'upper'} triangle of the last two dims"
        return k

    return {"cat": cat, "flip": flip, "triu": tri_kernel("triu", False),
            "tril": tri_kernel("tril", True)}
