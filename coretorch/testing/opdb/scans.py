"""OpInfos of the scans, differences and NaN-aware reductions (coretorch/ops/scans.py,
statistics.py); numpy and scipy references."""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, ErrorInput, OpInfo, SampleInput
from .common import INF, NAN, np_reduce_axis, quiet, reduction_samples

BOOL = (_dt.bool,)
_TOL = {_dt.float32: (1e-5, 1e-5)}


def holds_data(m) -> bool:
    """Whether the maker's device holds values (errors that read them only happen there)."""
    from ...device import get_device_type

    return get_device_type(m.device).has_data


def silent(fn):
    """A numpy reference with its warnings (all-NaN slices, 0 / 0) silenced."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return quiet(fn)(*args, **kwargs)

    return wrapped


def _cumext_ref(kind: str):
    better = np.greater_equal if kind == "max" else np.less_equal

    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        moved = np.moveaxis(x, dim, -1)
        vals, idx = np.empty_like(moved), np.empty(moved.shape, np.int64)
        for pos in np.ndindex(moved.shape[:-1]):
            row = moved[pos]
            best, at = None, 0
            for i, v in enumerate(row.tolist()):
                # PyTorch's rule: a NaN or a value at least as good takes over
                if best is None or v != v or (best == best and better(v, best)):
                    best, at = v, i
                vals[pos + (i,)], idx[pos + (i,)] = best, at
        return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)

    return ref


def _cum_samples(op, m, dtype):
    yield SampleInput(m.make((7,)), (0,), name="1-d")
    yield SampleInput(m.make((3, 6)), (1,), name="dim1")
    yield SampleInput(m.make((5, 3)), (-2,), name="dim0")
    yield SampleInput(m.make((4, 3), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make(()), (0,), name="0-d")
    yield SampleInput(m.make((0, 3)), (0,), name="zero-size")
    if op.name != "logcumsumexp" and dtype is not _dt.bool:
        yield SampleInput(m.make((2, 8), low=-2, high=2), (1,), name="ties")
    if dtype.is_floating_point:
        yield SampleInput(
            m.make((7,), values=[1.0, 3.0, NAN, 5.0, NAN, -INF, 2.0]), (0,), name="nan"
        )
        if op.name == "logcumsumexp":
            yield SampleInput(
                m.make((4,), values=[-1000.0, 0.0, -1000.0, 1000.0]), (0,), name="wide-range"
            )


def _logcumsumexp(x, dim):
    if x.ndim == 0:
        return x.copy()
    return np.logaddexp.accumulate(x, axis=dim)


def _logcumsumexp_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64), (0,), name="int"),
        NotImplementedError,
        "not implemented for 'int64'",
    )


def _diff_ref(x, n=1, dim=-1, prepend=None, append=None):
    if n == 0:  # PyTorch returns the input (numpy would join prepend and append)
        return x
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, axis=dim, **kw)


def _diff_samples(op, m, dtype):
    yield SampleInput(m.make((7,)), name="1-d")
    yield SampleInput(m.make((3, 6)), (2,), name="n=2")
    yield SampleInput(m.make((4, 5)), (1, 0), name="dim0")
    yield SampleInput(m.make((4, 5), layout="transposed"), (1, 1), name="transposed")
    yield SampleInput(m.make((3, 4)), (1, 1, m.make((3, 2)), m.make((3, 1))), name="prepend-append")
    yield SampleInput(m.make((3,)), (5,), name="n>size")
    yield SampleInput(m.make((3,)), (0,), name="n=0")
    yield SampleInput(m.make((2, 3)), (0, 0, m.make((1, 3))), name="n=0-prepend-ignored")
    yield SampleInput(m.make((0, 3)), (1, 0), name="zero-size")


def _diff_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make(()), name="0-d"),
        RuntimeError,
        "diff expects input to be at least one-dimensional",
    )
    yield ErrorInput(
        SampleInput(m.make((3,)), (-1,), name="negative-n"),
        RuntimeError,
        "order must be non-negative",
    )
    yield ErrorInput(
        SampleInput(m.make((3, 4)), (1, 1, m.make((2, 4))), name="prepend-shape"),
        RuntimeError,
        "diff expects the shape of tensor to prepend or append",
    )


def _trapezoid_ref(cumulative: bool):
    def ref(y, x=None, *, dx=None, dim=-1):
        import scipy.integrate

        kw = dict(x=x) if x is not None else dict(dx=1.0 if dx is None else dx)
        if cumulative:
            return scipy.integrate.cumulative_trapezoid(y, axis=dim, **kw)
        return np.trapezoid(y, axis=dim, **kw)

    return quiet(ref)


def _trapezoid_samples(op, m, dtype):
    yield SampleInput(m.make((7,)), name="1-d")
    yield SampleInput(m.make((3, 6)), kwargs=dict(dx=0.5), name="dx")
    yield SampleInput(m.make((4, 5)), kwargs=dict(dim=0), name="dim0")
    yield SampleInput(m.make((3, 5)), (m.make((5,)).sort().values,), name="x-1-d")
    yield SampleInput(m.make((3, 5)), (m.make((3, 5)),), name="x-same-shape")
    yield SampleInput(m.make((4, 3), layout="transposed"), kwargs=dict(dim=0), name="transposed")
    yield SampleInput(m.make((1, 3)), kwargs=dict(dim=0), name="one-sample")


def _trapezoid_errors(op, m, dtype):
    y = m.make((3, 4))
    yield ErrorInput(
        SampleInput(y, (m.make((3,)),), name="x-length"),
        RuntimeError,
        "There must be one `x` value for each sample point",
    )
    yield ErrorInput(
        SampleInput(y, (m.make((4,)),), dict(dx=1.0), name="x-and-dx"), TypeError, "not both"
    )


# ---- NaN-aware and paired reductions ------------------------------------------------------------


def _axis(x, dim):
    return np_reduce_axis(dim, x.ndim)


def _nansum(x, dim=None, keepdim=False, *, dtype=None):
    d = dtype or (x.dtype if x.dtype.kind == "f" else np.int64)
    return np.asarray(np.nansum(x, axis=_axis(x, dim), keepdims=keepdim, dtype=d))


def _nanmean(x, dim=None, keepdim=False, *, dtype=None):
    return np.asarray(np.nanmean(x.astype(dtype or x.dtype), axis=_axis(x, dim), keepdims=keepdim))


def _nan_samples(op, m, dtype):
    yield from reduction_samples(op, m, dtype, empty_reduce=op.name == "nansum")
    if dtype.is_floating_point:
        vals = [[1.0, NAN, 3.0], [NAN, NAN, NAN]]
        yield SampleInput(m.make((2, 3), values=vals), (1,), name="nan-rows")
        yield SampleInput(m.make((2, 3), values=vals), name="nan-all")
        yield SampleInput(m.make((2, 3)), (1,), dict(dtype=_dt.float64), name="dtype-kwarg")


def _nanmean_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.int64), name="int"),
        RuntimeError,
        "expected input to have floating point or complex dtype",
    )


def _var_mean_ref(std: bool):
    def ref(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        if correction is None:
            correction = 1 if unbiased is None else int(bool(unbiased))
        ax = _axis(x, dim)
        v = np.var(x, axis=ax, ddof=correction, keepdims=keepdim)
        return (
            (np.sqrt(v) if std else v).astype(x.dtype),
            np.mean(x, axis=ax, keepdims=keepdim).astype(x.dtype),
        )

    return quiet(ref)


def _var_mean_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="full")
    yield SampleInput(m.make((2, 3, 4)), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4)), ((0, 2),), dict(keepdim=True), name="dims-keepdim")
    yield SampleInput(m.make((2, 3, 4)), (1,), dict(correction=0), name="correction0")
    yield SampleInput(m.make((2, 3, 4)), (-1, False), name="unbiased=False")
    yield SampleInput(m.make((5, 4), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make((3, 4)), (False,), name="unbiased-positional")


def _var_mean_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3, 4)), ("x",), name="dim-str"), TypeError, "argument 'dim'"
    )
    yield ErrorInput(
        SampleInput(m.make((3, 4)), (True,), dict(unbiased=False), name="unbiased-twice"),
        TypeError,
        "unbiased twice",
    )


def _count_nonzero(x, dim=None):
    return np.asarray(np.count_nonzero(x, axis=None if dim is None else _axis(x, dim)), np.int64)


def _count_nonzero_samples(op, m, dtype):
    kw = dict(low=-1, high=2)
    yield SampleInput(m.make((3, 4), **kw), name="all")
    yield SampleInput(m.make((3, 4), **kw), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4), **kw), ((0, 2),), name="dims")
    yield SampleInput(m.make((4, 3), layout="transposed", **kw), (0,), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((0, 3)), (0,), name="zero-size")


def _aminmax(x, *, dim=None, keepdim=False):
    ax = None if dim is None else dim
    if x.ndim == 0:
        return x.copy(), x.copy()
    return (np.amin(x, axis=ax, keepdims=keepdim), np.amax(x, axis=ax, keepdims=keepdim))


def _aminmax_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="all")
    yield SampleInput(m.make((3, 4)), kwargs=dict(keepdim=True), name="all-keepdim")
    yield SampleInput(m.make((3, 4)), kwargs=dict(dim=1), name="dim1")
    yield SampleInput(m.make((3, 4)), kwargs=dict(dim=0, keepdim=True), name="dim0-keepdim")
    yield SampleInput(m.make((4, 3), layout="transposed"), kwargs=dict(dim=0), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((0, 3)), kwargs=dict(dim=1), name="zero-size-kept")
    if dtype.is_floating_point:
        yield SampleInput(m.make((3,), values=[1.0, NAN, -2.0]), name="nan")


def _aminmax_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((0, 3)), name="empty"),
        RuntimeError,
        "cannot compute aminmax over an empty dimension",
    )
    # an empty dim named by `dim` is PyTorch's IndexError (the all-elements case above is not)
    yield ErrorInput(
        SampleInput(m.make((0, 3)), kwargs=dict(dim=0), name="empty-dim"),
        IndexError,
        r"aminmax\(\): Expected reduction dim 0 to have non-zero size",
    )


OPS: list[OpInfo] = [
    OpInfo("cummax", dtypes=ALL + BOOL, ref=_cumext_ref("max"), sample_inputs_func=_cum_samples),
    OpInfo("cummin", dtypes=ALL + BOOL, ref=_cumext_ref("min"), sample_inputs_func=_cum_samples),
    OpInfo(
        "logcumsumexp",
        dtypes=FLOATS,
        ref=quiet(_logcumsumexp),
        sample_inputs_func=_cum_samples,
        error_inputs_func=_logcumsumexp_errors,
        tol=_TOL,
    ),
    OpInfo(
        "diff",
        dtypes=ALL + BOOL,
        ref=_diff_ref,
        sample_inputs_func=_diff_samples,
        error_inputs_func=_diff_errors,
    ),
    *[
        OpInfo(
            name,
            dtypes=FLOATS,
            ref=_trapezoid_ref(name == "cumulative_trapezoid"),
            sample_inputs_func=_trapezoid_samples,
            error_inputs_func=_trapezoid_errors,
            tol=_TOL,
        )
        for name in ("trapezoid", "trapz", "cumulative_trapezoid")
    ],
    OpInfo("nansum", dtypes=ALL, ref=quiet(_nansum), sample_inputs_func=_nan_samples, tol=_TOL),
    OpInfo(
        "nanmean",
        dtypes=FLOATS,
        ref=silent(_nanmean),
        sample_inputs_func=_nan_samples,
        error_inputs_func=_nanmean_errors,
        tol=_TOL,
    ),
    OpInfo(
        "var_mean",
        dtypes=FLOATS,
        ref=_var_mean_ref(False),
        sample_inputs_func=_var_mean_samples,
        error_inputs_func=_var_mean_errors,
        tol=_TOL,
    ),
    OpInfo(
        "std_mean",
        dtypes=FLOATS,
        ref=_var_mean_ref(True),
        sample_inputs_func=_var_mean_samples,
        error_inputs_func=_var_mean_errors,
        tol=_TOL,
    ),
    OpInfo(
        "count_nonzero",
        dtypes=ALL + BOOL,
        ref=_count_nonzero,
        sample_inputs_func=_count_nonzero_samples,
    ),
    OpInfo(
        "aminmax",
        dtypes=ALL + BOOL,
        ref=_aminmax,
        sample_inputs_func=_aminmax_samples,
        error_inputs_func=_aminmax_errors,
    ),
]
