"""Searching and uniqueness: searchsorted, bucketize, unique, unique_consecutive, and
multinomial (sampling by search). All composites.

`searchsorted` is PyTorch's binary search written with gather and where: every value moves its
own [lo, hi) window in lockstep for bit_length(n) steps, with PyTorch's exact comparisons
(``!(s >= v)`` for the left side, ``!(s > v)`` for the right), so NaN and unsorted inputs give
what PyTorch gives. unique sorts (stable) and marks where a run of equal values starts; its
output size depends on the data, so it needs a device with data (meta refuses it).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import REGISTRY, declare
from .sorting import holds_data

__all__ = ["searchsorted_positions"]

_T = TensorImpl


def _op(name: str):
    return REGISTRY[name].op.entry


# ---- searchsorted, bucketize --------------------------------------------------------------------


def _meta_searchsorted(sorted_sequence, self, out_int32, right, side, sorter):
    seq, op = sorted_sequence, "torch.searchsorted()"
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError(
            f"{op}: side and right can't be set to opposites, got side of left while right was True"
        )
    if not seq._shape:
        raise RuntimeError(
            f"{op}: boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if sorter is not None:
        if sorter._dtype is not dt.int64:
            raise RuntimeError(
                f"{op}: sorter must be a tensor of long dtype but got dtype {sorter._dtype.name}"
            )
        if sorter._shape != seq._shape:
            raise RuntimeError(
                f"{op}: boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq._shape)} and got sorter tensor "
                f"{list(sorter._shape)}"
            )
    shape = self._shape if isinstance(self, _T) else ()
    if not shape and len(seq._shape) != 1:
        raise RuntimeError(
            f"{op}: input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({len(seq._shape)}) "
            f"and input value's dim(0) numel(1)"
        )
    if len(seq._shape) != 1 and seq._shape[:-1] != shape[:-1]:
        raise RuntimeError(
            f"{op}: boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, "
            f"but we got boundaries tensor {list(seq._shape)} and input value "
            f"tensor {list(shape)}"
        )
    return (shape, dt.int32 if out_int32 else dt.int64, seq._device)


def searchsorted_positions(seq, values, right: bool, sorter=None):
    """The insertion positions of `values` (a tensor or a number) in the last dim of `seq`
    (1-D, or with the leading dims of `values`): PyTorch's lower (upper for `right`) bound."""
    n = seq._shape[-1]
    batched = len(seq._shape) > 1
    shape = values._shape if isinstance(values, _T) else ()
    lo = seq.new_zeros(shape, dtype=dt.int64)
    hi = seq.new_full(shape, n, dtype=dt.int64)
    where = _op("where")

    def at(positions):
        if batched:
            i = positions if sorter is None else sorter.gather(-1, positions)
            return seq.gather(-1, i)
        flat = positions.reshape(-1)
        if sorter is not None:
            flat = sorter.index_select(0, flat)
        return seq.index_select(0, flat).reshape(positions._shape)

    for _ in range(n.bit_length()):
        active = lo.lt(hi)
        mid = (lo + hi) // 2
        s = at(mid.clamp_max(n - 1))
        # PyTorch's comparisons, negated: NaN on either side moves right
        go_right = (s.gt(values) if right else s.ge(values)).logical_not()
        lo = where(active & go_right, mid + 1, lo)
        hi = where(active & go_right.logical_not(), mid, hi)
    return lo


def _searchsorted(sorted_sequence, self, out_int32, right, side, sorter):
    """The index of each value's insertion point in `sorted_sequence`'s last dim (before equal
    entries, or after them with ``right=True`` / ``side='right'``); `sorter` gives the order of an
    unsorted sequence."""
    if sorter is not None and holds_data(sorter) and sorter.numel():
        n = sorted_sequence._shape[-1]
        if not bool((sorter.ge(0) & sorter.lt(n)).all().item()):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    pos = searchsorted_positions(sorted_sequence, self, right or side == "right", sorter)
    return pos.to(dt.int32) if out_int32 else pos


