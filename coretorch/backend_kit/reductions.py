"""Reduction kernels on the array API: sum, prod, amax/amin, max/min along a dim,
argmax/argmin, all/any, cumsum/cumprod. NaN propagates through max/min and arg-reductions
return the first NaN, as in PyTorch.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from coretorch.ops.meta_rules import dims_arg, wrap_dim

from .array_kit import ArrayKit, acc_float

__all__ = ["reduction_kernels", "reduction_axes"]

_I64 = np.dtype(np.int64)


def reduction_axes(op: str, dim, a):
    """`axis` for a reduction's `dim` (None/int/sequence; () or None = every dim)."""
    if a.ndim == 0:
        if dim is not None and not isinstance(dim, (tuple, list)):
            wrap_dim(op, dim, 0)
        return None
    if isinstance(dim, (tuple, list)) and not dim:
        dim = None
    return dims_arg(op, dim, a.ndim)


def _check_nonempty(op: str, a, dim, axes) -> None:
    """PyTorch refuses max-like reductions over a zero-size dim (there is no identity)."""
    if a.size or a.ndim == 0:
        return
    if dim is None or isinstance(dim, (tuple, list)) and not dim:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    for d in axes:
        if a.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _acc(o_dtype: np.dtype) -> np.dtype:
    """Accumulation dtype for a sum/prod into `o_dtype` (bool adds up in int64, then casts)."""
    return _I64 if o_dtype.kind == "b" else acc_float(o_dtype)


def reduction_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """The reduction kernels over `kit`'s array module, by op name."""
    xp, arr, write = kit.xp, kit.arr, kit.write

    def sum_(out, self, dim=None, keepdim=False, *, dtype=None):
        a = arr(self)
        write(out, xp.sum(a, axis=reduction_axes("sum", dim, a), dtype=_acc(arr(out).dtype),
                          keepdims=keepdim))

    def prod(out, self, dim=None, keepdim=False, *, dtype=None):
        a = arr(self)
        write(out, xp.prod(a, axis=reduction_axes("prod", dim, a), dtype=_acc(arr(out).dtype),
                           keepdims=keepdim))

    def minmax_kernel(op: str, fn):
        def k(out, self, dim=(), keepdim=False):
            a = arr(self)
            axes = reduction_axes(op, dim, a)
            _check_nonempty(op, a, dim, axes)
            if a.ndim == 0:
                write(out, a)
                return
            write(out, fn(a, axis=axes, keepdims=keepdim))
        k.__name__ = op
        return k

    def arg_along(op: str, fn, a, d: int):
        """Index of the first extreme along axis `d` (the first NaN if any), kept as size 1."""
        if a.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
        idx = fn(a, axis=d)
        if a.dtype.kind == "f":  # CuPy does not promise the first NaN; numpy does
            nan = xp.isnan(a)
            idx = xp.where(nan.any(axis=d), xp.argmax(nan, axis=d), idx)
        return xp.expand_dims(idx, d)

    def dim_minmax_kernel(op: str, argfn):
        def k(out, self, dim, keepdim=False):
            values, indices = out
            a = arr(self)
            d = wrap_dim(op, dim, a.ndim)
            if a.ndim == 0:
                write(values, a)
                write(indices, 0)
                return
            idx = arg_along(op, argfn, a, d)
            vals = xp.take_along_axis(a, idx, axis=d)
            if not keepdim:
                idx, vals = idx.squeeze(d), vals.squeeze(d)
            write(values, vals)
            write(indices, idx)
        k.__name__ = op
        return k

    def arg_kernel(op: str, argfn):
        def k(out, self, dim=None, keepdim=False):
            a = arr(self)
            if dim is None or a.ndim == 0:
                if dim is not None:
                    wrap_dim(op, dim, 0)
                if a.size == 0:
                    raise IndexError(f"{op}(): Expected reduction dim to be specified for "
                                     f"input.numel() == 0.")
                write(out, arg_along(op, argfn, a.reshape(-1), 0).reshape(()))
                return
            d = wrap_dim(op, dim, a.ndim)
            idx = arg_along(op, argfn, a, d)
            write(out, idx if keepdim else idx.squeeze(d))
        k.__name__ = op
        return k

    def bool_kernel(op: str, fn):
        def k(out, self, dim=None, keepdim=False):
            a = arr(self)
            write(out, fn(a, axis=reduction_axes(op, dim, a), keepdims=keepdim))
        k.__name__ = op
        return k

    def scan_kernel(op: str, fn):
        def k(out, self, dim, *, dtype=None):
            a = arr(self)
            d = wrap_dim(op, dim, a.ndim)
            o = arr(out)
            # floats accumulate in double (as PyTorch's CPU scans; float32 would drift)
            acc = np.dtype(np.float64) if o.dtype.kind == "f" else o.dtype
            if acc.kind == "b":
                acc = _I64
            if a.ndim == 0:
                write(out, a.astype(acc))
                return
            write(out, fn(a, axis=d, dtype=acc))
        k.__name__ = op
        return k

    return {
        "sum": sum_, "prod": prod,
        "amax": minmax_kernel("amax", xp.amax), "amin": minmax_kernel("amin", xp.amin),
        "_max_dim": dim_minmax_kernel("max", xp.argmax),
        "_min_dim": dim_minmax_kernel("min", xp.argmin),
        "argmax": arg_kernel("argmax", xp.argmax), "argmin": arg_kernel("argmin", xp.argmin),
        "all": bool_kernel("all", xp.all), "any": bool_kernel("any", xp.any),
        "cumsum": scan_kernel("cumsum", xp.cumsum), "cumprod": scan_kernel("cumprod", xp.cumprod),
    }
