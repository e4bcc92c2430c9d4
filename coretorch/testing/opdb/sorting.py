"""OpInfos of sorting, order statistics, searching and counting (coretorch/ops/sorting.py,
searching.py, histograms.py); numpy references.

Samples for ops whose tie order PyTorch leaves unspecified (topk, kthvalue, median) hold distinct
values, so the indices PyTorch gives are the only right ones; sort (stable) and mode (last
occurrence) are checked on ties as well.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, ErrorInput, OpInfo, SampleInput
from .common import INF, NAN, unary_error_inputs
from .scans import holds_data, silent

BOOL = (_dt.bool,)


def _distinct(m, shape, dtype, layout="contiguous"):
    """A tensor of `shape` whose values are all different (a shuffled range for integers)."""
    n = int(np.prod(shape))
    if dtype.is_floating_point:
        return m.make(shape, layout=layout)
    values = m.rng.permutation(n) - (n // 2 if dtype.is_signed else 0)
    return m.make(shape, values=values, layout=layout)


# ---- numpy references -------------------------------------------------------------------------


def _order_key(x):
    """Keys for np.lexsort ordering `x` descending with NaN first (last key = primary)."""
    if x.dtype.kind == "f":
        return (-x, ~np.isnan(x))
    return (-x.astype(np.int64),)


def _sort_1d(x, descending):
    if descending:
        return np.lexsort((np.arange(x.size),) + _order_key(x))
    return np.argsort(x, kind="stable")


def _sort(x, dim=-1, descending=False, *, stable=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    idx = np.empty(moved.shape, np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        idx[pos] = _sort_1d(moved[pos], descending)
    idx = np.moveaxis(idx, -1, dim)
    return np.take_along_axis(x, idx, dim), idx


def _argsort(x, dim=-1, descending=False, *, stable=False):
    return _sort(x, dim, descending)[1]


def _topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    v, i = _sort(x, dim, largest)
    if x.ndim == 0:
        return v, i
    return np.take(v, np.arange(k), dim), np.take(i, np.arange(k), dim)


def _select(v, i, dim, pos, keepdim, ndim):
    if ndim == 0:
        return v, i
    v, i = np.take(v, [pos], dim), np.take(i, [pos], dim)
    if not keepdim:
        v, i = np.squeeze(v, dim), np.squeeze(i, dim)
    return v, i


def _kthvalue(x, k, dim=-1, keepdim=False):
    v, i = _sort(x, dim)
    return _select(v, i, dim, k - 1, keepdim, x.ndim)


def _median_1d(x, skip_nan):
    """(value, index) of PyTorch's lower median of a 1-D array."""
    order = np.argsort(x, kind="stable")
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    count = int((~nan).sum())
    if skip_nan:
        pos = (count - 1) // 2 if count else (x.size - 1) // 2
    else:
        pos = count if count < x.size else (x.size - 1) // 2
    return x[order[pos]], order[pos]


def _median_ref(skip_nan):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            flat = x.reshape(-1)
            return np.asarray(np.nan if flat.size == 0 else _median_1d(flat, skip_nan)[0], x.dtype)
        return _along(x, dim, keepdim, lambda r: _median_1d(r, skip_nan))

    return ref


