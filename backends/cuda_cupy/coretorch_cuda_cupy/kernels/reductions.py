"""Reduction kernels the cuda backend runs faster than the backend kit's: softmax/log_softmax
with ``exp(x - max)`` as one fused CUDA kernel (no ``x - max`` temporary). Every reduction
primitive comes from `coretorch.backend_kit.reductions` over CuPy. In emulation there is no CUDA
compiler, so the kit's softmax runs as it is.
"""

from __future__ import annotations

from coretorch.backend_kit.reductions import softmax_into

from ..array_module import elementwise_kernel
from ..registry import kernel

_EXP_SHIFT = elementwise_kernel("T x, T m", "T y", "y = exp(x - m)", "coretorch_exp_shift")


def softmax(out, self, dim, dtype):
    """out = exp(self - max) / sum(exp(self - max)) along dim (fused exp-shift)"""
    softmax_into(out, self, dim, False, _EXP_SHIFT)


def log_softmax(out, self, dim, dtype):
    """out = self - max - log(sum(exp(self - max))) along dim (fused exp-shift)"""
    softmax_into(out, self, dim, True, _EXP_SHIFT)


if _EXP_SHIFT is not None:  # a real GPU (the kernel compiles on first call)
    kernel("softmax")(softmax)
    kernel("log_softmax")(log_softmax)
