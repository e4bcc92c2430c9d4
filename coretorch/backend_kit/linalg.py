"""Matrix products on the array API: `xp.matmul` (BLAS / cuBLAS), written straight into `out`
when the dtypes allow; float16 accumulates in float32."""
from __future__ import annotations

from typing import Callable

from .array_kit import ArrayKit, acc_float

__all__ = ["linalg_kernels"]


def linalg_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """mm and bmm over `kit`'s array module, by op name."""
    xp, arr, write = kit.xp, kit.arr, kit.write

    def matmul_into(out, a, b) -> None:
        o = arr(out)
        acc = acc_float(o.dtype)
        if a.dtype == b.dtype == o.dtype == acc:
            xp.matmul(a, b, out=o)
        else:
            write(out, xp.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False)))

    def mm(out, self, mat2):
        """out = self @ mat2 (2-D)"""
        matmul_into(out, arr(self), arr(mat2))

    def bmm(out, self, mat2):
        """out = self @ mat2 (batched, 3-D)"""
        matmul_into(out, arr(self), arr(mat2))

    return {"mm": mm, "bmm": bmm}
