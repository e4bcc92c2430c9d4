"""Sorting and order statistics: `sort` (the one primitive: stable, NaN as the largest value)
and the composites argsort, msort, topk, kthvalue, median, nanmedian, mode, quantile and
nanquantile.

Order statistics pick positions of the stable sort, so ties resolve to the earliest element in
the sorted order; where PyTorch leaves the index of a tie unspecified (topk, kthvalue) that is a
valid answer. NaN follows PyTorch: median, kthvalue, topk and quantile see it as the largest
value (median and quantile return NaN for a slice holding one; median's index is that of the
first NaN), nanmedian and nanquantile skip it, and mode counts each NaN apart.
"""

from __future__ import annotations

import collections
import math
from typing import Any

from .. import dtypes as dt
from ..tensor.impl import shape_numel
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare, return_types
from .meta_rules import reduced_shape, refuse_complex
from .reductions import flops_reduction

__all__ = ["sorted_along", "holds_data"]

_T = Tensor


def _op(name: str):
    return REGISTRY[name].op.entry


def _named(name: str, *values):
    """``coretorch.return_types.<name>(*values)``."""
    return getattr(return_types, name)(*values)


def _pair(self, shape: tuple) -> list:
    """(values, int64 indices) specs of `shape`."""
    return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]


def _size(self, dim: int) -> int:
    return self._shape[dim] if self._shape else 1


def holds_data(t) -> bool:
    """Whether `t`'s device holds values: refusals that read them (a q outside [0, 1], ...)
    happen only there; a shape-only device such as meta cannot make them."""
    from ..device import get_device_type

    return get_device_type(t._device).has_data


def _dense(t):
    """`t` with contiguous strides (``contiguous()`` keeps an empty view's strides)."""
    return t.contiguous() if t.numel() else t.clone()


def sorted_along(self, dim: int, descending: bool = False):
    """(values, indices) of the stable sort of `self` along `dim`, a 0-d tensor read as one
    element: the start of every order statistic here."""
    x = self if self._shape else self.reshape(1)
    return _op("sort")(x, dim, descending)


# ---- sort, argsort, msort ------------------------------------------------------------------------


def _meta_sort(self, dim, descending, stable):
    if self._dtype.is_complex:
        refuse_complex("sort", self)
    return _pair(self, self._shape)


def _d_sort(ctx, grad, grad_indices=None):
    """Each sorted value's gradient goes back to the element it came from."""
    self = ctx.self
    if not self._shape:
        return (grad,)
    return (grad.new_zeros(self._shape).scatter(ctx.dim, ctx.result[1], grad),)


def _meta_argsort(self, dim, descending, stable):
    return (self._shape, dt.int64, self._device)


def _argsort(self, dim, descending, stable):
    """The indices that sort `self` along `dim` (stable)."""
    return _op("sort")(self, dim, descending)[1]


def _meta_msort(self):
    return (self._shape, self._dtype, self._device)


def _msort(self):
    """`self` sorted along its first dim."""
    return _op("sort")(self, 0)[0]


# ---- topk, kthvalue ------------------------------------------------------------------------------


def _meta_topk(self, k, dim, largest, sorted):  # noqa: A002 - PyTorch's argument name
    if self._dtype.is_complex:
        refuse_complex("topk", self)
    n = _size(self, dim)
    if not 0 <= k <= n:
        raise RuntimeError(
            f"topk(): selected index k out of range (k={k}, but dim {dim} has size {n})"
        )
    return _pair(self, self._shape[:dim] + (k,) + self._shape[dim + 1 :] if self._shape else ())


def _topk(self, k, dim, largest, sorted):  # noqa: A002
    """The `k` largest (or smallest) elements along `dim` and their indices, in sorted order
    (also for ``sorted=False``, where PyTorch promises no order)."""
    values, indices = sorted_along(self, dim, descending=largest)
    if not self._shape:
        return _named("topk", values.reshape(()), indices.reshape(()))
    return _named("topk", _dense(values.narrow(dim, 0, k)), _dense(indices.narrow(dim, 0, k)))


def _meta_kthvalue(self, k, dim, keepdim):
    n = _size(self, dim)
    if n == 0 and self._shape:  # PyTorch's type for an empty dim differs from a bad k's
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {dim} (k={k}, size {n})"
        )
    return _pair(self, reduced_shape(self._shape, (dim,), keepdim) if self._shape else ())


def _pick(self, dim: int, keepdim: bool, pos, name: str, sorted_pair=None):
    """(values, indices) at sorted position `pos` along `dim` (an int, or an int64 tensor of the
    keepdim shape), as the namedtuple of op `name`."""
    values, indices = sorted_pair or sorted_along(self, dim)
    if isinstance(pos, int):
        v, i = values.narrow(dim, pos, 1), indices.narrow(dim, pos, 1)
    else:
        v, i = values.gather(dim, pos), indices.gather(dim, pos)
    if not self._shape:
        return _named(name, v.reshape(()), i.reshape(()))
    if not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return _named(name, _dense(v), _dense(i))


