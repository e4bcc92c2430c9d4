"""Elementwise kernels the cuda backend runs faster than the backend kit's array-API ones.

Every elementwise primitive comes from `coretorch.backend_kit.pointwise` (CuPy ufuncs; numpy
in emulation). lerp/addcmul/addcdiv are composites the optimizers call in their inner loops: on
a GPU each runs as one fused CUDA kernel (one read of every operand, one write, no temporaries).
In emulation there is no CUDA compiler, so they are not registered and run as composites.
"""

from __future__ import annotations

from coretorch.backend_kit.array_kit import opmath

from ..array_module import elementwise_kernel
from ..registry import kernel
from ._common import arr, operand, scalar_as, write

_LERP = elementwise_kernel(
    "T a, T b, T w",
    "T y",
    "T d = b - a; y = (abs(w) < T(0.5)) ? a + w * d : b - d * (T(1) - w)",
    "coretorch_lerp",
)
_ADDCMUL = elementwise_kernel(
    "T a, T t1, T t2, T v", "T y", "y = a + v * t1 * t2", "coretorch_addcmul"
)
_ADDCDIV = elementwise_kernel(
    "T a, T t1, T t2, T v", "T y", "y = a + v * t1 / t2", "coretorch_addcdiv"
)


def _run_fused(fused, out, *operands) -> None:
    """Write straight into out's array when it has the compute dtype, else cast the result."""
    o = arr(out)
    if o.dtype == operands[0].dtype:
        fused(*operands, o)
    else:
        write(out, fused(*operands))


def lerp(out, self, end, weight):
    """out = self + weight * (end - self) from the nearer end (fused CUDA kernel)"""
    c = opmath(out._dtype)
    _run_fused(_LERP, out, operand(self, c), operand(end, c), operand(weight, c))


def addcmul(out, self, tensor1, tensor2, value):
    """out = self + value * tensor1 * tensor2 (fused CUDA kernel)"""
    c = opmath(out._dtype)
    _run_fused(
        _ADDCMUL,
        out,
        operand(self, c),
        operand(tensor1, c),
        operand(tensor2, c),
        scalar_as(value, c),
    )


def addcdiv(out, self, tensor1, tensor2, value):
    """out = self + value * tensor1 / tensor2 (fused CUDA kernel)"""
    c = opmath(out._dtype)
    _run_fused(
        _ADDCDIV,
        out,
        operand(self, c),
        operand(tensor1, c),
        operand(tensor2, c),
        scalar_as(value, c),
    )


if _LERP is not None:  # a real GPU (the kernels compile on first call)
    kernel("lerp")(lerp)
    kernel("addcmul")(addcmul)
    kernel("addcdiv")(addcdiv)