def _meta_bucketize(self, boundaries, out_int32, right):
    if len(boundaries._shape) != 1:
        raise RuntimeError(
            f"bucketize(): boundaries tensor must be 1 dimension, but got "
            f"dim({len(boundaries._shape)})"
        )
    shape = self._shape if isinstance(self, _T) else ()
    return (shape, dt.int32 if out_int32 else dt.int64, boundaries._device)


def _bucketize(self, boundaries, out_int32, right):
    """The index of the bucket of `boundaries` each value falls in (searchsorted in the 1-D
    `boundaries`)."""
    pos = searchsorted_positions(boundaries, self, right)
    return pos.to(dt.int32) if out_int32 else pos


# ---- unique, unique_consecutive ------------------------------------------------------------------


def _as_rows(x):
    """`x` as a matrix: one row per index of its first dim (also when it has none)."""
    width = 1
    for n in x._shape[1:]:
        width *= n
    return x.reshape(x._shape[0], width)


def _runs(rows, order, like_shape: tuple, return_inverse: bool, return_counts: bool):
    """unique's outputs for `rows` (m, ...) already in order (`order`: their positions in the
    input, or None when not permuted): the first row of each run of equal rows, and, as asked,
    each input row's run and the run lengths."""
    m = rows._shape[0]
    flat = _as_rows(rows)
    if m > 0:
        differs = flat.narrow(0, 1, m - 1).ne(flat.narrow(0, 0, m - 1)).any(1)
        new = _op("cat")([differs.new_ones((1,)), differs])
    else:
        new = flat.new_zeros((0,), dtype=dt.bool)
    out = rows[new]
    result = [out]
    if return_inverse or return_counts:
        run = new.cumsum(0) - 1
        if return_inverse:
            inverse = run if order is None else run.new_empty((m,)).scatter(0, order, run)
            result.append(inverse.reshape(like_shape))
        if return_counts:
            k = out._shape[0]
            result.append(run.new_zeros((k,)).scatter_add(0, run, run.new_ones((m,))))
    return result[0] if len(result) == 1 else tuple(result)


def _check_unique(op: str, self, dim) -> None:
    if dim is not None:
        if not self._shape:
            raise IndexError(f"{op}(): Dimension specified as {dim} but tensor has no dimensions")
        if any(s == 0 for d, s in enumerate(self._shape) if d != dim):
            raise RuntimeError(
                f"{op}(): There are 0 sized dimensions, and they aren't selected, "
                f"so unique cannot be applied"
            )


def _lexsort_rows(rows):
    """The stable lexicographic order of the rows of `rows` (m, r): stable sorts by each column,
    the last column first."""
    m = rows._shape[0]
    order = _op("arange")(m, device=rows._device)
    for c in range(rows._shape[1] - 1, -1, -1):
        key = rows.select(1, c).index_select(0, order)
        order = order.index_select(0, _op("sort")(key, 0)[1])
    return order


def _unique(self, sorted, return_inverse, return_counts, dim):  # noqa: A002
    """The distinct elements of `self` in ascending order (slices along `dim` when given, in
    lexicographic order); with the index of each input element's value (`return_inverse`) and
    each value's count (`return_counts`). Each NaN is distinct."""
    _check_unique("unique", self, dim)
    if dim is None:
        values, order = _op("sort")(self.reshape(-1), 0)
        return _runs(values, order, self._shape, return_inverse, return_counts)
    x = self.movedim(dim, 0)
    m = x._shape[0]
    order = _lexsort_rows(_as_rows(x))
    res = _runs(x.index_select(0, order), order, (m,), return_inverse, return_counts)
    return _moved_back(res, dim)


def _moved_back(res, dim: int):
    if isinstance(res, tuple):
        return (res[0].movedim(0, dim),) + res[1:]
    return res.movedim(0, dim)


