"""OpInfos of cov and corrcoef (coretorch/ops/covariance.py), with numpy's as references."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, ErrorInput, OpInfo, SampleInput
from .common import attach_error_cases, error_case


def _cov_samples(op, m, dtype):
    yield SampleInput(m.make((3, 6)), name="matrix")
    yield SampleInput(m.make((5,)), name="vector")
    yield SampleInput(m.make((1, 5)), name="one-variable")
    if op.name == "corrcoef":
        yield SampleInput(m.make((4, 3), layout="transposed"), name="transposed")
        return
    fw = m.make((6,), dtype=_dt.int64, low=1, high=4)
    aw = m.make((6,), dtype=dtype if dtype.is_floating_point else _dt.float32, low=0.5, high=2)
    yield SampleInput(m.make((3, 6)), (), dict(correction=0), name="correction0")
    yield SampleInput(m.make((2, 6)), (), dict(fweights=fw), name="fweights")
    yield SampleInput(
        m.make((2, 6)),
        (),
        dict(correction=2, fweights=fw, aweights=aw),
        name="both-weights",
        gradcheck=False,
    )


def _float(x):
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def _cov_ref(x, correction=1, fweights=None, aweights=None):
    c = np.cov(_float(x), ddof=correction, fweights=fweights, aweights=aweights)
    return np.asarray(c, dtype=_float(x).dtype)


def _corrcoef_ref(x):
    x = _float(x)
    if x.ndim == 1 or x.shape[0] == 1:
        return np.asarray(1.0, x.dtype)
    return np.corrcoef(x).astype(x.dtype)


def _sum_to_size_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), ((3, 1),), name="leading-and-size-1")
    yield SampleInput(m.make((3, 4), layout="transposed"), (1, 4), name="varargs")
    yield SampleInput(m.make((3, 4)), ((3, 4),), name="same")


def _sum_to_size_ref(x, *size):
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    lead = x.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1)
    return np.sum(x, axis=dims, keepdims=True).reshape(size).astype(x.dtype)


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


OPS: list[OpInfo] = [
    OpInfo(
        "cov",
        dtypes=ALL,
        ref=_cov_ref,
        sample_inputs_func=_cov_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "sum_to_size",
        dtypes=ALL,
        ref=_sum_to_size_ref,
        sample_inputs_func=_sum_to_size_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "corrcoef",
        dtypes=ALL,
        ref=_corrcoef_ref,
        sample_inputs_func=_cov_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
]

_ERRORS = {
    "cov": [error_case("3-d", _t(2, 2, 2), match=r"cov\(\): expected input to have two or fewer")],
    "sum_to_size": [
        error_case(
            "not-expandable",
            _t(2, 3),
            ((2, 2),),
            match=r"sum_to_size\(\): size \{2, 2\} is not expandable to "
            r"size \{2, 3\}",
        )
    ],
    "corrcoef": [
        error_case("3-d", _t(2, 2, 2), match=r"corrcoef\(\): expected input to have two or fewer")
    ],
}
attach_error_cases(OPS, _ERRORS)


def _weight_errors(op, m, dtype):
    """Refused weights (keyword arguments, so built here rather than by error_case)."""
    assert _ERRORS_COV is not None  # the cov entry has error cases
    yield from _ERRORS_COV(op, m, dtype)
    x = m.make((2, 3))
    yield ErrorInput(
        SampleInput(x, (), dict(fweights=m.make((3,), dtype=_dt.float32)), name="float-fweights"),
        RuntimeError,
        r"cov\(\): expected fweights to have integral dtype",
    )
    yield ErrorInput(
        SampleInput(x, (), dict(aweights=m.make((4,), dtype=_dt.float64)), name="aweights-numel"),
        RuntimeError,
        r"cov\(\): expected aweights to have the same numel",
    )


_ERRORS_COV = OPS[0].error_inputs_func
OPS[0].error_inputs_func = _weight_errors