def _along(x, dim, keepdim, fn):
    """(values, indices) of `fn(1-D slice) -> (value, index)` over every slice along `dim`."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    vals = np.empty(moved.shape[:-1], x.dtype)
    idx = np.empty(moved.shape[:-1], np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        vals[pos], idx[pos] = fn(moved[pos])
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _mode_1d(x):
    """(value, index): the smallest of the most frequent values (each NaN apart) and its last
    occurrence (the first NaN when every value is NaN)."""
    values, counts = np.unique(x, return_counts=True, equal_nan=False)
    v = values[np.argmax(counts)]
    if v != v:
        return v, int(np.argmax(np.isnan(x)))
    return v, int(np.nonzero(x == v)[0][-1])


def _mode(x, dim=-1, keepdim=False):
    return _along(x, dim, keepdim, _mode_1d)


def _quantile_ref(nan_skipping):
    def ref(x, q, dim=None, keepdim=False, *, interpolation="linear"):
        fn = np.nanquantile if nan_skipping else np.quantile
        r = fn(
            x.astype(np.float64),
            np.asarray(q, np.float64),
            axis=dim,
            keepdims=keepdim,
            method=interpolation,
        )
        return np.asarray(r).astype(x.dtype)

    return silent(ref)


# ---- samples ----------------------------------------------------------------------------------


def _sort_samples(op, m, dtype):
    yield SampleInput(m.make((7,)), name="1-d")
    yield SampleInput(m.make((3, 5)), (0,), name="dim0")
    yield SampleInput(m.make((3, 5)), (1, True), name="descending")
    yield SampleInput(
        m.make((3, 5)), kwargs=dict(dim=0, descending=True, stable=True), name="stable-kwargs"
    )
    yield SampleInput(m.make((4, 3), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((0, 3)), (0,), name="zero-size")
    if dtype is not _dt.bool:
        yield SampleInput(m.make((2, 8), low=-2, high=2), (1,), name="ties")
        yield SampleInput(m.make((2, 8), low=-2, high=2), (1, True), name="ties-descending")
    if dtype.is_floating_point:
        vals = [2.0, NAN, -INF, 1.0, NAN, INF, 1.0, -0.0]
        yield SampleInput(m.make((8,), values=vals), name="nan-inf")
        yield SampleInput(m.make((8,), values=vals), (0, True), name="nan-inf-descending")


def _msort_samples(op, m, dtype):
    yield SampleInput(m.make((5, 3)), name="2-d")
    yield SampleInput(m.make((6,), low=-2, high=2), name="ties")
    yield SampleInput(m.make(()), name="0-d")


def _topk_samples(op, m, dtype):
    yield SampleInput(_distinct(m, (8,), dtype), (3,), name="1-d")
    yield SampleInput(_distinct(m, (3, 6), dtype), (2, 0), name="dim0")
    yield SampleInput(_distinct(m, (3, 6), dtype), (4, 1, False), name="smallest")
    yield SampleInput(_distinct(m, (4, 5), dtype, "transposed"), (2,), name="transposed")
    yield SampleInput(_distinct(m, (3, 6), dtype), (0,), name="k=0")
    yield SampleInput(_distinct(m, (3, 6), dtype), (6,), name="k=n")
    yield SampleInput(m.make(()), (1,), name="0-d")
    if dtype.is_floating_point:
        yield SampleInput(m.make((5,), values=[1.0, NAN, 3.0, -INF, 2.0]), (2,), name="nan")
        yield SampleInput(
            m.make((5,), values=[1.0, NAN, 3.0, -INF, 2.0]),
            (2,),
            dict(largest=False),
            name="nan-smallest",
        )


def _topk_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,)), (4,), name="k>n"), RuntimeError, "selected index k out of range"
    )
    yield ErrorInput(
        SampleInput(m.make((3,)), (-1,), name="k<0"), RuntimeError, "selected index k out of range"
    )
    yield ErrorInput(
        SampleInput(m.make((3,)), (1, 2), name="bad-dim"), IndexError, "Dimension out of range"
    )


def _kth_samples(op, m, dtype):
    yield SampleInput(_distinct(m, (7,), dtype), (3,), name="1-d")
    yield SampleInput(_distinct(m, (3, 5), dtype), (2, 0), name="dim0")
    yield SampleInput(_distinct(m, (3, 5), dtype), (5, 1, True), name="k=n-keepdim")
    yield SampleInput(_distinct(m, (4, 3), dtype, "transposed"), (1,), name="transposed")
    yield SampleInput(m.make(()), (1,), name="0-d")
    yield SampleInput(m.make((0, 3)), (2,), name="zero-size")
    if dtype.is_floating_point:
        yield SampleInput(m.make((5,), values=[1.0, NAN, 3.0, NAN, 2.0]), (4,), name="nan")


def _kth_errors(op, m, dtype):
    for k in (0, 4):
        yield ErrorInput(
            SampleInput(m.make((3,)), (k,), name=f"k={k}"),
            RuntimeError,
            "selected number k out of range",
        )


def _median_samples(op, m, dtype):
    yield SampleInput(_distinct(m, (7,), dtype), name="all-odd")
    yield SampleInput(_distinct(m, (3, 4), dtype), name="all-even")
    yield SampleInput(_distinct(m, (3, 5), dtype), (1,), name="dim1")
    yield SampleInput(_distinct(m, (4, 5), dtype), (0, True), name="dim0-keepdim")
    yield SampleInput(_distinct(m, (4, 3), dtype, "transposed"), (1,), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make(()), (0,), name="0-d-dim")
    yield SampleInput(m.make((0, 3)), (1,), name="zero-size")
    if dtype.is_floating_point:
        yield SampleInput(m.make((0,)), name="empty-all")
        vals = [[1.0, NAN, 3.0, NAN, 2.0], [4.0, 1.0, 2.0, 0.5, 3.0], [NAN] * 5]
        yield SampleInput(m.make((3, 5), values=vals), (1,), name="nan-rows")
        yield SampleInput(m.make((5,), values=vals[0]), name="nan-all")


def _median_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((0, 3)), (0,), name="empty-dim"),
        IndexError,
        "Expected reduction dim 0 to have non-zero size",
    )


def _mode_samples(op, m, dtype):
    yield SampleInput(m.make((9,), low=-2, high=3), name="1-d")
    yield SampleInput(m.make((3, 8), low=-2, high=3), (1,), name="dim1")
    yield SampleInput(m.make((8, 3), low=-2, high=3), (0, True), name="dim0-keepdim")
    yield SampleInput(m.make((3, 6), low=-2, high=3, layout="transposed"), (0,), name="transposed")
    # equal counts: a perturbation picks another value, so no finite differences
    yield SampleInput(
        m.make((5,), values=[3, 1, 2, 1, 3]), name="tie-smallest-wins", gradcheck=False
    )
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((0, 3)), (1,), name="zero-size")
    if dtype.is_floating_point:
        yield SampleInput(m.make((6,), values=[1.0, NAN, 2.0, NAN, 2.0, 2.0]), name="nan")


def _quantile_samples(op, m, dtype):
    q = m.make((3,), low=0, high=1)
    yield SampleInput(m.make((7,)), (0.3,), name="scalar-q")
    yield SampleInput(m.make((3, 5)), (q,), dict(dim=1), name="tensor-q-dim1")
    yield SampleInput(m.make((3, 5)), (q, 0, True), name="tensor-q-keepdim")
    yield SampleInput(m.make((3, 5)), (m.make((), low=0, high=1),), name="0-d-q")
    for mode in ("lower", "higher", "midpoint", "nearest"):
        yield SampleInput(m.make((4, 6)), (q,), dict(dim=1, interpolation=mode), name=mode)
    yield SampleInput(m.make((4, 3), layout="transposed"), (0.75,), dict(dim=0), name="transposed")
    yield SampleInput(m.make((2, 3)), (1.0,), dict(keepdim=True), name="all-keepdim")
    vals = [[1.0, NAN, 3.0, 0.5], [4.0, 1.0, 2.0, 0.5], [NAN] * 4]
    yield SampleInput(m.make((3, 4), values=vals), (q,), dict(dim=1), name="nan-rows")


def _quantile_errors(op, m, dtype):
    x = m.make((3,))
    yield ErrorInput(
        SampleInput(x, (1.5,), name="q>1"), RuntimeError, r"q must be in the range \[0, 1\]"
    )
    yield ErrorInput(
        SampleInput(x, (0.5,), dict(interpolation="cubic"), name="interpolation"),
        RuntimeError,
        "interpolation must be one of",
    )
    yield ErrorInput(
        SampleInput(m.make((0,)), (0.5,), name="empty"),
        RuntimeError,
        "input tensor must be non-empty",
    )
    yield ErrorInput(
        SampleInput(x, (m.make((2, 2), low=0, high=1),), name="2-d-q"),
        RuntimeError,
        "q must be a scalar or 1D tensor",
    )
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64), (0.5,), name="int-input"),
        RuntimeError,
        "input tensor must be either float or double dtype",
    )
    if holds_data(m):  # a refusal that reads the values
        yield ErrorInput(
            SampleInput(x, (m.make((2,), values=[0.5, 2.0]),), name="data-dependent-tensor-q>1"),
            RuntimeError,
            r"q values must be in the range \[0, 1\]",
        )


# ---- searching --------------------------------------------------------------------------------


def _searchsorted_ref(seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    side = "right" if right or side == "right" else "left"
    out_dtype = np.int32 if out_int32 else np.int64
    values = np.asarray(values)
    if seq.ndim == 1:
        s = seq if sorter is None else seq[sorter]
        return np.searchsorted(s, values, side=side).astype(out_dtype)
    out = np.empty(values.shape, out_dtype)
    for pos in np.ndindex(seq.shape[:-1]):
        s = seq[pos] if sorter is None else seq[pos][sorter[pos]]
        out[pos] = np.searchsorted(s, values[pos], side=side)
    return out


def _sorted(m, shape, dtype, unique_only=False):
    t = _distinct(m, shape, dtype) if unique_only else m.make(shape, low=-3, high=4)
    return t.sort(-1).values


def _searchsorted_samples(op, m, dtype):
    seq = _sorted(m, (6,), dtype)
    yield SampleInput(seq, (m.make((3, 4), low=-4, high=5),), name="1-d-boundaries")
    yield SampleInput(seq, (m.make((3, 4), low=-4, high=5),), dict(right=True), name="right")
    yield SampleInput(
        seq,
        (m.make((5,), low=-4, high=5),),
        dict(side="right", out_int32=True),
        name="side-right-int32",
    )
    yield SampleInput(
        _sorted(m, (2, 3, 5), dtype), (m.make((2, 3, 4), low=-4, high=5),), name="batched"
    )
    yield SampleInput(seq, (2,), name="scalar-value")
    yield SampleInput(seq, (m.make((0,)),), name="no-values")
    yield SampleInput(m.make((0,)), (m.make((3,)),), name="empty-boundaries")
    unsorted = _distinct(m, (6,), dtype)
    yield SampleInput(
        unsorted, (m.make((4,), low=-4, high=5),), dict(sorter=unsorted.argsort()), name="sorter"
    )
    yield SampleInput(_sorted(m, (1,), dtype), (m.make((3,), low=-4, high=5),), name="one-boundary")


def _searchsorted_errors(op, m, dtype):
    seq = m.make((2, 3)).sort(-1).values
    yield ErrorInput(
        SampleInput(seq, (m.make((1,)),), name="batch-mismatch"),
        RuntimeError,
        "first N-1 dimensions of boundaries tensor and input value tensor must match",
    )
    yield ErrorInput(
        SampleInput(seq, (2,), name="scalar-batched"),
        RuntimeError,
        "input value can be a scalar only when boundaries tensor dimension is 1",
    )
    yield ErrorInput(
        SampleInput(seq[0], (m.make((2,)),), dict(side="x"), name="side"),
        RuntimeError,
        "side can only be 'left' or 'right'",
    )
    yield ErrorInput(
        SampleInput(seq[0], (m.make((2,)),), dict(side="left", right=True), name="side-right"),
        RuntimeError,
        "side and right can't be set to opposites",
    )
    yield ErrorInput(
        SampleInput(m.make(()), (m.make((2,)),), name="0-d-boundaries"),
        RuntimeError,
        "boundaries tensor should have positive dimension",
    )
    yield ErrorInput(
        SampleInput(
            seq[0],
            (m.make((2,)),),
            dict(sorter=m.make((3,), dtype=_dt.int32, low=0, high=3)),
            name="sorter-dtype",
        ),
        RuntimeError,
        "sorter must be a tensor of long dtype",
    )
    yield ErrorInput(
        SampleInput(seq[0], (m.make((2,)),), dict(sorter=m.index((2,), 3)), name="sorter-size"),
        RuntimeError,
        "boundary and sorter must have the same size",
    )
    if holds_data(m):  # a refusal that reads the values
        yield ErrorInput(
            SampleInput(
                seq[0],
                (m.make((2,)),),
                dict(sorter=m.make((3,), dtype=_dt.int64, values=[0, 1, 5])),
                name="data-dependent-sorter-range",
            ),
            RuntimeError,
            "sorter index out of range",
        )


def _bucketize_ref(x, boundaries, *, out_int32=False, right=False):
    return _searchsorted_ref(boundaries, x, out_int32=out_int32, right=right)


def _bucketize_samples(op, m, dtype):
    b = _sorted(m, (5,), dtype)
    yield SampleInput(m.make((3, 4), low=-4, high=5), (b,), name="2-d")
    yield SampleInput(m.make((3, 4), low=-4, high=5), (b,), dict(right=True), name="right")
    yield SampleInput(m.make((4,), low=-4, high=5), (b,), dict(out_int32=True), name="int32")
    yield SampleInput(m.make(()), (b,), name="0-d")


def _bucketize_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,)), (m.make((2, 2)),), name="2-d-boundaries"),
        RuntimeError,
        r"boundaries tensor must be 1 dimension, but got dim\(2\)",
    )


def _unique_ref(
    x,
    sorted=True,
    return_inverse=False,
    return_counts=False,  # noqa: A002
    dim=None,
):
    res = np.unique(
        x, return_inverse=return_inverse, return_counts=return_counts, axis=dim, equal_nan=False
    )
    if not isinstance(res, tuple):
        return res.reshape(-1) if dim is None else res
    out = list(res)
    if return_inverse:
        out[1] = out[1].reshape(x.shape if dim is None else -1).astype(np.int64)
    if return_counts:
        out[-1] = out[-1].astype(np.int64)
    if dim is None:
        out[0] = out[0].reshape(-1)
    return tuple(out)


def _unique_samples(op, m, dtype):
    kw = dict(low=-2, high=3)
    yield SampleInput(m.make((9,), **kw), name="1-d")
    yield SampleInput(m.make((3, 4), **kw), kwargs=dict(return_inverse=True), name="inverse")
    yield SampleInput(m.make((3, 4), **kw), kwargs=dict(return_counts=True), name="counts")
    yield SampleInput(
        m.make((3, 4), **kw), kwargs=dict(return_inverse=True, return_counts=True), name="both"
    )
    rows = m.make((5, 2), values=[[1, 2], [0, 2], [1, 2], [0, 1], [0, 2]])
    yield SampleInput(
        rows, kwargs=dict(dim=0, return_inverse=True, return_counts=True), name="rows"
    )
    yield SampleInput(
        rows.t().contiguous(), kwargs=dict(dim=1, return_inverse=True), name="columns"
    )
    yield SampleInput(m.make((4, 3), layout="transposed", **kw), name="transposed")
    yield SampleInput(m.make(()), kwargs=dict(return_inverse=True, return_counts=True), name="0-d")
    yield SampleInput(
        m.make((0, 3)), kwargs=dict(return_inverse=True, return_counts=True), name="zero-size"
    )
    yield SampleInput(
        m.make((0, 3)), kwargs=dict(dim=0, return_inverse=True, return_counts=True), name="no-rows"
    )
    if dtype.is_floating_point:
        yield SampleInput(
            m.make((6,), values=[2.0, NAN, 1.0, 2.0, NAN, -0.0]),
            kwargs=dict(return_inverse=True, return_counts=True),
            name="nan",
        )


def _unique_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make(()), kwargs=dict(dim=0), name="0-d-dim"),
        IndexError,
        "tensor has no dimensions",
    )
    yield ErrorInput(
        SampleInput(m.make((3, 0)), kwargs=dict(dim=0), name="empty-other-dim"),
        RuntimeError,
        "There are 0 sized dimensions",
    )


def _unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    rows = x.reshape(-1) if dim is None else np.moveaxis(x, dim, 0)
    m = rows.shape[0]
    flat = rows.reshape(m, int(np.prod(rows.shape[1:])))
    new = np.ones(m, bool)
    if m > 1:
        new[1:] = (flat[1:] != flat[:-1]).any(axis=1)
    out = rows[new] if dim is None else np.moveaxis(rows[new], 0, dim)
    res = [out]
    run = np.cumsum(new) - 1
    if return_inverse:
        res.append(run.reshape(x.shape if dim is None else -1).astype(np.int64))
    if return_counts:
        res.append(np.bincount(run, minlength=int(new.sum())).astype(np.int64))
    return res[0] if len(res) == 1 else tuple(res)


def _unique_consecutive_samples(op, m, dtype):
    vals = [1, 1, 2, 2, 0, 1, 1, 2]
    yield SampleInput(m.make((8,), values=vals), name="1-d")
    yield SampleInput(
        m.make((8,), values=vals), kwargs=dict(return_inverse=True, return_counts=True), name="both"
    )
    yield SampleInput(
        m.make((2, 4), values=vals), kwargs=dict(return_inverse=True), name="2-d-flat"
    )
    rows = m.make((5, 2), values=[[1, 2], [1, 2], [0, 2], [1, 2], [1, 2]])
    yield SampleInput(rows, kwargs=dict(dim=0, return_counts=True), name="rows")
    yield SampleInput(m.make((0, 2)), kwargs=dict(dim=0, return_counts=True), name="no-rows")
    yield SampleInput(m.make(()), kwargs=dict(return_inverse=True), name="0-d")
    if dtype.is_floating_point:
        yield SampleInput(
            m.make((5,), values=[NAN, NAN, 1.0, 1.0, NAN]),
            kwargs=dict(return_counts=True),
            name="nan",
        )


# ---- multinomial --------------------------------------------------------------------------------


def _multinomial_shape(p, num_samples, replacement=False, *, generator=None):
    return np.empty(p.shape[:-1] + (num_samples,), np.int64)


def _multinomial_range(values, s):
    p = np.asarray(s.input.detach())
    replacement = s.args[1] if len(s.args) > 1 else s.kwargs.get("replacement", False)
    rows = values.reshape(-1, values.shape[-1])
    for r, pr in zip(rows, p.reshape(-1, p.shape[-1])):
        assert ((r >= 0) & (r < p.shape[-1])).all(), f"category out of range: {r}"
        drawn_positive = int((pr[r] > 0).sum())
        if replacement:
            assert drawn_positive == len(r), f"drew a category of probability 0: {r} for {pr}"
        else:
            assert len(set(r.tolist())) == len(r), f"repeated category without replacement: {r}"
            assert drawn_positive == min(len(r), int((pr > 0).sum())), (
                f"drew a category of probability 0 before the positive ones: {r} for {pr}"
            )


def _multinomial_samples(op, m, dtype):
    yield SampleInput(m.make((5,), low=0, high=1), (3,), name="without-replacement")
    yield SampleInput(m.make((5,), low=0, high=1), (12, True), name="with-replacement")
    yield SampleInput(m.make((3, 4), low=0, high=1), (2,), name="rows")
    yield SampleInput(
        m.make((3, 4), low=0, high=1), (6,), dict(replacement=True), name="rows-replacement"
    )
    yield SampleInput(m.make((4,), values=[0.0, 1.0, 0.0, 2.0]), (20, True), name="zeros")


def _multinomial_errors(op, m, dtype):
    p = m.make((3,), low=0, high=1)
    yield ErrorInput(
        SampleInput(p, (0,), name="no-samples"), RuntimeError, "cannot sample n_sample <= 0 samples"
    )
    yield ErrorInput(
        SampleInput(p, (4,), name="too-many"),
        RuntimeError,
        "cannot sample n_sample > prob_dist.size",
    )
    yield ErrorInput(
        SampleInput(m.make((2, 2, 2), low=0, high=1), (1,), name="3-d"),
        RuntimeError,
        "prob_dist must be 1 or 2 dim",
    )
    yield ErrorInput(
        SampleInput(m.make((2,), dtype=_dt.int64), (1,), name="int"),
        RuntimeError,
        "multinomial only supports floating-point dtypes",
    )
    if holds_data(m):  # refusals that read the values
        yield ErrorInput(
            SampleInput(
                m.make((3,), values=[1.0, -1.0, 1.0]), (1,), name="data-dependent-negative"
            ),
            RuntimeError,
            "probability tensor contains either `inf`, `nan` or element",
        )
        yield ErrorInput(
            SampleInput(m.make((2,), values=[0.0, 0.0]), (1,), name="data-dependent-zero-sum"),
            RuntimeError,
            r"invalid multinomial distribution \(sum of probabilities",
        )


# ---- histc, histogram, bincount -----------------------------------------------------------------


def _histc_ref(x, bins=100, min=0, max=0):  # noqa: A002
    x = x.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(x[~np.isnan(x)], bins, range=(lo, hi))[0].astype(x.dtype)


def _histc_samples(op, m, dtype):
    yield SampleInput(m.make((20,)), kwargs=dict(bins=5), name="data-range")
    yield SampleInput(m.make((4, 5)), (6, -3, 4), name="given-range")
    yield SampleInput(m.make((4, 5), layout="transposed"), (4,), name="transposed")
    yield SampleInput(m.make((3,), values=[1.0, 1.0, 1.0]), (4,), name="all-equal")
    yield SampleInput(
        m.make((6,), values=[0.0, 1.0, 2.0, 3.0, 4.0, NAN]), (4, 0, 4), name="edges-nan"
    )
    yield SampleInput(m.make((0,)), (3,), name="empty")
    yield SampleInput(m.make((10,)), name="default-bins")


def _histc_errors(op, m, dtype):
    x = m.make((3,))
    yield ErrorInput(SampleInput(x, (0,), name="bins=0"), RuntimeError, "bins must be > 0")
    yield ErrorInput(
        SampleInput(x, (3, 3, 1), name="min>max"), RuntimeError, "max must be larger than min"
    )
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64), (3,), name="int"),
        NotImplementedError,
        "not implemented for 'int64'",
    )
    if holds_data(m):  # a refusal that reads the values
        yield ErrorInput(
            SampleInput(
                m.make((3,), values=[1.0, NAN, 2.0]), (3,), name="data-dependent-nan-range"
            ),
            RuntimeError,
            "is not finite",
        )


def _histogram_ref(x, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    x = x.reshape(-1)
    if not isinstance(bins, np.ndarray) and range is None and x.size:
        range = (float(x.min()), float(x.max()))
    if range is not None and range[0] == range[1]:
        range = (range[0] - 0.5, range[1] + 0.5)
    h, e = np.histogram(
        x,
        bins,
        range=range,
        weights=None if weight is None else weight.reshape(-1),
        density=density,
    )
    return h.astype(x.dtype), e.astype(x.dtype)


def _histogram_samples(op, m, dtype):
    yield SampleInput(m.make((20,)), (5,), name="data-range")
    yield SampleInput(m.make((4, 5)), (6,), dict(range=(-3.0, 4.0)), name="range-2-d")
    w = m.make((4, 5), low=0, high=2)
    yield SampleInput(m.make((4, 5)), (4,), dict(weight=w), name="weights")
    yield SampleInput(m.make((4, 5)), (4,), dict(weight=w, density=True), name="density")
    edges = m.make((5,), values=[-9.0, -2.0, 0.0, 1.5, 9.0])
    yield SampleInput(m.make((4, 5)), (edges,), name="edges")
    yield SampleInput(m.make((4, 5)), (edges,), dict(density=True), name="edges-density")
    yield SampleInput(m.make((3,), values=[1.0, 1.0, 1.0]), (4,), name="all-equal")
    yield SampleInput(m.make((0,)), (2,), name="empty")


def _histogram_errors(op, m, dtype):
    x = m.make((3,))
    yield ErrorInput(SampleInput(x, (0,), name="bins=0"), RuntimeError, "bins must be > 0")
    yield ErrorInput(
        SampleInput(x, (2,), dict(range=(3.0, 1.0)), name="min>max"),
        RuntimeError,
        "min should not exceed max",
    )
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64), (3,), name="int"),
        NotImplementedError,
        "not implemented for 'int64'",
    )
    other = _dt.float64 if dtype is not _dt.float64 else _dt.float32
    yield ErrorInput(
        SampleInput(x, (m.make((3,), dtype=other),), name="edges-dtype"),
        RuntimeError,
        "should have the same dtype",
    )


def _bincount_samples(op, m, dtype):
    x = m.make((10,), dtype=_dt.int64, low=0, high=6)
    yield SampleInput(x, name="counts")
    yield SampleInput(x, kwargs=dict(minlength=9), name="minlength")
    yield SampleInput(x, (m.make((10,)),), name="weights")
    yield SampleInput(m.make((0,), dtype=_dt.int64), kwargs=dict(minlength=3), name="empty")
    yield SampleInput(m.make((4,), dtype=_dt.uint8, low=0, high=4), name="uint8")


def _bincount_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((2, 2), dtype=_dt.int64, low=0, high=3), name="2-d"),
        RuntimeError,
        "bincount only supports 1-d non-negative integral inputs",
    )
    yield ErrorInput(
        SampleInput(
            m.make((3,), dtype=_dt.int64, low=0, high=3),
            kwargs=dict(minlength=-1),
            name="minlength",
        ),
        RuntimeError,
        "minlength should be >= 0",
    )
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64, low=0, high=3), (m.make((2,)),), name="weights"),
        RuntimeError,
        "weights should be 1-d and have the same length as input",
    )
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.float32), name="float"), NotImplementedError, "bincount"
    )
    if holds_data(m):  # a refusal that reads the values
        yield ErrorInput(
            SampleInput(
                m.make((3,), dtype=_dt.int64, values=[1, -1, 2]), name="data-dependent-negative"
            ),
            RuntimeError,
            "bincount only supports 1-d non-negative integral inputs",
        )


def _bincount_ref(x, weights=None, minlength=0):
    r = np.bincount(x, weights, minlength)
    if weights is None:
        return r.astype(np.int64)
    return r.astype(np.float32 if weights.dtype == np.float32 else np.float64)


_SORT_TOL = {_dt.float32: (1e-5, 1e-5)}

OPS: list[OpInfo] = [
    OpInfo(
        "sort",
        dtypes=ALL + BOOL,
        ref=_sort,
        sample_inputs_func=_sort_samples,
        error_inputs_func=unary_error_inputs,
    ),
    OpInfo("argsort", dtypes=ALL, ref=_argsort, sample_inputs_func=_sort_samples),
    OpInfo("msort", dtypes=ALL, ref=lambda x: _sort(x, 0)[0], sample_inputs_func=_msort_samples),
    OpInfo(
        "topk",
        dtypes=ALL,
        ref=_topk,
        sample_inputs_func=_topk_samples,
        error_inputs_func=_topk_errors,
    ),
    OpInfo(
        "kthvalue",
        dtypes=ALL,
        ref=_kthvalue,
        sample_inputs_func=_kth_samples,
        error_inputs_func=_kth_errors,
    ),
    OpInfo(
        "median",
        dtypes=ALL,
        ref=_median_ref(False),
        sample_inputs_func=_median_samples,
        error_inputs_func=_median_errors,
    ),
    OpInfo(
        "nanmedian",
        dtypes=ALL,
        ref=_median_ref(True),
        sample_inputs_func=_median_samples,
        error_inputs_func=_median_errors,
    ),
    OpInfo("mode", dtypes=ALL, ref=_mode, sample_inputs_func=_mode_samples),
    OpInfo(
        "quantile",
        dtypes=FLOATS,
        ref=_quantile_ref(False),
        sample_inputs_func=_quantile_samples,
        error_inputs_func=_quantile_errors,
        tol=_SORT_TOL,
    ),
    OpInfo(
        "nanquantile",
        dtypes=FLOATS,
        ref=_quantile_ref(True),
        sample_inputs_func=_quantile_samples,
        error_inputs_func=_quantile_errors,
        tol=_SORT_TOL,
    ),
    OpInfo(
        "searchsorted",
        dtypes=ALL,
        ref=_searchsorted_ref,
        sample_inputs_func=_searchsorted_samples,
        error_inputs_func=_searchsorted_errors,
    ),
    OpInfo(
        "bucketize",
        dtypes=ALL,
        ref=_bucketize_ref,
        sample_inputs_func=_bucketize_samples,
        error_inputs_func=_bucketize_errors,
    ),
    OpInfo(
        "unique",
        dtypes=ALL + BOOL,
        ref=_unique_ref,
        sample_inputs_func=_unique_samples,
        error_inputs_func=_unique_errors,
        data_dependent=True,
    ),
    OpInfo(
        "unique_consecutive",
        dtypes=ALL,
        ref=_unique_consecutive_ref,
        sample_inputs_func=_unique_consecutive_samples,
        data_dependent=True,
    ),
    OpInfo(
        "multinomial",
        dtypes=FLOATS,
        ref=_multinomial_shape,
        random=True,
        supports_autograd=False,
        value_range=_multinomial_range,
        sample_inputs_func=_multinomial_samples,
        error_inputs_func=_multinomial_errors,
    ),
    OpInfo(
        "histc",
        dtypes=FLOATS,
        ref=_histc_ref,
        sample_inputs_func=_histc_samples,
        error_inputs_func=_histc_errors,
    ),
    OpInfo(
        "histogram",
        dtypes=FLOATS,
        ref=_histogram_ref,
        sample_inputs_func=_histogram_samples,
        error_inputs_func=_histogram_errors,
        tol=_SORT_TOL,
    ),
    OpInfo(
        "bincount",
        dtypes=(_dt.int64,),
        ref=_bincount_ref,
        sample_inputs_func=_bincount_samples,
        error_inputs_func=_bincount_errors,
        data_dependent=True,
    ),
]
