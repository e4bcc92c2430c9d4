"""Counting: histc, histogram and bincount, composites that add up ones (or weights) with
scatter_add.

histc places x in bin ``floor((x - min) * bins / (max - min))`` (the last bin closed), as
PyTorch's histc; histogram finds each bin by searching the edges (``searchsorted``), as PyTorch's
histogram. Without a range both use the data's minimum and maximum (as tensors: no copy to the
host); only the finiteness check reads values. bincount's length depends on the data.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare
from .searching import searchsorted_positions
from .sorting import holds_data
from .special import VALUES_ONLY

__all__: list[str] = []

_T = Tensor


def _op(name: str):
    return REGISTRY[name].op.entry


def _count(index, weight, bins: int, dtype):
    """A length-`bins` tensor adding up `weight` at each `index` (1-D tensors)."""
    return weight.new_zeros((bins,), dtype=dtype).scatter_add(0, index, weight.to(dtype))


def _data_range(x, widen: float, op: str):
    """(lo, hi) as 0-d tensors: the minimum and maximum of `x`, moved apart by `widen` when
    they are equal; PyTorch's refusal of a non-finite range where the values can be read."""
    lo, hi = x.amin(), x.amax()
    if holds_data(x) and not bool((lo.isfinite() & hi.isfinite()).item()):
        raise RuntimeError(f"{op}: range of [{lo.item()}, {hi.item()}] is not finite")
    same = lo.eq(hi)
    return _op("where")(same, lo - widen, lo), _op("where")(same, hi + widen, hi)


# ---- histc --------------------------------------------------------------------------------------


def _meta_histc(self, bins, min, max):  # noqa: A002 - PyTorch's argument names
    if not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"histc(): not implemented for '{self._dtype.name}'; expected a floating point tensor"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return ((bins,), self._dtype, self._device)


def _histc(self, bins, min, max):  # noqa: A002
    """The histogram of `self` with `bins` equal bins over [min, max] (the data's range when
    min == max); elements outside it (and NaN) are not counted."""
    x = self.reshape(-1)
    if min == max:
        if x.numel() == 0:
            return x.new_zeros((bins,))
        lo, hi = _data_range(x, 1.0, "torch.histc")
    else:
        lo, hi = x.new_full((), min), x.new_full((), max)
    inside = x.ge(lo) & x.le(hi)
    pos = ((x - lo) * bins / (hi - lo)).floor().clamp(0, bins - 1).to(dt.int64)
    return _count(_op("where")(inside, pos, 0), inside, bins, self._dtype)


# ---- histogram ----------------------------------------------------------------------------------


