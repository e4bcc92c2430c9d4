"""scatter_reduce and index_reduce: `src` combined into `self` at `index` along `dim` with sum,
prod, mean, amax or amin (``include_self=False`` ignores self's values where something is
scattered).

A composite of indexing ops on the flattened tensor, differentiated through them: each index
entry becomes one linear position ("target"). sum and mean accumulate with `index_put`; amax
and amin sort the values by target (ties in value kept in order) and take each target's last or
first value, then one `index_put` with distinct targets; prod multiplies in rounds, round r
holding the r-th value of every target, so each round writes distinct targets. Which values
meet depends on the data, so a shape-only device (meta) returns self's shape without them.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..device import get_device_type
from ..tensor.impl import contiguous_strides, shape_numel
from .declare import IMPLICIT, declare, op_named as _op
from .indexing import (
    _check_in_range,
    _check_scatter_gather,
    _check_vector_index,
    _coordinates,
    _long,
    _rank1,
    leading_block,
)
from .meta_rules import common_device

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _meta_scatter_reduce(self, dim, index, src, reduce, include_self):
    if reduce not in REDUCTIONS:
        raise RuntimeError(
            f"scatter_reduce(): reduce argument must be one of "
            f"{', '.join(REDUCTIONS)}, got {reduce!r}"
        )
    if src._dtype is not self._dtype:
        raise RuntimeError(
            f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, "
            f"got {self._dtype.name} and {src._dtype.name}"
        )
    _check_scatter_gather("scatter_reduce", self, dim, index, src)
    return (self._shape, self._dtype, common_device("scatter_reduce", self, index, src))


def _targets(x, dim: int, index):
    """The flat position in contiguous `x` that each entry of `index` addresses (1-D)."""
    stride = contiguous_strides(x._shape)
    lin: Any = None
    for k, c in enumerate(_coordinates(index, dim)):
        term = c * stride[k]
        lin = term if lin is None else lin + term
    return lin.expand(index._shape).reshape(-1)


def _segments(lin, first: bool):
    """Mask over `lin` (sorted) marking each run's first (or last) element."""
    differs = lin[1:].ne(lin[:-1])
    edge = _op("ones")((1,), dtype=dt.bool, device=lin._device)
    return _op("cat")([edge, differs] if first else [differs, edge])


def _extreme(flat, lin, vals, reduce: str, include_self: bool):
    """amax/amin: each target's largest/smallest value (sorted by value, then stably by
    target: a target's run is ascending)."""
    by_value = vals.argsort(stable=True)
    order = by_value[lin[by_value].argsort(stable=True)]
    lin, vals = lin[order], vals[order]
    pick = _segments(lin, first=reduce == "amin")
    targets, best = lin[pick], vals[pick]
    if include_self:
        best = (_op("maximum") if reduce == "amax" else _op("minimum"))(flat[targets], best)
    return flat.index_put((targets,), best)


def _product(flat, lin, vals, include_self: bool):
    """prod in rounds: round r multiplies in the r-th value of every target."""
    order = lin.argsort(stable=True)
    slin = lin[order]
    pos = _op("arange")(slin._shape[0], device=lin._device)
    start = _op("where")(_segments(slin, first=True), pos, 0).cummax(0).values
    rank = _op("empty_like")(pos).index_put((order,), pos - start)
    for r in range(int(rank.max().item()) + 1):
        now = rank.eq(r)
        targets, v = lin[now], vals[now]
        if r or include_self:
            v = flat[targets] * v
        flat = flat.index_put((targets,), v)
    return flat


def _scatter_reduce(self, dim, index, src, reduce, include_self):
    """`self` with the values of `src` at `index` along `dim` reduced into it by `reduce`
    (``sum``, ``prod``, ``mean``, ``amax``, ``amin``); with ``include_self=False`` self's
    values at the written positions do not take part."""
    out = self.contiguous()
    if not index.numel() or not get_device_type(self._device).has_data:
        return out.clone()  # shape-only devices: the result's shape is self's
    x, idx = _rank1(out), _long(_rank1(index))
    _check_in_range("scatter_reduce", idx, x._shape[dim], dim)
    lin = _targets(x, dim, idx)
    vals = leading_block(_rank1(src), idx._shape).reshape(-1)
    flat = x.reshape(-1)
    if reduce in ("sum", "mean"):
        zero = _op("zeros")((), dtype=flat._dtype, device=flat._device)
        base = flat if include_self else flat.index_put((lin,), zero)
        res = base.index_put((lin,), vals, accumulate=True)
        if reduce == "mean":
            ones = _op("ones_like")(flat)
            count = ones if include_self else ones.index_put((lin,), zero)
            count = count.index_put((lin,), _op("ones_like")(vals), accumulate=True).clamp_min(1)
            res = res.div(count, rounding_mode=None if flat._dtype.is_floating_point else "floor")
    elif reduce == "prod":
        res = _product(flat, lin, vals, include_self)
    else:
        res = _extreme(flat, lin, vals, reduce, include_self)
    return res.reshape(self._shape)


INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _meta_index_reduce(self, dim, index, source, reduce, include_self):
    if reduce not in INDEX_REDUCTIONS:
        raise RuntimeError(
            f"index_reduce(): reduce argument must be one of "
            f"{', '.join(INDEX_REDUCTIONS)}, got {reduce!r}"
        )
    _check_vector_index("index_reduce", index)
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({self._dtype.name}) and source "
            f"({source._dtype.name}) must have the same scalar type"
        )
    n = shape_numel(index._shape)
    want = self._shape[:dim] + (n,) + self._shape[dim + 1 :] if self._shape else (n,)
    if tuple(source._shape or (1,)) != want:
        raise RuntimeError(
            f"index_reduce_(): source of shape {list(source._shape)} does not "
            f"match self {list(self._shape)} with {n} indices along dim {dim}"
        )
    return (self._shape, self._dtype, common_device("index_reduce", self, index, source))


def _index_reduce(self, dim, index, source, reduce, include_self):
    """`self` with the slices of `source` reduced (prod, mean, amax, amin) into the slices
    at `index` along `dim`: ``scatter_reduce`` with the index spread over the slices."""
    if not self._shape:
        return _scatter_reduce(self, 0, index.reshape(1), source.reshape(1), reduce, include_self)
    shape = [1] * len(self._shape)
    shape[dim] = -1
    spread = index.reshape(shape).expand(source._shape)
    return _scatter_reduce(self, dim, spread, source, reduce, include_self)


declare(
    "scatter_reduce(Tensor self, Dim dim, Tensor index, Tensor src, str reduce, *, "
    "bool include_self=True) -> Tensor",
    _meta_scatter_reduce,
    impl=_scatter_reduce,
    kind=IMPLICIT,
    inplace=True,
    family="indexing",
)
declare(
    "index_reduce(Tensor self, Dim dim, Tensor index, Tensor source, str reduce, *, "
    "bool include_self=True) -> Tensor",
    _meta_index_reduce,
    impl=_index_reduce,
    kind=IMPLICIT,
    inplace=True,
    family="indexing",
)
