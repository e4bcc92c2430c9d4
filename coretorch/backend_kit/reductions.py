"""Reduction kernels on the array API, for any backend that holds its tensors as numpy or CuPy
arrays: the reduction primitives (sum, prod, amax, argmax, cumsum, cumprod) and one-kernel forms
of composites (amin, argmin, max/min along a dim, any, all, softmax, log_softmax).

Each kernel receives the argument record as the schema bound it and the meta rule accepted it:
dims are wrapped (None or ``()`` reduce every dim; a 0-d tensor takes dim 0), empty reductions
without an identity were refused. `out` has the result's shape and dtype. NaN propagates through
amax/amin, and argmax/argmin give the first NaN, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from coretorch import dtypes as _dt

from .array_kit import acc_float, kit_of

__all__ = ["KERNELS", "softmax_into"]

_I64, _F64 = np.dtype(np.int64), np.dtype(np.float64)


def _axis(a, dim):
    """numpy's `axis` for a reduction of array `a` over `dim` (every dim for None and ``()``;
    a 0-d array has none)."""
    return None if dim is None or dim == () or a.ndim == 0 else dim


def _accumulate(out, self, dim, keepdim, name: str) -> None:
    """out = xp.<name>(self) over `dim`, accumulated in out's opmath dtype (bool sums in int64):
    written straight into out when it has that dtype."""
    k = kit_of(out)
    a, o = k.arr(self), k.arr(out)
    acc = _I64 if o.dtype.kind == "b" else acc_float(o.dtype)
    fn = getattr(k.xp, name)
    if acc == o.dtype:
        fn(a, axis=_axis(a, dim), dtype=acc, keepdims=keepdim, out=o)
    else:
        k.write(out, fn(a, axis=_axis(a, dim), dtype=acc, keepdims=keepdim))


def sum(out, self, dim, keepdim, dtype):  # noqa: A001 - the op's name
    """out = the sum of self over dim"""
    _accumulate(out, self, dim, keepdim, "sum")


def prod(out, self, dim, keepdim, dtype):
    """out = the product of self over dim"""
    _accumulate(out, self, dim, keepdim, "prod")


def amax(out, self, dim, keepdim):
    """out = the maximum of self over dim (NaN if any)"""
    k = kit_of(out)
    a = k.arr(self)
    k.xp.amax(a, axis=_axis(a, dim), keepdims=keepdim, out=k.arr(out))


def amin(out, self, dim, keepdim):
    """out = the minimum of self over dim (NaN if any)"""
    k = kit_of(out)
    a = k.arr(self)
    k.xp.amin(a, axis=_axis(a, dim), keepdims=keepdim, out=k.arr(out))


def _first_extreme(xp, a, d: int, name: str):
    """Index of the first extreme of `a` along axis `d` (the first NaN if any), kept as size 1."""
    idx = getattr(xp, name)(a, axis=d)
    if a.dtype.kind == "f":  # CuPy does not promise the first NaN; numpy does
        nan = xp.isnan(a)
        idx = xp.where(nan.any(axis=d), xp.argmax(nan, axis=d), idx)
    return xp.expand_dims(idx, d)


def _arg(out, self, dim, keepdim, name: str) -> None:
    k = kit_of(out)
    a = k.arr(self)
    if a.ndim == 0:
        k.write(out, 0)
    elif dim is None:  # the flat index, written into () or the keepdim shape (1, ..., 1)
        k.write(out, _first_extreme(k.xp, a.reshape(-1), 0, name).reshape(()))
    else:
        idx = _first_extreme(k.xp, a, dim, name)
        k.write(out, idx if keepdim else idx.squeeze(dim))


def _extremum_dim(out, self, dim, keepdim, name: str) -> None:
    values, indices = out
    k = kit_of(values)
    a = k.arr(self)
    if a.ndim == 0:
        k.write(values, a)
        k.write(indices, 0)
        return
    idx = _first_extreme(k.xp, a, dim, name)
    vals = k.xp.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        idx, vals = idx.squeeze(dim), vals.squeeze(dim)
    k.write(values, vals)
    k.write(indices, idx)


def _max_dim(out, self, dim, keepdim):
    """out = (values, indices) of the first maximum (or NaN) of self along dim"""
    _extremum_dim(out, self, dim, keepdim, "argmax")


def _min_dim(out, self, dim, keepdim):
    """out = (values, indices) of the first minimum (or NaN) of self along dim"""
    _extremum_dim(out, self, dim, keepdim, "argmin")


def argmax(out, self, dim, keepdim):
    """out = the index of the first maximum of self along dim (of the flattened self if None)"""
    _arg(out, self, dim, keepdim, "argmax")


def argmin(out, self, dim, keepdim):
    """out = the index of the first minimum of self along dim (of the flattened self if None)"""
    _arg(out, self, dim, keepdim, "argmin")


def _logical(out, self, dim, keepdim, name: str) -> None:
    k = kit_of(out)
    a = k.arr(self)
    # ``dim=()`` reduces nothing here (numpy's axis=() as well)
    k.write(
        out,
        getattr(k.xp, name)(a, axis=None if dim is None or a.ndim == 0 else dim, keepdims=keepdim),
    )


def any(out, self, dim, keepdim):  # noqa: A001
    """out = whether any element of self over dim is nonzero"""
    _logical(out, self, dim, keepdim, "any")


def all(out, self, dim, keepdim):  # noqa: A001
    """out = whether every element of self over dim is nonzero"""
    _logical(out, self, dim, keepdim, "all")


def _scan(out, self, dim, name: str) -> None:
    k = kit_of(out)
    a = k.arr(self)
    d = out._dtype
    # floats accumulate in double (as PyTorch's CPU scans; float32 would drift), bools in int64
    acc = _F64 if d.is_floating_point else (_I64 if d is _dt.bool else d.numpy)
    k.write(out, a.astype(acc) if a.ndim == 0 else getattr(k.xp, name)(a, axis=dim, dtype=acc))


def cumsum(out, self, dim, dtype):
    """out = the running sum of self along dim"""
    _scan(out, self, dim, "cumsum")


def cumprod(out, self, dim, dtype):
    """out = the running product of self along dim"""
    _scan(out, self, dim, "cumprod")


def softmax_into(out, self, dim: int, log: bool, exp_shift=None) -> None:
    """out = softmax (or log_softmax) of self along `dim`, in out's opmath dtype.
    `exp_shift(x, m)`, when given, computes ``exp(x - m)`` in one pass (a fused GPU kernel)."""
    k = kit_of(out)
    xp = k.xp
    a = k.arr(self)
    if a.size == 0:
        return
    c = acc_float(out._dtype)
    x = a.reshape(1) if a.ndim == 0 else a
    x = x if x.dtype == c else x.astype(c)
    m = x.max(axis=dim, keepdims=True)
    e = exp_shift(x, m) if exp_shift is not None else xp.exp(x - m)
    s = e.sum(axis=dim, keepdims=True)
    if log:
        y = x - (m + xp.log(s))  # a NaN or an all -inf row gives NaN, as in PyTorch
    else:
        e /= s
        y = e
    k.write(out, y.reshape(out._shape))


def softmax(out, self, dim, dtype):
    """out = exp(self - max) / sum(exp(self - max)) along dim"""
    softmax_into(out, self, dim, False)


def log_softmax(out, self, dim, dtype):
    """out = self - max - log(sum(exp(self - max))) along dim"""
    softmax_into(out, self, dim, True)


KERNELS = {
    "sum": sum,
    "prod": prod,
    "amax": amax,
    "amin": amin,
    "argmax": argmax,
    "argmin": argmin,
    "_max_dim": _max_dim,
    "_min_dim": _min_dim,
    "any": any,
    "all": all,
    "cumsum": cumsum,
    "cumprod": cumprod,
    "softmax": softmax,
    "log_softmax": log_softmax,
}