def _kthvalue(self, k, dim, keepdim):
    """The k-th smallest element along `dim` (NaN counts as the largest) and its index."""
    return _pick(self, dim, keepdim, k - 1, "kthvalue")


# ---- median, nanmedian, mode ---------------------------------------------------------------------


def _result_type(name: str, fields: tuple = ("values", "indices")) -> type:
    cls = collections.namedtuple(name, fields)  # type: ignore[misc]  # named at run time
    cls.__module__ = "coretorch.return_types"
    setattr(return_types, name, cls)
    return cls


_result_type("median")
_result_type("nanmedian")


def _meta_median(op: str):
    def meta(self, dim, keepdim):
        if dim is None:
            if keepdim:
                raise TypeError(f"{op}(): keepdim=True needs a dim; got dim=None")
            return ((), self._dtype, self._device)
        if self._shape and self._shape[dim] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")
        return _pair(self, reduced_shape(self._shape, (dim,), keepdim) if self._shape else ())

    meta.__name__ = f"meta_{op}"
    return meta


def _median_position(self, dim: int, skip_nan: bool):
    """The sorted position of the (lower) median along `dim`, keepdim-shaped: (n - 1) // 2, or
    for floats the first NaN (median) or the middle of the non-NaN values (nanmedian)."""
    x = self if self._shape else self.reshape(1)
    n = x._shape[dim]
    shape = reduced_shape(x._shape, (dim,), True)
    if not x._dtype.is_floating_point:
        return (n - 1) // 2
    count = x.isnan().logical_not().sum(dim, keepdim=True)
    middle = x.new_full(shape, (n - 1) // 2, dtype=dt.int64)
    if skip_nan:  # a slice of NaN only: its middle, as PyTorch
        return _op("where")(count.gt(0), (count - 1) // 2, middle)
    return _op("where")(count.lt(n), count, middle)


def _median_impl(op: str):
    skip_nan = op == "nanmedian"

    def impl(self, dim, keepdim):
        if dim is None:
            flat = self.reshape(-1)
            if shape_numel(flat._shape) == 0:
                return self.new_full((), math.nan)
            return _pick(flat, 0, False, _median_position(flat, 0, skip_nan), op).values
        return _pick(self, dim, keepdim, _median_position(self, dim, skip_nan), op)

    impl.__name__ = f"_{op}"
    impl.__doc__ = (
        f"``{op}(t)``: the lower median of all elements; ``{op}(t, dim, keepdim)``: "
        f"(values, indices) along `dim`"
        + (", ignoring NaN." if skip_nan else " (NaN if the slice holds one).")
    )
    return impl


def _meta_mode(self, dim, keepdim):
    if self._shape and self._shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    return _pair(self, reduced_shape(self._shape, (dim,), keepdim) if self._shape else ())


def _mode(self, dim, keepdim):
    """The most frequent value along `dim` (the smallest of equally frequent ones; each NaN
    counts once) and the index of its last occurrence."""
    values, indices = sorted_along(self, dim)
    n = values._shape[dim]
    pos = _op("arange")(n, device=self._device).reshape(
        tuple(n if d == dim else 1 for d in range(len(values._shape)))
    )
    first = values.narrow(dim, 0, 1)
    new_run = _op("cat")(
        [
            first.new_ones(first._shape, dtype=dt.bool),
            values.narrow(dim, 1, n - 1).ne(values.narrow(dim, 0, n - 1)),
        ],
        dim,
    )
    run_start = _op("cummax")(_op("where")(new_run, pos, 0), dim).values
    # the first longest run ends at the first maximum of the running length
    best = (pos - run_start).argmax(dim, keepdim=True)
    return _pick(self, dim, keepdim, best, "mode", (values, indices))


# ---- quantile, nanquantile -----------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _meta_quantile(op: str):
    def meta(self, q, dim, keepdim, interpolation):
        if not self._dtype.is_floating_point or self._dtype.itemsize == 2:
            raise RuntimeError(
                f"{op}() input tensor must be either float or double dtype, got {self._dtype.name}"
            )
        if shape_numel(self._shape) == 0:
            raise RuntimeError(f"{op}() input tensor must be non-empty")
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(
                f"{op}() interpolation must be one of linear, lower, higher, "
                f"midpoint or nearest. Got {interpolation}"
            )
        if isinstance(q, _T):
            if len(q._shape) > 1:
                raise RuntimeError(
                    f"{op}() q must be a scalar or 1D tensor, got a {len(q._shape)}-D tensor"
                )
            if q._dtype is not self._dtype:
                raise RuntimeError(
                    f"{op}() q tensor must be same dtype as the input tensor, got "
                    f"{q._dtype.name} and {self._dtype.name}"
                )
        elif not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
        if dim is None:
            shape = tuple(1 for _ in self._shape) if keepdim else ()
        else:
            shape = reduced_shape(self._shape, (dim,), keepdim)
        if isinstance(q, _T) and q._shape:
            shape = q._shape + shape
        return (shape, self._dtype, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _quantile_impl(op: str):
    skip_nan = op == "nanquantile"

    def impl(self, q, dim, keepdim, interpolation):
        where = _op("where")
        if (
            isinstance(q, _T)
            and holds_data(q)
            and q.numel()
            and not bool((q.ge(0) & q.le(1)).all().item())
        ):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        # the reduced dim last: (..., n)
        x = self.reshape(-1) if dim is None else (self if self._shape else self.reshape(1))
        d = 0 if dim is None else dim
        values = sorted_along(x.movedim(d, -1), -1)[0]
        n = values._shape[-1]
        qs = q if isinstance(q, _T) else values.new_full((), q)
        qs = qs.reshape(-1)  # (k,)
        nan = values.isnan()
        if skip_nan:
            count = nan.logical_not().sum(-1, keepdim=True)  # (..., 1)
            ranks = (qs * (count - 1).to(values._dtype)).clamp_min(0)
        else:
            ranks = (qs * float(n - 1)).expand(values._shape[:-1] + qs._shape)
            ranks = where(nan.any(-1, keepdim=True), float(n - 1), ranks)
        if interpolation == "lower":
            ranks = ranks.floor()
        elif interpolation == "higher":
            ranks = ranks.ceil()
        elif interpolation == "nearest":
            ranks = ranks.round()
        below = ranks.to(dt.int64)
        out = values.gather(-1, below)
        if interpolation in ("linear", "midpoint"):
            weight = ranks - below.to(ranks._dtype) if interpolation == "linear" else 0.5
            above = values.gather(-1, ranks.ceil().to(dt.int64))
            out = out.lerp(above, weight)
        # (..., k) -> (k, reduced shape...)
        out = out.movedim(-1, 0)
        if dim is None:
            rest = tuple(1 for _ in self._shape) if keepdim else ()
        else:
            rest = reduced_shape(self._shape, (dim,), keepdim)
        shape = (qs._shape[0],) + rest if isinstance(q, _T) and q._shape else rest
        return _dense(out.reshape(shape))

    impl.__name__ = f"_{op}"
    impl.__doc__ = (
        "The q-th quantiles of `self` along `dim` (of all elements when None) with "
        "the given interpolation between the neighbouring order statistics"
        + ("; NaN is skipped." if skip_nan else "; NaN if the slice holds one.")
    )
    return impl


def _declare_all() -> None:
    red: dict[str, Any] = dict(family="reduction", flops=flops_reduction)
    declare(
        "sort(Tensor self, Dim dim=-1, bool descending=False, *, bool? stable=False) -> "
        "(Tensor values, Tensor indices)",
        _meta_sort,
        derivative=_d_sort,
        saves=(),
        save_result=True,
        doc="(values, indices) of `input` sorted along `dim`, ascending unless "
        "`descending`; NaN sorts as the largest value; `stable` keeps ties in order.",
        **red,
    )
    declare(
        "argsort(Tensor self, Dim dim=-1, bool descending=False, *, bool stable=False) -> Tensor",
        _meta_argsort,
        impl=_argsort,
        **red,
    )
    declare("msort(Tensor self) -> Tensor", _meta_msort, impl=_msort, **red)
    declare(
        "topk(Tensor self, int k, Dim dim=-1, bool largest=True, bool sorted=True) -> "
        "(Tensor values, Tensor indices)",
        _meta_topk,
        impl=_topk,
        **red,
    )
    declare(
        "kthvalue(Tensor self, int k, Dim dim=-1, bool keepdim=False) -> "
        "(Tensor values, Tensor indices)",
        _meta_kthvalue,
        impl=_kthvalue,
        **red,
    )
    for op in ("median", "nanmedian"):
        declare(
            f"{op}(Tensor self, Dim? dim=None, bool keepdim=False) -> Any",
            _meta_median(op),
            impl=_median_impl(op),
            **red,
        )
    declare(
        "mode(Tensor self, Dim dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
        _meta_mode,
        impl=_mode,
        **red,
    )
    for op in ("quantile", "nanquantile"):
        declare(
            f"{op}(Tensor self, Tensor|Scalar q, Dim? dim=None, bool keepdim=False, *, "
            f"str interpolation='linear') -> Tensor",
            _meta_quantile(op),
            impl=_quantile_impl(op),
            **red,
        )


_declare_all()
