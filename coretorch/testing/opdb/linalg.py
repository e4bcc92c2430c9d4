"""OpInfos of the matrix products (coretorch/ops/linalg.py)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case, torch_nn

_TOL = {_dt.float32: (1e-5, 1e-4)}
DTYPES = FLOATS + (_dt.int64,)


def _mm_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((4, 5)),), name="2x2")
    yield SampleInput(
        m.make((3, 4), layout="transposed"),
        (m.make((4, 5), layout="transposed"),),
        name="transposed",
    )
    yield SampleInput(
        m.make((3, 4), layout="sliced"),
        (m.make((4, 2), layout="expanded"),),
        name="sliced-expanded",
    )
    yield SampleInput(m.make((0, 4)), (m.make((4, 5)),), name="zero-rows")
    yield SampleInput(m.make((3, 0)), (m.make((0, 5)),), name="zero-inner")
    yield SampleInput(m.make((1, 1)), (m.make((1, 1)),), name="1x1")


def _bmm_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), (m.make((2, 4, 5)),), name="batched")
    yield SampleInput(
        m.make((2, 3, 4), layout="transposed"),
        (m.make((2, 4, 5), layout="sliced"),),
        name="noncontiguous",
    )
    yield SampleInput(m.make((0, 3, 4)), (m.make((0, 4, 5)),), name="zero-batch")
    yield SampleInput(m.make((2, 3, 0)), (m.make((2, 0, 5)),), name="zero-inner")


def _addmm_samples(op, m, dtype):
    yield SampleInput(m.make((3, 5)), (m.make((3, 4)), m.make((4, 5))), name="plain")
    yield SampleInput(m.make((5,)), (m.make((3, 4)), m.make((4, 5))), name="broadcast-bias")
    yield SampleInput(
        m.make((3, 5)), (m.make((3, 4)), m.make((4, 5))), dict(beta=2, alpha=3), name="beta-alpha"
    )
    yield SampleInput(
        m.make((3, 5)),
        (m.make((3, 4), layout="transposed"), m.make((4, 5))),
        dict(beta=0),
        name="beta0-transposed",
    )
    yield SampleInput(m.make((3, 5)), (m.make((3, 0)), m.make((0, 5))), name="zero-inner")
    yield SampleInput(
        m.make((3, 5)),
        (m.make((3, 4)), m.make((4, 5))),
        dict(beta=1.5, alpha=2.5),
        name="float-beta-alpha",
    )


def _addmm(s, a, b, *, beta=1, alpha=1):
    if np.issubdtype(a.dtype, np.integer):  # PyTorch casts the scalars to the dtype: 1.5 -> 1
        beta, alpha = int(beta), int(alpha)
    prod = a @ b
    return (prod * alpha if beta == 0 else beta * s + alpha * prod).astype(np.result_type(s, a))


def _matmul_samples(op, m, dtype):
    yield SampleInput(m.make((4,)), (m.make((4,)),), name="1d-1d")
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="2d-1d")
    yield SampleInput(m.make((4,)), (m.make((4, 5)),), name="1d-2d")
    yield SampleInput(m.make((3, 4)), (m.make((4, 5)),), name="2d-2d")
    yield SampleInput(m.make((2, 3, 4)), (m.make((4, 5)),), name="3d-2d")
    yield SampleInput(m.make((3, 4)), (m.make((2, 4, 5)),), name="2d-3d")
    yield SampleInput(m.make((2, 1, 3, 4)), (m.make((5, 4, 2)),), name="batch-broadcast")
    yield SampleInput(m.make((2, 3, 4)), (m.make((4,)),), name="3d-1d")
    yield SampleInput(m.make((4,)), (m.make((2, 4, 5)),), name="1d-3d")
    yield SampleInput(
        m.make((3, 4), layout="transposed"),
        (m.make((4, 5), layout="sliced"),),
        name="noncontiguous",
    )
    yield SampleInput(m.make((0, 3, 4)), (m.make((4, 5)),), name="zero-batch")


def _dot_samples(op, m, dtype):
    yield SampleInput(m.make((5,)), (m.make((5,)),), name="plain")
    yield SampleInput(
        m.make((5,), layout="sliced"), (m.make((5,), layout="expanded"),), name="noncontiguous"
    )
    yield SampleInput(m.make((0,)), (m.make((0,)),), name="empty")


def _mv_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="plain")
    yield SampleInput(
        m.make((3, 4), layout="transposed"), (m.make((4,), layout="sliced"),), name="noncontiguous"
    )
    yield SampleInput(m.make((0, 4)), (m.make((4,)),), name="zero-rows")


def _outer_samples(op, m, dtype):
    yield SampleInput(m.make((3,)), (m.make((4,)),), name="plain")
    yield SampleInput(m.make((3,), layout="sliced"), (m.make((0,)),), name="empty")


def _linear_samples(op, m, dtype):
    yield SampleInput(m.make((2, 4)), (m.make((3, 4)), m.make((3,))), name="bias")
    yield SampleInput(m.make((2, 5, 4)), (m.make((3, 4)),), name="batched-no-bias")
    yield SampleInput(m.make((4,)), (m.make((3, 4)), m.make((3,))), name="1d-input")
    yield SampleInput(
        m.make((2, 4), layout="sliced"),
        (m.make((3, 4), layout="transposed"),),
        dict(bias=m.make((3,))),
        name="noncontiguous-bias-kwarg",
    )


def _linear(x, w, bias=None):
    y = x @ w.T
    return y if bias is None else y + bias


OPS: list[OpInfo] = [
    OpInfo("mm", dtypes=DTYPES, ref=np.matmul, sample_inputs_func=_mm_samples, tol=_TOL),
    OpInfo("bmm", dtypes=DTYPES, ref=np.matmul, sample_inputs_func=_bmm_samples, tol=_TOL),
    OpInfo("addmm", dtypes=DTYPES, ref=_addmm, sample_inputs_func=_addmm_samples, tol=_TOL),
    OpInfo("matmul", dtypes=DTYPES, ref=np.matmul, sample_inputs_func=_matmul_samples, tol=_TOL),
    OpInfo(
        "dot",
        dtypes=DTYPES,
        ref=lambda a, b: np.asarray(np.dot(a, b)),
        sample_inputs_func=_dot_samples,
        tol=_TOL,
    ),
    OpInfo("mv", dtypes=DTYPES, ref=np.matmul, sample_inputs_func=_mv_samples, tol=_TOL),
    OpInfo("outer", dtypes=DTYPES, ref=np.outer, sample_inputs_func=_outer_samples, tol=_TOL),
    OpInfo(
        "linear",
        dtypes=FLOATS,
        ref=_linear,
        torch_ref=torch_nn("linear"),
        sample_inputs_func=_linear_samples,
        tol=_TOL,
    ),
]


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


_ERRORS = {
    "mm": [
        error_case(
            "shapes",
            _t(2, 3),
            (_t(4, 5),),
            match=r"mm\(\): mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
        ),
        error_case("3-d", _t(2, 3, 4), (_t(4, 5),), match=r"mm\(\): expected 2-D"),
    ],
    "bmm": [
        error_case("2-d", _t(3, 4), (_t(4, 5),), match=r"bmm\(\): expected 3-D"),
        error_case(
            "batch",
            _t(2, 3, 4),
            (_t(3, 4, 5),),
            match=r"bmm\(\): Expected size for first two dimensions",
        ),
    ],
    "addmm": [
        error_case(
            "bias-shape",
            _t(3),
            (_t(2, 3), _t(3, 4)),
            match=r"addmm\(\): self of shape \[3\] can't be broadcast",
        )
    ],
    "matmul": [
        error_case(
            "0-d", _t(), (_t(2, 3),), match="both arguments to matmul need to be at least 1D"
        ),
        error_case(
            "shapes",
            _t(4, 2, 3),
            (_t(4, 4, 5),),
            match=r"matmul\(\): mat1 and mat2 shapes cannot be multiplied",
        ),
    ],
    "dot": [
        error_case("2-d", _t(3, 1), (_t(3),), match=r"dot\(\): 1D tensors expected"),
        error_case("sizes", _t(3), (_t(4),), match=r"dot\(\): inconsistent tensor size"),
    ],
    "mv": [error_case("sizes", _t(3, 2), (_t(3),), match=r"mv\(\): size mismatch")],
    "outer": [error_case("2-d", _t(3, 1), (_t(3),), match=r"outer\(\): expected 1-D")],
    "linear": [
        error_case(
            "3-d-weight", _t(2, 4), (_t(3, 4, 1),), match=r"linear\(\): weight must be 1-D or 2-D"
        ),
        error_case(
            "in-features",
            _t(2, 4),
            (_t(3, 5),),
            match=r"linear\(\): mat1 and mat2 shapes cannot be multiplied",
        ),
    ],
}
attach_error_cases(OPS, _ERRORS)
