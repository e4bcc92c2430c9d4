"""OpInfos of the linear-algebra primitives (coretorch/ops/linalg_factorizations.py): numpy /
scipy references, singular and eigen vectors compared in canonical signs.

eigh and cholesky read one triangle of their input, so finite differences on the other one see
nothing while PyTorch's gradient is symmetric: their samples skip the plain gradcheck, and
tests/test_linalg.py checks them on symmetrized inputs (as PyTorch's own OpInfos do).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from ... import dtypes as _dt
from ..opinfo import OpInfo, SampleInput
from .common import attach_error_cases, error_case
from .linalg_common import (
    LINALG_DTYPES,
    TOL,
    canonical_svd,
    matrix,
    np_column_signs,
    per_matrix,
    t,
    torch_column_signs,
    torch_linalg,
)

_SHAPES = ((3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 1, 4, 3))


def _svd_samples(op, m, dtype):
    for shape in _SHAPES:
        yield SampleInput(matrix(m, shape), (False,), name=f"reduced-{shape}")
    # the extra columns of a full U (rows of Vh) are any orthonormal completion: finite
    # differences of them mean nothing (PyTorch's gradient ignores them)
    yield SampleInput(
        matrix(m, (4, 3), layout="transposed"), name="full-transposed", gradcheck=False
    )
    yield SampleInput(
        matrix(m, (2, 3), layout="sliced"),
        kwargs=dict(full_matrices=True),
        name="full-wide-sliced",
        gradcheck=False,
    )
    yield SampleInput(matrix(m, (1, 1)), (False,), name="1x1")
    yield SampleInput(matrix(m, (0, 3)), (False,), name="zero-rows", gradcheck=False)


def _svd_ref(a, full_matrices=True, *, driver=None):
    if a.size == 0:
        u, s, vh = np.linalg.svd(np.zeros(a.shape, a.dtype), full_matrices=full_matrices)
        return u, s, vh
    return canonical_svd(
        *np.linalg.svd(a, full_matrices=full_matrices),
        np_column_signs,
        lambda x, d: np.concatenate(x, d),
    )


def _svd_torch(a, full_matrices=True, *, driver=None):
    import torch

    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    if a.numel() == 0:
        return u, s, vh
    return canonical_svd(u, s, vh, torch_column_signs, torch.cat)


def _eigh_samples(op, m, dtype):
    for shape in ((3, 3), (2, 4, 4), (1, 1)):
        yield SampleInput(matrix(m, shape, "sym"), name=f"sym-{shape}", gradcheck=False)
    yield SampleInput(matrix(m, (3, 3)), ("U",), name="upper-of-general", gradcheck=False)
    yield SampleInput(
        matrix(m, (3, 3), "sym", layout="transposed"),
        kwargs=dict(UPLO="L"),
        name="transposed",
        gradcheck=False,
    )
    yield SampleInput(matrix(m, (0, 2, 2), "sym"), name="zero-batch", gradcheck=False)


def _eigh_ref(a, UPLO="L"):
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), np.zeros(a.shape, a.dtype)
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v * np_column_signs(v)


def _eigh_torch(a, UPLO="L"):
    import torch

    w, v = torch.linalg.eigh(a, UPLO=UPLO)
    return w, v * torch_column_signs(v) if a.numel() else v


def _qr_samples(op, m, dtype):
    for shape in _SHAPES:
        yield SampleInput(matrix(m, shape), name=f"reduced-{shape}")
    yield SampleInput(matrix(m, (3, 5)), ("complete",), name="complete-wide")
    yield SampleInput(matrix(m, (2, 4, 4)), ("complete",), name="complete-square")
    # forward only: the derivative refuses these modes (as PyTorch's does)
    yield SampleInput(matrix(m, (5, 3), grad=False), ("complete",), name="complete-tall")
    yield SampleInput(
        matrix(m, (4, 3), layout="transposed", grad=False), kwargs=dict(mode="r"), name="r-only"
    )
    yield SampleInput(matrix(m, (0, 3)), name="zero-rows", gradcheck=False)


def _qr_ref(a, mode="reduced"):
    if mode == "r":
        r = (
            per_matrix(lambda x: np.linalg.qr(x, mode="r"), a)
            if a.ndim > 2
            else np.linalg.qr(a, mode="r")
        )
        return np.zeros((0,), a.dtype), r
    return np.linalg.qr(a, mode=mode)


def _cholesky_samples(op, m, dtype):
    for shape in ((3, 3), (2, 4, 4), (1, 1)):
        yield SampleInput(matrix(m, shape, "spd"), name=f"spd-{shape}", gradcheck=False)
    yield SampleInput(matrix(m, (3, 3), "spd"), (True,), name="upper", gradcheck=False)
    yield SampleInput(
        matrix(m, (3, 3), "spd", layout="transposed"), name="transposed", gradcheck=False
    )
    yield SampleInput(matrix(m, (0, 3, 3), "spd"), name="zero-batch", gradcheck=False)


def _cholesky_ex_ref(a, upper=False):
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2], np.int32)
    low = np.linalg.cholesky(np.swapaxes(a, -1, -2) if upper else a)
    return (np.swapaxes(low, -1, -2) if upper else low), np.zeros(a.shape[:-2], np.int32)


def _lu_samples(op, m, dtype):
    for shape in _SHAPES:
        yield SampleInput(
            matrix(m, shape, "invertible" if shape[-1] == shape[-2] else "general"), name=f"{shape}"
        )
    yield SampleInput(matrix(m, (4, 4), layout="transposed"), name="transposed")
    yield SampleInput(matrix(m, (0, 3)), name="zero-rows", gradcheck=False)


def _lu_factor_one(a):
    kk = min(a.shape)
    lu, piv = sl.lu_factor(a, check_finite=False)
    return lu, (piv + 1).astype(np.int32)[:kk]


def _lu_factor_ex_ref(a, pivot=True):
    kk = min(a.shape[-2:])
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2] + (kk,), np.int32), info
    lu, piv = per_matrix(_lu_factor_one, a, n_out=2)
    return lu, piv, info


def _solve_tri_samples(op, m, dtype):
    yield SampleInput(
        matrix(m, (3, 3), "upper"), (matrix(m, (3, 2)),), dict(upper=True), name="upper-left"
    )
    yield SampleInput(
        matrix(m, (3, 3), "lower"),
        (matrix(m, (2, 3)),),
        dict(upper=False, left=False),
        name="lower-right",
    )
    yield SampleInput(
        matrix(m, (2, 3, 3), "upper"),
        (matrix(m, (3, 4)),),
        dict(upper=True, unitriangular=True),
        name="unit-broadcast-B",
    )
    yield SampleInput(
        matrix(m, (3, 3), "lower", layout="transposed"),
        (matrix(m, (2, 1, 3, 2)),),
        dict(upper=False),
        name="broadcast-A",
    )
    yield SampleInput(
        matrix(m, (3, 3), "upper"), (matrix(m, (3, 0)),), dict(upper=True), name="zero-columns"
    )


def _solve_tri_ref(a, b, *, upper, left=True, unitriangular=False):
    def one(x, y):
        if not left:
            return sl.solve_triangular(x.T, y.T, lower=upper, unit_diagonal=unitriangular).T
        return sl.solve_triangular(x, y, lower=not upper, unit_diagonal=unitriangular)

    if b.size == 0:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return np.zeros(batch + b.shape[-2:], b.dtype)
    return per_matrix(one, a, b)


def _torch_private(name: str, flag: str):
    """torch.linalg.<name> taking the private op's positional flag as keyword `flag`."""

    def ref(a, *value):
        import torch

        return getattr(torch.linalg, name)(a, **{flag: v for v in value})

    return ref


