"""OpInfos of the complex-number ops (coretorch/ops/complex_ops.py); numpy references.

Complex samples hold values whose real and imaginary parts are both drawn from [-9, 9). Gradients
are checked in complex128 (gradcheck compares the real and imaginary parts of each complex
number, PyTorch's convention) and, for the ops that take real tensors, float64.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ErrorInput, OpInfo, SampleInput
from .common import quiet

COMPLEX = (_dt.complex64, _dt.complex128)
REAL = (_dt.float32, _dt.float64)
GRAD_COMPLEX = (_dt.complex128,)


def _unary_samples(op, m, dtype):
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((7,)), name="1-d")
    yield SampleInput(m.make((3, 4)), name="2-d")
    yield SampleInput(m.make((3, 4), layout="transposed"), name="transposed")
    yield SampleInput(m.make((2, 3, 4), layout="sliced"), name="sliced")
    yield SampleInput(m.make((3, 4), layout="expanded"), name="expanded")
    yield SampleInput(m.make((0, 3)), name="zero-size")


def _pair_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((3, 4)),), name="same-shape")
    yield SampleInput(m.make((3, 1)), (m.make((1, 4)),), name="broadcast")
    yield SampleInput(m.make(()), (m.make(()),), name="0-d")
    yield SampleInput(
        m.make((4, 3), layout="transposed"),
        (m.make((4, 3), layout="sliced"),),
        name="noncontiguous",
    )
    yield SampleInput(m.make((0, 2)), (m.make((0, 2)),), name="zero-size")


def _polar_samples(op, m, dtype):
    # abs >= 0: PyTorch's polar gradient takes the angle of the result, which a negative abs
    # turns by pi
    for s in _pair_samples(op, m, dtype):
        yield SampleInput(
            s.input.abs().detach().requires_grad_(s.input.requires_grad), s.args, s.kwargs, s.name
        )


def _view_as_complex_samples(op, m, dtype):
    yield SampleInput(m.make((2,)), name="one-number")
    yield SampleInput(m.make((3, 4, 2)), name="3-d")
    yield SampleInput(m.make((4, 3, 2)).transpose(0, 1), name="transposed-leading-dims")
    yield SampleInput(m.make((1, 2)), name="1x2")


def _view_as_complex_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3, 3)), name="last-dim-3"),
        RuntimeError,
        "Tensor must have a last dimension of size 2",
    )
    yield ErrorInput(
        SampleInput(m.make((2, 3)).t(), name="last-stride"),
        RuntimeError,
        "Tensor must have a last dimension with stride 1",
    )
    yield ErrorInput(
        SampleInput(m.make((6,))[1:5].view(2, 2), name="odd-offset"),
        RuntimeError,
        "storage offset divisible by 2",
    )
    yield ErrorInput(
        SampleInput(m.make((2, 2), dtype=_dt.int64), name="int"),
        RuntimeError,
        "is only supported for float32 and float64 tensors",
    )


def _real_input_errors(name: str, match: str):
    def errors(op, m, dtype):
        yield ErrorInput(
            SampleInput(m.make((3,), dtype=_dt.float32), name="real-input"), RuntimeError, match
        )

    errors.__name__ = f"_{name}_errors"
    return errors


def _parts_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(
            m.make((2,), dtype=_dt.float32), (m.make((2,), dtype=_dt.float64),), name="mixed-dtypes"
        ),
        RuntimeError,
        "Expected object of scalar type float32",
    )
    yield ErrorInput(
        SampleInput(m.make((2,), dtype=_dt.int64), (m.make((2,), dtype=_dt.int64),), name="int"),
        RuntimeError,
        "Expected both inputs to be Float",
    )


def _angle_samples(op, m, dtype):
    yield from _unary_samples(op, m, dtype)
    if dtype.is_floating_point:
        yield SampleInput(m.make((4,), values=[-1.0, 0.0, 2.0, float("nan")]), name="signs-nan")


def _isreal_samples(op, m, dtype):
    yield from _unary_samples(op, m, dtype)
    if dtype.is_complex:
        yield SampleInput(m.make((4,), values=[1.0, 2j, 0.0, -3 + 0j]), name="some-real")


def _view_as_real_ref(x):
    return np.stack([x.real, x.imag], -1)


def _view_as_complex_ref(x):
    return (x[..., 0] + 1j * x[..., 1]).astype(
        np.complex64 if x.dtype == np.float32 else np.complex128
    )


def _complex_of(real, imag):
    return (real + 1j * imag).astype(np.complex64 if real.dtype == np.float32 else np.complex128)


@quiet
def _angle_ref(x):
    if np.iscomplexobj(x):
        return np.angle(x)
    # PyTorch: 0 for x >= 0, pi for x < 0, NaN stays NaN
    x = x if x.dtype.kind == "f" else x.astype(np.float32)
    return np.where(x < 0, np.pi, x * 0).astype(x.dtype)


def _polar_ref(abs, angle):  # noqa: A002
    return _complex_of(abs * np.cos(angle), abs * np.sin(angle))


OPS: list[OpInfo] = [
    OpInfo(
        "view_as_real",
        dtypes=COMPLEX,
        ref=_view_as_real_ref,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX,
        error_inputs_func=_real_input_errors(
            "view_as_real", "is only supported for complex tensors"
        ),
    ),
    OpInfo(
        "view_as_complex",
        dtypes=REAL,
        ref=_view_as_complex_ref,
        sample_inputs_func=_view_as_complex_samples,
        error_inputs_func=_view_as_complex_errors,
    ),
    OpInfo(
        "real",
        dtypes=COMPLEX + REAL,
        ref=np.real,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX + (_dt.float64,),
    ),
    OpInfo(
        "imag",
        dtypes=COMPLEX,
        ref=np.imag,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX,
        error_inputs_func=_real_input_errors(
            "imag", "is not implemented for tensors with non-complex dtypes"
        ),
    ),
    OpInfo(
        "conj",
        dtypes=COMPLEX + REAL,
        ref=np.conj,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX + (_dt.float64,),
    ),
    OpInfo(
        "conj_physical",
        dtypes=COMPLEX + REAL,
        ref=np.conj,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX + (_dt.float64,),
    ),
    OpInfo(
        "resolve_conj",
        dtypes=COMPLEX + REAL,
        ref=lambda x: x,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX + (_dt.float64,),
    ),
    OpInfo(
        "is_conj",
        dtypes=COMPLEX + REAL,
        ref=lambda x: False,
        sample_inputs_func=_unary_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "is_neg",
        dtypes=COMPLEX + REAL,
        ref=lambda x: False,
        sample_inputs_func=_unary_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "resolve_neg",
        dtypes=COMPLEX + REAL,
        ref=lambda x: x,
        sample_inputs_func=_unary_samples,
        grad_dtypes=GRAD_COMPLEX + (_dt.float64,),
    ),
    OpInfo(
        "isreal",
        dtypes=COMPLEX + REAL + (_dt.int64,),
        ref=np.isreal,
        sample_inputs_func=_isreal_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "angle",
        dtypes=COMPLEX + REAL + (_dt.int64,),
        ref=_angle_ref,
        sample_inputs_func=_angle_samples,
        grad_dtypes=GRAD_COMPLEX,
    ),
    OpInfo(
        "complex",
        dtypes=REAL,
        ref=_complex_of,
        sample_inputs_func=_pair_samples,
        error_inputs_func=_parts_errors,
    ),
    OpInfo(
        "polar",
        dtypes=REAL,
        ref=_polar_ref,
        sample_inputs_func=_polar_samples,
        error_inputs_func=_parts_errors,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
]
