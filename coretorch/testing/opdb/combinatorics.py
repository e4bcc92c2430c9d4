"""OpInfos of coretorch/ops/combinatorics.py (combinations, isin, unravel_index, dist, renorm,
scalar_tensor, fill), with numpy references."""

from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case


def _combinations_samples(op, m, dtype):
    yield SampleInput(m.make((4,)), (3,), name="r3")
    yield SampleInput(m.make((3,), layout="sliced"), (2, True), name="with-replacement")
    yield SampleInput(m.make((3,)), (0,), name="r0")
    yield SampleInput(m.make((2,)), (3,), name="r-larger-than-n")


def _combinations_ref(x, r=2, with_replacement=False):
    if not r:
        return np.empty((0,), x.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(x.tolist(), r))
    return np.array(rows, dtype=x.dtype).reshape(len(rows), r)


def _isin_samples(op, m, dtype):
    x = m.make((3, 4), low=0, high=5)
    yield SampleInput(x, (m.make((2, 2), low=0, high=5),), name="tensors")
    yield SampleInput(x, (m.make((3,), low=0, high=5),), dict(invert=True), name="invert")


def _isin_ref(elements, test_elements, assume_unique=False, invert=False):
    return np.isin(elements, test_elements, invert=invert)


def _unravel_samples(op, m, dtype):
    yield SampleInput(m.make((5,), low=0, high=24), ((2, 3, 4),), name="3-d")
    yield SampleInput(m.make((2, 2), low=0, high=6), ((6,),), name="1-d")


def _unravel_ref(indices, shape):
    return tuple(np.asarray(c, np.int64) for c in np.unravel_index(indices, shape))


def _dist_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="broadcast")
    yield SampleInput(m.make((3, 4), layout="transposed"), (m.make((3, 4)), 1), name="p1")
    yield SampleInput(m.make((5,)), (m.make((5,)), 3.5), name="p3.5")


def _dist_ref(x, y, p=2):
    d = np.abs(x - y).reshape(-1)
    return np.asarray(np.sum(d**p) ** (1.0 / p), dtype=np.result_type(x, y))


def _renorm_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (2, 0, 5.0), name="rows")
    yield SampleInput(m.make((3, 4), layout="transposed"), (1, 1, 8.0), name="columns-p1")
    yield SampleInput(m.make((2, 3, 2)), (3, 2, 100.0), name="no-change")
    yield SampleInput(m.make((2, 3, 2)), (float("inf"), -1, 2.0), name="inf-norm-last-dim")


def _renorm_ref(x, p, dim, maxnorm):
    axes = tuple(d for d in range(x.ndim) if d != dim % x.ndim)
    norm = (
        np.max(np.abs(x), axis=axes, keepdims=True)
        if p == float("inf")
        else np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    )
    return (x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)).astype(x.dtype)


def _scalar_tensor_samples(op, m, dtype):
    yield SampleInput(3.5, (), dict(dtype=dtype, device=m.device), name="float")
    yield SampleInput(2, (), dict(dtype=dtype, device=m.device), name="int")


def _fill_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (2,), name="number")
    yield SampleInput(m.make((3, 4), layout="transposed"), (m.make(()),), name="0-d-tensor")


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


OPS: list[OpInfo] = [
    OpInfo(
        "combinations", dtypes=ALL, ref=_combinations_ref, sample_inputs_func=_combinations_samples
    ),
    OpInfo("isin", dtypes=ALL, ref=_isin_ref, sample_inputs_func=_isin_samples),
    OpInfo(
        "unravel_index",
        dtypes=(_dt.int64, _dt.int32),
        ref=_unravel_ref,
        sample_inputs_func=_unravel_samples,
    ),
    OpInfo(
        "dist",
        dtypes=FLOATS,
        ref=_dist_ref,
        sample_inputs_func=_dist_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "renorm",
        dtypes=FLOATS,
        ref=_renorm_ref,
        sample_inputs_func=_renorm_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "scalar_tensor",
        dtypes=ALL,
        ref=lambda s, dtype=None, device=None: np.asarray(s, dtype=dtype),
        sample_inputs_func=_scalar_tensor_samples,
    ),
    OpInfo(
        "fill", dtypes=ALL, ref=lambda x, v: np.full_like(x, v), sample_inputs_func=_fill_samples
    ),
]

_ERRORS = {
    "combinations": [
        error_case("2-d", _t(2, 2), (2,), match=r"combinations\(\): Expect a 1D vector")
    ],
    "isin": [
        error_case(
            "scalars",
            lambda m: 1,
            (2,),
            error=TypeError,
            match=r"isin\(\): expected at least one of elements and test_elements",
        )
    ],
    "unravel_index": [
        error_case(
            "float",
            _t(3, dtype=_dt.float32),
            ((2, 2),),
            error=TypeError,
            match=r"unravel_index\(\): expected 'indices' to be integer",
        )
    ],
    "dist": [error_case("mismatch", _t(3), (_t(4),), match=r"dist\(\)|sub\(\)|size")],
    "renorm": [
        error_case(
            "negative-maxnorm",
            _t(3, 4),
            (2, 0, -1.0),
            match=r"renorm\(\): expected maxnorm to be >= 0",
        )
    ],
    "scalar_tensor": [
        error_case(
            "list", lambda m: [1, 2], error=TypeError, match=r"scalar_tensor\(\): argument 's'"
        )
    ],
    "fill": [
        error_case(
            "1-d-value", _t(3), (_t(2),), match=r"fill\(\): only supports 0-dimension value tensor"
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
