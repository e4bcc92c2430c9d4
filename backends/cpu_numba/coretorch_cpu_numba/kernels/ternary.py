"""Ternary elementwise kernels: where, clamp, lerp, addcmul, addcdiv.

lerp/addcmul/addcdiv on floats are fused numba loops (one pass, no temporaries: these are the
optimizers' inner loops); integer addcmul goes through numpy.
"""
from __future__ import annotations

import numpy as np

from coretorch.tensor.impl import TensorImpl

from ..elementwise import (JIT_FLOAT, as_numpy, compute_dtype, jit_apply, operand, scalar_as,
                           unsupported, write)
from ..registry import kernel

_T = TensorImpl


@kernel("where")
def where(out, condition, self, other):
    """out = self where condition else other, in the promoted dtype of self and other"""
    c = compute_dtype(self, other).numpy
    write(out, np.where(as_numpy(condition), operand(self, c), operand(other, c)))


@kernel("clamp")
def clamp(out, self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
    """out = min(max(self, min), max); NaN propagates; min > max gives max"""
    c = compute_dtype(self, min, max).numpy
    lo = None if min is None else operand(min, c)
    hi = None if max is None else operand(max, c)
    x = as_numpy(self)
    if x.dtype != c:
        x = x.astype(c)
    np.clip(x, lo, hi, out=as_numpy(out), casting="unsafe")


@kernel("lerp")
def lerp(out, self, end, weight):
    """out = self + weight * (end - self), computed as PyTorch does for accuracy near weight=1"""
    d = compute_dtype(self, end)
    if not d.is_floating_point:
        raise unsupported("lerp", d, "floating point dtypes")
    c = JIT_FLOAT[d]
    if isinstance(weight, _T):
        jit_apply("lerp", out, (self, end, weight), c)
    else:
        jit_apply("lerp_scalar", out, (self, end), c, (weight,))


def _addc(name: str, out, self, t1, t2, value) -> None:
    d = compute_dtype(self, t1, t2)
    if d.is_floating_point:
        jit_apply(name, out, (self, t1, t2), JIT_FLOAT[d], (value,))
        return
    c = d.numpy
    v = scalar_as(value, c)
    a, b, s = as_numpy(self), as_numpy(t1), as_numpy(t2)
    prod = np.multiply(b, s, dtype=c)
    write(out, np.add(a, np.multiply(prod, v, dtype=c), dtype=c))


@kernel("addcmul")
def addcmul(out, self, tensor1, tensor2, *, value=1):
    """out = self + value * tensor1 * tensor2"""
    _addc("addcmul", out, self, tensor1, tensor2, value)


@kernel("addcdiv")
def addcdiv(out, self, tensor1, tensor2, *, value=1):
    """out = self + value * tensor1 / tensor2 (floats only)"""
    _addc("addcdiv", out, self, tensor1, tensor2, value)
