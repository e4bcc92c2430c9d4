"""The toy backend's native kernels. Every other op runs through coretorch's CPU fallback.

These are structured kernels: the core has already checked the arguments, computed the result's
shape and dtype with the op's meta rule and allocated `out` on the toy device, so a kernel only
fills `out`. One kernel serves the functional (``add(a, b)``), in-place (``a.add_(b)``, where
`out` is `a`) and ``out=`` forms; with ``out=`` the dtype of `out` may be wider than the result's.
"""
from __future__ import annotations

import numpy as np

from coretorch.device import get_device_type
from coretorch.ops.meta_rules import dims_arg, promote
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
    """Fill `self` (which is `out`) with a number or a zero-dim tensor."""
    if isinstance(value, TensorImpl):
        value = value.item()
    _store(out, np.array(value).astype(out._dtype.numpy))


def add(out, self, other, *, alpha=1) -> None:
    """out = self + alpha * other, computed in the promoted dtype."""
    dtype = promote(self, other).numpy
    b = _operand(other, dtype)
    if alpha != 1:
        b = np.multiply(b, np.array(alpha).astype(dtype), dtype=dtype)
    _store(out, np.add(_operand(self, dtype), b, dtype=dtype))


def mul(out, self, other) -> None:
    """out = self * other, computed in the promoted dtype."""
    dtype = promote(self, other).numpy
    _store(out, np.multiply(_operand(self, dtype), _operand(other, dtype), dtype=dtype))


def sum_(out, self, dim=None, keepdim=False, *, dtype=None) -> None:
    """Sum over `dim` (None or empty: every dim); half precision accumulates in float32."""
    a = device_array(self)
    acc = np.dtype(np.float32) if out._dtype.numpy == np.float16 else out._dtype.numpy
    axes = None if a.ndim == 0 else dims_arg("sum", dim, a.ndim)
    _store(out, np.sum(a, axis=axes, dtype=acc, keepdims=keepdim))
