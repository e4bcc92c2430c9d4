"""Ternary elementwise kernels: where, clamp, lerp, addcmul, addcdiv.

lerp/addcmul/addcdiv are the optimizers' inner loops: on a GPU they run as one fused CUDA kernel
each (one read of every operand, one write, no temporaries); in emulation the same formula is
composed from `xp` ufuncs.
"""
from __future__ import annotations

from ..array_module import elementwise_kernel
from ..registry import kernel
from ._common import acc_float, arr, compute_dtype, operand, scalar_as, unsupported, write, xp

_LERP = elementwise_kernel(
    "T a, T b, T w", "T y",
    "T d = b - a; y = (abs(w) < T(0.5)) ? a + w * d : b - d * (T(1) - w)", "coretorch_lerp")
_ADDCMUL = elementwise_kernel("T a, T t1, T t2, T v", "T y", "y = a + v * t1 * t2",
                              "coretorch_addcmul")
_ADDCDIV = elementwise_kernel("T a, T t1, T t2, T v", "T y", "y = a + v * t1 / t2",
                              "coretorch_addcdiv")


@kernel("where")
def where(out, condition, self, other):
    """out = self where condition else other, in the promoted dtype of self and other"""
    c = compute_dtype(self, other).numpy
    write(out, xp.where(arr(condition), operand(self, c), operand(other, c)))


@kernel("clamp")
def clamp(out, self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
    """out = min(max(self, min), max); NaN propagates; min > max gives max"""
    c = compute_dtype(self, min, max).numpy
    x = operand(self, c)
    if min is not None:
        x = xp.maximum(x, operand(min, c))
    if max is not None:
        x = xp.minimum(x, operand(max, c))
    write(out, x)


def _fused_target(out, c):
    """out's array when a fused kernel may write it directly (contiguous, compute dtype)."""
    o = arr(out)
    return o if o.dtype == c else None


@kernel("lerp")
def lerp(out, self, end, weight):
    """out = self + weight * (end - self), computed as PyTorch does for accuracy near weight=1"""
    d = compute_dtype(self, end)
    if not d.is_floating_point:
        raise unsupported("lerp", d, "floating point dtypes")
    c = acc_float(d)
    a, b = operand(self, c), operand(end, c)
    w = operand(weight, c)
    if _LERP is not None:
        target = _fused_target(out, c)
        if target is not None:
            _LERP(a, b, w, target)
        else:
            write(out, _LERP(a, b, w))
        return
    diff = b - a
    small = xp.abs(w) < c.type(0.5)
    write(out, xp.where(small, a + w * diff, b - diff * (c.type(1) - w)))


def _addc(name: str, fused, out, self, t1, t2, value) -> None:
    d = compute_dtype(self, t1, t2)
    c = acc_float(d)
    a, x1, x2 = operand(self, c), operand(t1, c), operand(t2, c)
    v = scalar_as(value, c)
    if fused is not None and d.is_floating_point:
        target = _fused_target(out, c)
        if target is not None:
            fused(a, x1, x2, v, target)
        else:
            write(out, fused(a, x1, x2, v))
        return
    write(out, a + v * x1 * x2 if name == "addcmul" else a + v * x1 / x2)


@kernel("addcmul")
def addcmul(out, self, tensor1, tensor2, *, value=1):
    """out = self + value * tensor1 * tensor2"""
    _addc("addcmul", _ADDCMUL, out, self, tensor1, tensor2, value)


@kernel("addcdiv")
def addcdiv(out, self, tensor1, tensor2, *, value=1):
    """out = self + value * tensor1 / tensor2 (floats only: the meta rule refuses integers)"""
    _addc("addcdiv", _ADDCDIV, out, self, tensor1, tensor2, value)