OPS: list[OpInfo] = [
    OpInfo(
        "linalg_svd",
        dtypes=LINALG_DTYPES,
        ref=_svd_ref,
        torch_ref=_svd_torch,
        sample_inputs_func=_svd_samples,
        tol=TOL,
    ),
    OpInfo(
        "linalg_eigh",
        dtypes=LINALG_DTYPES,
        ref=_eigh_ref,
        torch_ref=_eigh_torch,
        sample_inputs_func=_eigh_samples,
        tol=TOL,
    ),
    OpInfo(
        "linalg_qr",
        dtypes=LINALG_DTYPES,
        ref=_qr_ref,
        torch_ref=torch_linalg("qr"),
        sample_inputs_func=_qr_samples,
        tol=TOL,
    ),
    OpInfo(
        "_linalg_cholesky_ex",
        dtypes=LINALG_DTYPES,
        ref=_cholesky_ex_ref,
        torch_ref=_torch_private("cholesky_ex", "upper"),
        sample_inputs_func=_cholesky_samples,
        tol=TOL,
    ),
    OpInfo(
        "_linalg_lu_factor_ex",
        dtypes=LINALG_DTYPES,
        ref=_lu_factor_ex_ref,
        torch_ref=_torch_private("lu_factor_ex", "pivot"),
        sample_inputs_func=_lu_samples,
        tol=TOL,
    ),
    OpInfo(
        "linalg_solve_triangular",
        dtypes=LINALG_DTYPES,
        ref=_solve_tri_ref,
        torch_ref=torch_linalg("solve_triangular"),
        sample_inputs_func=_solve_tri_samples,
        tol=TOL,
    ),
]

_ERRORS = {
    "linalg_svd": [
        error_case("1-d", t(3), match=r"linalg.svd: The input tensor A must have at least 2"),
        error_case(
            "int",
            t(2, 2, dtype=_dt.int64),
            match=r"linalg.svd: Expected a floating point or complex tensor as input. "
            r"Got int64",
        ),
    ],
    "linalg_eigh": [
        error_case(
            "non-square",
            t(2, 3),
            match=r"linalg.eigh: A must be batches of square "
            r"matrices, but they are 2 by 3 matrices",
        ),
        error_case("uplo", t(2, 2), ("X",), match=r"Expected UPLO argument to be 'L' or 'U'"),
    ],
    "linalg_qr": [
        error_case("mode", t(2, 2), ("full",), match=r"qr received unrecognized mode 'full'")
    ],
    "_linalg_cholesky_ex": [
        error_case("non-square", t(3, 2), match=r"linalg.cholesky: A must be batches of square")
    ],
    "_linalg_lu_factor_ex": [
        error_case("1-d", t(4), match=r"linalg.lu_factor: The input tensor A must have at least")
    ],
    "linalg_solve_triangular": [
        error_case(
            "shapes",
            t(3, 3, kind="upper"),
            (t(4, 2),),
            dict(upper=True),
            match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)",
        ),
        error_case(
            "batch",
            t(2, 3, 3, kind="upper"),
            (t(3, 3, 2),),
            dict(upper=True),
            match=r"must match the size of tensor b|broadcast",
        ),
        error_case(
            "non-square",
            t(3, 2),
            (t(3, 2),),
            dict(upper=True),
            match=r"A must be batches of square matrices",
        ),
    ],
}
attach_error_cases(OPS, _ERRORS)
