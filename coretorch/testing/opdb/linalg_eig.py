"""OpInfos of linalg.eig / linalg.eigvals (coretorch/ops/linalg_eig.py): numpy references
(LAPACK's geev: its order and eigenvector phase).
PyTorch's LAPACK build may order eigenvalues differently, so tests/test_complex_linalg.py
compares with PyTorch up to ordering and phase instead of the torch parity run. eig's gradient
is only defined for losses that ignore the eigenvectors' phases, which one-hot output gradients
do not: tests/test_complex_linalg.py gradchecks it through such losses (as PyTorch's OpInfo
does); eigvals' gradient is checked here."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ErrorInput, OpInfo, SampleInput
from .linalg_common import matrix

DTYPES = (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128)
_TOL = {_dt.float32: (1e-4, 1e-4), _dt.complex64: (1e-4, 1e-4)}


def _samples(op, m, dtype):
    for shape in ((3, 3), (2, 4, 4), (1, 1)):
        yield SampleInput(matrix(m, shape), name=f"general-{shape}")
    yield SampleInput(matrix(m, (3, 3), layout="transposed"), name="transposed")
    yield SampleInput(m.make((2, 2), values=[[0.0, -1.0], [1.0, 0.0]]), name="rotation")
    yield SampleInput(matrix(m, (0, 2, 2)), name="zero-batch")


def _errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((2, 3)), name="non-square"),
        RuntimeError,
        "must be batches of square matrices",
    )
    yield ErrorInput(
        SampleInput(m.make((3,)), name="1-d"), RuntimeError, "must have at least 2 dimensions"
    )
    yield ErrorInput(
        SampleInput(m.make((2, 2), dtype=_dt.int64), name="int"),
        RuntimeError,
        "Expected a floating point or complex tensor",
    )


def _complex_of(a):
    return np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128


def _eig_ref(a):
    c = _complex_of(a)
    if a.size == 0:
        return np.zeros(a.shape[:-1], c), np.zeros(a.shape, c)
    w, v = np.linalg.eig(a)
    return w.astype(c), v.astype(c)


OPS: list[OpInfo] = [
    OpInfo(
        "linalg_eig",
        dtypes=DTYPES,
        ref=_eig_ref,
        torch_ref=None,
        sample_inputs_func=_samples,
        error_inputs_func=_errors,
        supports_autograd=False,
        tol=_TOL,
    ),
    OpInfo(
        "linalg_eigvals",
        dtypes=DTYPES,
        ref=lambda a: _eig_ref(a)[0],
        torch_ref=None,
        sample_inputs_func=_samples,
        error_inputs_func=_errors,
        grad_dtypes=(_dt.float64, _dt.complex128),
        tol=_TOL,
    ),
]
