"""OpInfos of the reductions, scans and softmax (coretorch/ops/reductions.py, softmax.py)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, OpInfo, SampleInput
from .common import INF, NAN, int_to_int64, np_reduce_axis, quiet, reduction_samples, torch_aten

BOOL = (_dt.bool,)
_RED_TOL = {_dt.float32: (1e-5, 1e-5)}
_SOFTMAX_TOL = {_dt.float32: (1e-5, 1e-4)}


def _axis(x, dim):
    return np_reduce_axis(dim, x.ndim)


def _sum(x, dim=None, keepdim=False, *, dtype=None):
    return np.sum(x, axis=_axis(x, dim), keepdims=keepdim, dtype=int_to_int64(x, dtype))


def _prod(x, dim=None, keepdim=False, *, dtype=None):
    return np.prod(x, axis=_axis(x, dim), keepdims=keepdim, dtype=int_to_int64(x, dtype))


def _mean(x, dim=None, keepdim=False, *, dtype=None):
    return np.mean(x, axis=_axis(x, dim), keepdims=keepdim, dtype=dtype).astype(dtype or x.dtype)


def _amax(x, dim=(), keepdim=False):
    return np.amax(x, axis=_axis(x, dim), keepdims=keepdim)


def _amin(x, dim=(), keepdim=False):
    return np.amin(x, axis=_axis(x, dim), keepdims=keepdim)


def _minmax_dim(kind: str):
    def ref(x, dim, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        find = np.argmax if kind == "max" else np.argmin
        reduce = np.max if kind == "max" else np.min
        idx = find(x, axis=dim, keepdims=True)
        nan_idx = np.argmax(np.isnan(x), axis=dim, keepdims=True) if x.dtype.kind == "f" else None
        if nan_idx is not None:
            has_nan = np.isnan(x).any(axis=dim, keepdims=True)
            idx = np.where(has_nan, nan_idx, idx)
        vals = reduce(x, axis=dim, keepdims=True)
        if not keepdim:
            vals, idx = np.squeeze(vals, axis=dim), np.squeeze(idx, axis=dim)
        return vals, idx.astype(np.int64)

    return ref


def _max_composite(kind: str):
    pair = _minmax_dim(kind)

    def ref(x, dim=None, keepdim=False):
        if isinstance(dim, np.ndarray):
            return np.maximum(x, dim) if kind == "max" else np.minimum(x, dim)
        if dim is None:
            return _amax(x) if kind == "max" else _amin(x)
        return pair(x, dim, keepdim)

    return ref


def _arg(kind: str):
    def ref(x, dim=None, keepdim=False):
        find = np.argmax if kind == "max" else np.argmin
        if dim is None:
            r = np.asarray(find(x.reshape(-1)), np.int64)
            return r.reshape((1,) * x.ndim) if keepdim else r
        if x.ndim == 0:
            return np.zeros((), np.int64)
        return find(x, axis=dim, keepdims=keepdim).astype(np.int64)

    return ref


def _logical(kind: str):
    def ref(x, dim=None, keepdim=False):
        fn = np.all if kind == "all" else np.any
        axis = () if isinstance(dim, tuple) and not dim else _axis(x, dim)  # () reduces nothing
        r = fn(x, axis=axis, keepdims=keepdim)
        return r.astype(np.uint8) if x.dtype == np.uint8 else r

    return ref


def _cum(kind: str):
    def ref(x, dim, *, dtype=None):
        fn = np.cumsum if kind == "cumsum" else np.cumprod
        if x.ndim == 0:
            return x.astype(int_to_int64(x, dtype))
        return fn(x, axis=dim, dtype=int_to_int64(x, dtype))

    return ref


def _var_ref(std: bool):
    def ref(x, dim=None, *, correction=None, keepdim=False, unbiased=None):
        if correction is None:
            correction = 1 if unbiased is None else int(bool(unbiased))
        v = np.var(x, axis=_axis(x, dim), ddof=correction, keepdims=keepdim)
        return (np.sqrt(v) if std else v).astype(x.dtype)

    return quiet(ref)


def _logsumexp(x, dim, keepdim=False):
    ax = _axis(x, dim)
    m = np.max(x, axis=ax, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    return (r if keepdim else np.squeeze(r, axis=ax)).astype(x.dtype)


def _norm(x, p="fro", dim=None, keepdim=False, *, dtype=None):
    if p == "nuc":  # the sum of singular values over the two dims
        d = (-2, -1) if dim is None else tuple(dim)
        r = np.linalg.norm(x.astype(np.float64), "nuc", axis=d, keepdims=keepdim)
        return np.asarray(r).astype(dtype or x.dtype)
    ax = _axis(x, dim)
    a = np.abs(x).astype(np.float64)
    p = 2 if p in ("fro", None) else p
    if p == float("inf"):
        r = np.max(a, axis=ax, keepdims=keepdim)
    elif p == float("-inf"):
        r = np.min(a, axis=ax, keepdims=keepdim)
    elif p == 0:
        r = np.sum(a != 0, axis=ax, keepdims=keepdim)
    else:
        r = np.sum(a**p, axis=ax, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r).astype(dtype or x.dtype)


def _softmax(x, dim, dtype=None):
    x = x.astype(dtype) if dtype is not None else x
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return (e / np.sum(e, axis=dim, keepdims=True)).astype(x.dtype)


def _log_softmax(x, dim, dtype=None):
    x = x.astype(dtype) if dtype is not None else x
    if x.ndim == 0:
        return np.zeros_like(x)
    if not x.size:
        return x.copy()
    s = x - np.max(x, axis=dim, keepdims=True)
    return (s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))).astype(x.dtype)


# ---- samples ----------------------------------------------------------------------------------


def _sum_samples(op, m, dtype):
    yield from reduction_samples(op, m, dtype)
    yield SampleInput(m.make((2, 3)), (), dict(dim=()), "dim=()-every-dim")
    out = _dt.float64 if dtype.is_floating_point else _dt.int32
    yield SampleInput(m.make((2, 3)), (), dict(dim=1, dtype=out), "dtype-kwarg")


def _mean_samples(op, m, dtype):
    yield from reduction_samples(op, m, dtype)
    yield SampleInput(m.make((2, 3)), (), dict(dim=()), "dim=()-every-dim")
    yield SampleInput(m.make((2, 3)), (1,), dict(dtype=_dt.float64), "dtype-kwarg")


def _prod_samples(op, m, dtype):
    kw = dict(low=-2, high=3)
    yield SampleInput(m.make((2, 3, 4), **kw), name="full")
    yield SampleInput(m.make((2, 3, 4), **kw), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4), **kw), (-1, True), name="dim-1-keepdim")
    yield SampleInput(m.make((), **kw), name="0-d")
    yield SampleInput(m.make((4, 3), layout="transposed", **kw), (0,), name="transposed")
    yield SampleInput(m.make((0, 3), **kw), (0,), name="zero-size")
    yield SampleInput(m.make((2, 3), **kw), (1,), dict(dtype=_dt.float64), name="dtype-kwarg")
    yield SampleInput(m.make((2, 3), **kw), (), dict(dim=0, keepdim=True), name="dim0-keepdim")


def _amax_samples(op, m, dtype):
    yield from reduction_samples(op, m, dtype, empty_reduce=False, dim_kw="dim")
    yield SampleInput(m.make((2, 3)), (), dict(dim=()), "dim=()")
    if dtype.is_floating_point:
        yield SampleInput(
            m.make((2, 3), values=[1.0, NAN, 2.0, 3.0, 4.0, 5.0]), (), dict(dim=1), "nan-propagates"
        )


def _dim_samples(with_nan: bool):
    def samples(op, m, dtype):
        yield SampleInput(m.make((2, 3, 4)), (1,), name="dim1")
        yield SampleInput(m.make((2, 3, 4)), (-1, True), name="dim-1-keepdim")
        yield SampleInput(m.make((3, 4), layout="transposed"), (0,), name="transposed")
        yield SampleInput(m.make((3, 4), layout="expanded"), (0,), name="expanded-ties")
        yield SampleInput(m.make(()), (0,), name="0-d")
        yield SampleInput(m.make((0, 3)), (1,), name="zero-size")
        if with_nan and dtype.is_floating_point:
            yield SampleInput(
                m.make((2, 3), values=[1.0, NAN, 2.0, 3.0, 4.0, 5.0]), (1,), name="nan"
            )

    return samples


def _max_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="all")
    yield SampleInput(m.make(()), name="0-d-all")
    yield from _dim_samples(True)(op, m, dtype)
    yield SampleInput(m.make((2, 3)), (m.make((3,)),), name="binary-broadcast")


def _arg_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="flattened")
    yield SampleInput(m.make((2, 3, 4)), (None, True), name="flattened-keepdim")
    yield from _dim_samples(True)(op, m, dtype)


def _logical_samples(op, m, dtype):
    yield from reduction_samples(op, m, dtype, multi_dim=False, low=-1, high=2)
    yield SampleInput(m.make((2, 3), low=-1, high=2), ((0, 1),), name="dims(0,1)")
    yield SampleInput(m.make((2, 3), low=-1, high=2), ((),), name="dim=()-reduces-nothing")
    yield SampleInput(m.make((2, 3), values=[0, 0, 0, 1, 1, 1]), (1,), name="rows-all-or-none")


def _cum_samples(op, m, dtype):
    kw = dict(low=-2, high=3) if op.name == "cumprod" else {}
    yield SampleInput(m.make((2, 3, 4), **kw), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4), **kw), (-1,), name="dim-1")
    yield SampleInput(m.make((4, 3), layout="transposed", **kw), (0,), name="transposed")
    yield SampleInput(m.make((3, 4), layout="sliced", **kw), (1,), name="sliced")
    yield SampleInput(m.make((), **kw), (0,), name="0-d")
    yield SampleInput(m.make((0, 3), **kw), (0,), name="zero-size")
    yield SampleInput(m.make((2, 3), **kw), (1,), dict(dtype=_dt.float64), name="dtype-kwarg")


def _var_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="full")
    yield SampleInput(m.make((2, 3, 4)), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4)), ((0, 2),), dict(keepdim=True), name="dims-keepdim")
    yield SampleInput(m.make((2, 3, 4)), (1,), dict(correction=0), name="correction0")
    yield SampleInput(m.make((2, 3, 4)), (-1,), dict(unbiased=False), name="unbiased=False")
    yield SampleInput(m.make((5, 4), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make((2, 3, 4)), (), dict(correction=0.5), name="full-correction-float")
    yield SampleInput(
        m.make((2, 3), values=[1.0, 1.0, 1.0, 2.0, 0.0, 4.0]), (1,), name="constant-row"
    )


def _logsumexp_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4)), ((0, 2), True), name="dims-keepdim")
    yield SampleInput(m.make((4, 3), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make((3,), values=[800.0, 1.0, -800.0]), (0,), name="large-values")
    yield SampleInput(m.make(()), (0,), name="0-d")
    yield SampleInput(m.make((2, 3, 4)), ((0, 1, 2),), name="every-dim")
    yield SampleInput(
        m.make((2, 3), values=[-INF] * 3 + [1.0, -INF, 2.0]), (1,), name="neg-inf-row"
    )


def _norm_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="p2-full")
    yield SampleInput(m.make((2, 3, 4)), (2, 1), name="p2-dim1")
    yield SampleInput(m.make((2, 3, 4)), (1, (0, 2), True), name="p1-dims-keepdim")
    yield SampleInput(m.make((2, 3, 4)), (float("inf"), -1), name="pinf")
    yield SampleInput(m.make((2, 3, 4)), (3,), dict(dim=0), name="p3")
    yield SampleInput(m.make((4, 3), layout="transposed"), (2, 0), name="transposed")
    yield SampleInput(m.make((0, 3)), (2, 1), name="zero-size")
    yield SampleInput(m.make((2, 3, 4)), ("fro", (0, 2)), name="fro-dims")
    yield SampleInput(m.make((2, 3, 4)), (None, 1), name="p=None")
    yield SampleInput(m.make((2, 3, 4)), (float("-inf"), 2), name="p-neg-inf")
    yield SampleInput(m.make((2, 3, 4)), (0, 1), name="p0")
    yield SampleInput(m.make((2, 3, 4)), (0.5, 1), name="p0.5")
    yield SampleInput(m.make((2, 3, 4)), (1.5,), name="p1.5-full")
    for p in (2, 1, 3):
        yield SampleInput(
            m.make((2, 3), values=[0.0, 0.0, 0.0, 1.0, -2.0, 0.5]), (p, 1), name=f"p{p}-zero-row"
        )
    if dtype is _dt.float32:
        yield SampleInput(m.make((2, 3)), (2, 1), dict(dtype=_dt.float64), name="dtype-kwarg")
    if dtype in (_dt.float32, _dt.float64):  # linalg refuses bfloat16, as PyTorch's
        yield SampleInput(m.make((3, 4)), ("nuc",), name="nuclear")
        yield SampleInput(m.make((2, 3, 4)), ("nuc", (0, 2), True), name="nuclear-dims-keepdim")


def _softmax_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), (1,), name="dim1")
    yield SampleInput(m.make((2, 3, 4)), (-1,), name="dim-1")
    yield SampleInput(m.make((4, 3), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make((3,), values=[800.0, 1.0, -800.0]), (0,), name="large-values")
    yield SampleInput(m.make(()), (0,), name="0-d")
    yield SampleInput(m.make((0, 3)), (1,), name="zero-size")
    yield SampleInput(m.make((0, 3)), (0,), name="zero-size-along-dim")
    yield SampleInput(
        m.make((2, 3), values=[-INF, 1.0, 2.0, 0.5, -INF, -INF]), (1,), name="neg-inf-entries"
    )
    if dtype is _dt.float32:
        yield SampleInput(m.make((2, 3)), (1,), dict(dtype=_dt.float64), name="dtype-kwarg")


OPS: list[OpInfo] = [
    OpInfo("sum", dtypes=ALL + BOOL, ref=_sum, sample_inputs_func=_sum_samples, tol=_RED_TOL),
    OpInfo("prod", dtypes=ALL + BOOL, ref=_prod, sample_inputs_func=_prod_samples, tol=_RED_TOL),
    OpInfo("mean", dtypes=FLOATS, ref=quiet(_mean), sample_inputs_func=_mean_samples, tol=_RED_TOL),
    OpInfo("amax", dtypes=ALL + BOOL, ref=_amax, sample_inputs_func=_amax_samples),
    OpInfo("amin", dtypes=ALL + BOOL, ref=_amin, sample_inputs_func=_amax_samples),
    OpInfo(
        "_max_dim",
        dtypes=ALL + BOOL,
        ref=_minmax_dim("max"),
        torch_ref=torch_aten("max"),
        sample_inputs_func=_dim_samples(True),
    ),
    OpInfo(
        "_min_dim",
        dtypes=ALL + BOOL,
        ref=_minmax_dim("min"),
        torch_ref=torch_aten("min"),
        sample_inputs_func=_dim_samples(True),
    ),
    OpInfo("max", dtypes=ALL + BOOL, ref=_max_composite("max"), sample_inputs_func=_max_samples),
    OpInfo("min", dtypes=ALL + BOOL, ref=_max_composite("min"), sample_inputs_func=_max_samples),
    OpInfo("argmax", dtypes=ALL, ref=_arg("max"), sample_inputs_func=_arg_samples),
    OpInfo("argmin", dtypes=ALL, ref=_arg("min"), sample_inputs_func=_arg_samples),
    OpInfo("all", dtypes=ALL + BOOL, ref=_logical("all"), sample_inputs_func=_logical_samples),
    OpInfo("any", dtypes=ALL + BOOL, ref=_logical("any"), sample_inputs_func=_logical_samples),
    OpInfo(
        "cumsum",
        dtypes=ALL + BOOL,
        ref=_cum("cumsum"),
        sample_inputs_func=_cum_samples,
        tol=_RED_TOL,
    ),
    OpInfo(
        "cumprod",
        dtypes=ALL + BOOL,
        ref=_cum("cumprod"),
        sample_inputs_func=_cum_samples,
        tol=_RED_TOL,
    ),
    OpInfo(
        "var", dtypes=FLOATS, ref=_var_ref(False), sample_inputs_func=_var_samples, tol=_RED_TOL
    ),
    OpInfo("std", dtypes=FLOATS, ref=_var_ref(True), sample_inputs_func=_var_samples, tol=_RED_TOL),
    OpInfo(
        "logsumexp",
        dtypes=FLOATS,
        ref=quiet(_logsumexp),
        sample_inputs_func=_logsumexp_samples,
        tol=_RED_TOL,
    ),
    OpInfo("norm", dtypes=FLOATS, ref=_norm, sample_inputs_func=_norm_samples, tol=_RED_TOL),
    OpInfo(
        "softmax",
        dtypes=FLOATS,
        ref=quiet(_softmax),
        sample_inputs_func=_softmax_samples,
        tol=_SOFTMAX_TOL,
    ),
    OpInfo(
        "log_softmax",
        dtypes=FLOATS,
        ref=quiet(_log_softmax),
        sample_inputs_func=_softmax_samples,
        tol=_SOFTMAX_TOL,
    ),
]