def _meta_histogram(self, bins, range, weight, density):  # noqa: A002
    op = "torch.histogram()"
    if not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"histogram(): not implemented for '{self._dtype.name}'; "
            f"expected a floating point tensor"
        )
    if isinstance(bins, _T):
        if range is not None:
            raise TypeError(
                f"{op}: range= goes with an integer number of bins, not with a tensor of bin edges"
            )
        if len(bins._shape) != 1 or bins._shape[0] < 1:
            raise RuntimeError(
                f"{op}: bins tensor should be 1-D with at least 1 element, got "
                f"shape {list(bins._shape)}"
            )
        if bins._dtype is not self._dtype:
            raise RuntimeError(
                f"torch.histogramdd: input tensor and bins tensors should have "
                f"the same dtype, but got input with dtype {self._dtype.name} "
                f"and bins for dimension 0 with dtype {bins._dtype.name}"
            )
        n_edges = bins._shape[0]
    else:
        if isinstance(bins, bool) or not isinstance(bins, int):
            raise TypeError(
                f"{op}: bins must be an int or a 1-D tensor of edges, got {type(bins).__name__}"
            )
        if bins <= 0:
            raise RuntimeError(f"{op}: bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            if len(range) != 2:
                raise RuntimeError(f"{op}: range should have 2 elements, got {len(range)}")
            if range[0] > range[1]:
                raise RuntimeError(
                    f"torch.histogramdd: min should not exceed max, but got min "
                    f"{range[0]} max {range[1]} for dimension 0"
                )
        n_edges = bins + 1
    if weight is not None and (weight._shape != self._shape or weight._dtype is not self._dtype):
        raise RuntimeError(
            f"{op}: if weight tensor is provided it should have the same shape "
            f"and dtype as the input tensor, got {list(weight._shape)} "
            f"({weight._dtype.name}) for input {list(self._shape)} "
            f"({self._dtype.name})"
        )
    return [((n_edges - 1,), self._dtype, self._device), ((n_edges,), self._dtype, self._device)]


def _linspace_edges(x, lo, hi, bins: int):
    """bins + 1 edges from lo to hi (0-d tensors), computed as PyTorch's linspace: from the
    start for the first half, from the end for the second."""
    i = _op("arange")(bins + 1, dtype=x._dtype, device=x._device)
    step = (hi - lo) / bins
    return _op("where")(i.lt((bins + 1) // 2), lo + step * i, hi - step * (bins - i))


def _histogram(self, bins, range, weight, density):  # noqa: A002
    """(hist, bin_edges): `bins` equal bins over `range` (the data's when None) or the given
    edges; the last bin is closed. `weight` adds weights instead of ones; `density` divides by
    the total and the bin widths."""
    x = self.reshape(-1)
    if isinstance(bins, _T):
        edges = bins
    else:
        if range is not None:
            lo, hi = x.new_full((), range[0]), x.new_full((), range[1])
            same = lo.eq(hi)
            lo, hi = _op("where")(same, lo - 0.5, lo), _op("where")(same, hi + 0.5, hi)
        elif x.numel() == 0:  # numpy's (and PyTorch's) range of no data
            lo, hi = x.new_full((), 0.0), x.new_full((), 1.0)
        else:
            lo, hi = _data_range(x, 0.5, "torch.histogram()")
        edges = _linspace_edges(x, lo, hi, bins)
    n = edges._shape[0] - 1
    inside = x.ge(edges.narrow(0, 0, 1)) & x.le(edges.narrow(0, n, 1))
    pos = (searchsorted_positions(edges, x, True) - 1).clamp(0, max(n - 1, 0))
    w = inside.to(self._dtype) if weight is None else weight.reshape(-1) * inside
    hist = _count(_op("where")(inside, pos, 0), w, n, self._dtype)
    if density:
        hist = hist / hist.sum() / edges.diff()
    return REGISTRY["histogram"].returns(hist, edges)


# ---- bincount -----------------------------------------------------------------------------------


def _bincount(self, weights, minlength):
    """How often each value 0, 1, ..., max(self) occurs in the 1-D non-negative integer tensor
    `self` (at least `minlength` counts); with `weights`, their sums instead."""
    if len(self._shape) != 1 or self._dtype.is_floating_point or self._dtype is dt.bool:
        if self._dtype.is_floating_point:
            raise NotImplementedError(
                f"bincount(): not implemented for '{self._dtype.name}'; "
                f"bincount only supports 1-d non-negative integral inputs."
            )
        raise RuntimeError("bincount(): bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError(f"bincount(): minlength should be >= 0, got {minlength}")
    if weights is not None and weights._shape != self._shape:
        raise RuntimeError("bincount(): weights should be 1-d and have the same length as input")
    size = minlength
    if self.numel():
        if int(self.amin().item()) < 0:
            raise RuntimeError(
                "bincount(): bincount only supports 1-d non-negative integral inputs."
            )
        size = max(size, int(self.amax().item()) + 1)
    index = self.to(dt.int64)
    if weights is None:
        return _count(index, index.new_ones(index._shape), size, dt.int64)
    out = dt.float32 if weights._dtype is dt.float32 else dt.float64
    return _count(index, weights, size, out)


def _declare_all() -> None:
    count: dict[str, Any] = dict(family="reduction", method=True, **VALUES_ONLY)
    declare(
        "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
        _meta_histc,
        impl=_histc,
        **count,
    )
    declare(
        "histogram(Tensor self, Any bins=100, *, float[]? range=None, Tensor? weight=None, "
        "bool density=False) -> (Tensor hist, Tensor bin_edges)",
        _meta_histogram,
        impl=_histogram,
        **count,
    )
    declare(
        "bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor",
        impl=_bincount,
        **count,
    )


_declare_all()
