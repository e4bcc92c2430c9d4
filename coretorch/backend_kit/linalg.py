"""Matrix products on the array API: `xp.matmul` (BLAS / cuBLAS), written straight into `out`
when the dtypes allow; float16 and bfloat16 accumulate in float32."""

from __future__ import annotations

from .array_kit import acc_float, kit_of

__all__ = ["KERNELS"]


def _matmul_into(out, self, mat2) -> None:
    k = kit_of(out)
    a, b, o = k.arr(self), k.arr(mat2), k.arr(out)
    acc = acc_float(o.dtype)
    if a.dtype == b.dtype == o.dtype == acc:
        k.xp.matmul(a, b, out=o)
    else:
        k.write(out, k.xp.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False)))


def mm(out, self, mat2):
    """out = self @ mat2 (2-D)"""
    _matmul_into(out, self, mat2)


def bmm(out, self, mat2):
    """out = self @ mat2 (batched, 3-D)"""
    _matmul_into(out, self, mat2)


KERNELS = {"mm": mm, "bmm": bmm}
