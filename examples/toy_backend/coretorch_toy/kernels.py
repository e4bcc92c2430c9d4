"""The toy backend's native kernels. Every other op runs through coretorch's CPU fallback.

These are structured kernels: the core has already bound the arguments to the op's schema
(defaults filled, dims wrapped), checked them and computed the result's shape and dtype with the
op's meta rule, and allocated `out` on the toy device, so a kernel only fills `out` (whose dtype
is the result's). One kernel serves the functional (``add(a, b)``), in-place (``a.add_(b)``,
where `out` is `a`) and ``out=`` forms. Parameter names follow the schema
(``add(Tensor|Scalar self, Tensor|Scalar other, *, Scalar alpha=1)``): registration checks them.
"""

from __future__ import annotations

import numpy as np

from coretorch.device import get_device_type
from coretorch.dtypes import opmath_dtype
from coretorch.tensor.impl import TensorImpl

from .memory import device_array

__all__ = ["fill_", "add", "mul", "sum_"]


def _operand(x, dtype: np.dtype):
    """`x` as a numpy operand of `dtype`: a toy tensor, a zero-dim cpu tensor (PyTorch lets
    those join any device) or a Python number."""
    if isinstance(x, TensorImpl):
        a = device_array(x) if x._device.type == "toy" else get_device_type(x._device).read_numpy(x)
        return a.astype(dtype, copy=False)
    return np.array(x).astype(dtype)


def _store(out, values: np.ndarray) -> None:
    np.copyto(device_array(out), values, casting="unsafe")


def fill_(out, self, value) -> None:
    """Fill `self` (which is `out`) with `value`: a Python number or a zero-dim tensor (the
    schema's ``Tensor|Scalar``; the meta rule refused any other tensor)."""
    if isinstance(value, TensorImpl):
        value = value.item()
    _store(out, np.array(value).astype(out._dtype.numpy))


def _compute(out) -> np.dtype:
    """Arithmetic runs in out's dtype (float16 and bfloat16 in float32, as PyTorch)."""
    return opmath_dtype(out._dtype).numpy


def add(out, self, other, alpha) -> None:
    """out = self + alpha * other."""
    dtype = _compute(out)
    b = _operand(other, dtype)
    if alpha != 1:
        b = np.multiply(b, np.array(alpha).astype(dtype), dtype=dtype)
    _store(out, np.add(_operand(self, dtype), b, dtype=dtype))


def mul(out, self, other) -> None:
    """out = self * other."""
    dtype = _compute(out)
    _store(out, np.multiply(_operand(self, dtype), _operand(other, dtype), dtype=dtype))


def sum_(out, self, dim, keepdim, dtype) -> None:
    """Sum over `dim` (a tuple of wrapped dims; None or empty: every dim); half precision
    accumulates in float32. `dtype` is already out's dtype."""
    a = device_array(self)
    axes = None if not dim or a.ndim == 0 else dim
    _store(out, np.sum(a, axis=axes, dtype=_compute(out), keepdims=keepdim))