def _unique_consecutive(self, return_inverse, return_counts, dim):
    """`self` with each run of equal consecutive elements (slices along `dim`) reduced to one;
    with each element's run (`return_inverse`) and the run lengths (`return_counts`)."""
    _check_unique("unique_consecutive", self, dim)
    if dim is None:
        return _runs(self.reshape(-1), None, self._shape, return_inverse, return_counts)
    x = self.movedim(dim, 0)
    return _moved_back(_runs(x, None, (x._shape[0],), return_inverse, return_counts), dim)


# ---- multinomial ---------------------------------------------------------------------------------


def _meta_multinomial(self, num_samples, replacement, generator):
    if len(self._shape) not in (1, 2):
        raise RuntimeError(f"multinomial(): prob_dist must be 1 or 2 dim, got {len(self._shape)}")
    if not self._dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial(): multinomial only supports floating-point dtypes for "
            f"input, got: {self._dtype.name}"
        )
    if num_samples <= 0:
        raise RuntimeError(
            f"multinomial(): cannot sample n_sample <= 0 samples (got {num_samples})"
        )
    if not replacement and num_samples > self._shape[-1]:
        raise RuntimeError(
            f"multinomial(): cannot sample n_sample > prob_dist.size(-1) samples "
            f"without replacement ({num_samples} > {self._shape[-1]})"
        )
    return (self._shape[:-1] + (num_samples,), dt.int64, self._device)


def _check_distribution(p) -> None:
    """PyTorch's refusals of a probability tensor (they read the values)."""
    if not bool((p.ge(0) & p.isfinite()).all().item()):
        raise RuntimeError(
            "multinomial(): probability tensor contains either `inf`, `nan` or element < 0"
        )
    if not bool(p.sum(-1).gt(0).all().item()):
        raise RuntimeError(
            "multinomial(): invalid multinomial distribution (sum of probabilities <= 0)"
        )


def _multinomial(self, num_samples, replacement, generator):
    """`num_samples` category indices per row drawn with probabilities proportional to `self`
    (without replacement: the largest p / E with E ~ Exp(1), as PyTorch)."""
    p = self.to(dt.opmath_dtype(self._dtype))
    if holds_data(p) and p.numel():
        _check_distribution(p)
    n = p._shape[-1]
    if not replacement:
        u = p.new_empty(p._shape).uniform_(0.0, 1.0, generator=generator)
        keys = p / u.neg().log1p().neg()
        return keys.topk(num_samples, -1).indices
    cdf = p.cumsum(-1)
    cdf = cdf / cdf.narrow(-1, n - 1, 1)
    u = p.new_empty(p._shape[:-1] + (num_samples,)).uniform_(0.0, 1.0, generator=generator)
    return searchsorted_positions(cdf, u, False).clamp_max(n - 1)


def _declare_all() -> None:
    search: dict[str, Any] = dict(family="search", differentiable=False, method=False)
    declare(
        "searchsorted(Tensor sorted_sequence, Tensor|Scalar self, *, bool out_int32=False, "
        "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
        _meta_searchsorted,
        impl=_searchsorted,
        **search,
    )
    declare(
        "bucketize(Tensor|Scalar self, Tensor boundaries, *, bool out_int32=False, "
        "bool right=False) -> Tensor",
        _meta_bucketize,
        impl=_bucketize,
        **search,
    )
    declare(
        "unique(Tensor self, bool sorted=True, bool return_inverse=False, "
        "bool return_counts=False, Dim? dim=None) -> Any",
        impl=_unique,
        family="search",
        differentiable=False,
    )
    declare(
        "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
        "Dim? dim=None) -> Any",
        impl=_unique_consecutive,
        family="search",
        differentiable=False,
    )
    declare(
        "multinomial(Tensor self, int num_samples, bool replacement=False, *, "
        "Generator? generator=None) -> Tensor",
        _meta_multinomial,
        impl=_multinomial,
        family="random",
        differentiable=False,
    )


_declare_all()
