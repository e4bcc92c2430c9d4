"""OpInfos of the solvers, inverses and determinants (coretorch/ops/linalg_solvers.py): numpy /
scipy references. The Cholesky family reads one triangle of its matrix argument, so its samples
skip the plain gradcheck; tests/test_linalg.py checks them on symmetric / triangular inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sl

from ... import dtypes as _dt
from ..opinfo import OpInfo, SampleInput
from .common import attach_error_cases, error_case
from .linalg_common import LINALG_DTYPES, TOL, matrix, matrix_values, per_matrix, t, torch_linalg
from .linalg_factorizations import _cholesky_ex_ref, _lu_factor_ex_ref, _lu_samples


def _np_lu(a):
    """(LU, 1-based int32 pivots) of a batch, as LAPACK's getrf."""
    lu, piv, _ = _lu_factor_ex_ref(a)
    return lu, piv


def _lu_inputs(m, shape, layout="contiguous"):
    """(LU, pivots) tensors of a well-conditioned (batch of) matrices."""
    a = matrix_values(m, shape, "invertible" if shape[-1] == shape[-2] else "general")
    lu, piv = _np_lu(a)
    return (
        m.make(shape, values=lu, layout=layout),
        m.make(piv.shape, dtype=_dt.int32, values=piv, requires_grad=False),
    )


def _permutation(piv, rows: int):
    perm = list(range(rows))
    for i, p in enumerate(piv):
        perm[i], perm[p - 1] = perm[p - 1], perm[i]
    P = np.zeros((rows, rows))
    P[perm, np.arange(rows)] = 1
    return P


def _lu_unpack_ref(lu, piv, unpack_data=True, unpack_pivots=True):
    mm, n = lu.shape[-2:]
    k = min(mm, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(mm, k, dtype=lu.dtype)
    U = np.triu(lu[..., :k, :])
    batch = lu.shape[:-2]
    P = (
        np.stack([_permutation(piv[idx], mm) for idx in np.ndindex(*batch)])
        .reshape(batch + (mm, mm))
        .astype(lu.dtype)
        if batch != (0,)
        else np.zeros(batch + (mm, mm))
    )
    empty = np.zeros((0,), lu.dtype)
    return (P if unpack_pivots else empty, L if unpack_data else empty, U if unpack_data else empty)


def _a_of(lu, piv):
    P, L, U = _lu_unpack_ref(lu, piv)
    return P @ L @ U


def _solve_np(a, b, left=True):
    """X with a X = b (X a = b when not left), PyTorch's vector rule, batch broadcast."""
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        return np.linalg.solve(a, b[..., None])[..., 0]
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    return np.linalg.solve(a, b)


# ---- LU -----------------------------------------------------------------------------------------


def _lu_factor_ref(a, *, pivot=True):
    return _lu_factor_ex_ref(a)[:2]


def _lu_ref(a, *, pivot=True):
    if a.size == 0:
        mm, n = a.shape[-2:]
        k = min(mm, n)
        z = a.shape[:-2]
        return np.zeros(z + (mm, mm), a.dtype), np.zeros(z + (mm, k)), np.zeros(z + (k, n))
    return per_matrix(lambda x: sl.lu(x), a, n_out=3)


def _lu_unpack_samples(op, m, dtype):
    for shape in ((3, 3), (4, 2), (2, 4), (2, 3, 3)):
        lu, piv = _lu_inputs(m, shape)
        yield SampleInput(lu, (piv,), name=f"{shape}")
    lu, piv = _lu_inputs(m, (3, 3))
    yield SampleInput(lu, (piv,), dict(unpack_pivots=False), name="no-P")
    lu, piv = _lu_inputs(m, (3, 3), layout="transposed")
    yield SampleInput(lu, (piv,), name="transposed-LU")


def _lu_solve_samples(op, m, dtype):
    lu, piv = _lu_inputs(m, (3, 3))
    yield SampleInput(lu, (piv, matrix(m, (3, 2))), name="plain")
    yield SampleInput(lu, (piv, matrix(m, (3, 2))), dict(adjoint=True), name="adjoint")
    yield SampleInput(lu, (piv, matrix(m, (2, 3))), dict(left=False), name="right")
    yield SampleInput(
        lu, (piv, matrix(m, (2, 3))), dict(left=False, adjoint=True), name="right-adjoint"
    )
    blu, bpiv = _lu_inputs(m, (2, 3, 3))
    yield SampleInput(blu, (bpiv, matrix(m, (3, 4), layout="transposed")), name="batched-LU")
    yield SampleInput(lu, (piv, matrix(m, (2, 3, 1))), name="batched-B")


def _lu_solve_ref(lu, piv, b, *, left=True, adjoint=False):
    a = _a_of(lu, piv)
    return _solve_np(np.swapaxes(a, -1, -2) if adjoint else a, b, left)


def _lu_solve_legacy_samples(op, m, dtype):
    lu, piv = _lu_inputs(m, (3, 3))
    yield SampleInput(matrix(m, (3, 2)), (lu, piv), name="plain")
    blu, bpiv = _lu_inputs(m, (2, 4, 4))
    yield SampleInput(matrix(m, (2, 4, 1)), (blu, bpiv), name="batched")


def _lu_solve_legacy_ref(b, lu, piv):
    return _solve_np(_a_of(lu, piv), b)


# ---- solve, inv, det ----------------------------------------------------------------------------


def _solve_samples(op, m, dtype):
    inv = "invertible"
    yield SampleInput(matrix(m, (3, 3), inv), (matrix(m, (3, 2)),), name="matrix-rhs")
    yield SampleInput(matrix(m, (3, 3), inv), (m.make((3,)),), name="vector-rhs")
    yield SampleInput(matrix(m, (2, 3, 3), inv), (m.make((2, 3)),), name="batched-vector-rhs")
    yield SampleInput(
        matrix(m, (2, 3, 3), inv, layout="transposed"), (matrix(m, (3, 4)),), name="broadcast-B"
    )
    yield SampleInput(matrix(m, (3, 3), inv), (matrix(m, (2, 1, 3, 2)),), name="broadcast-A")
    yield SampleInput(matrix(m, (3, 3), inv), (matrix(m, (2, 3)),), dict(left=False), name="right")
    yield SampleInput(matrix(m, (0, 3, 3), inv), (matrix(m, (0, 3, 2)),), name="zero-batch")


def _solve_ref(a, b, *, left=True):
    return _solve_np(a, b, left)


def _solve_ex_ref(a, b, *, left=True, check_errors=False):
    return _solve_np(a, b, left), np.zeros(a.shape[:-2], np.int32)


def _square_samples(kind="invertible"):
    def samples(op, m, dtype):
        for shape in ((3, 3), (2, 4, 4), (1, 1)):
            yield SampleInput(matrix(m, shape, kind), name=f"{shape}")
        yield SampleInput(matrix(m, (3, 3), kind, layout="transposed"), name="transposed")
        yield SampleInput(matrix(m, (2, 1, 2, 2), kind, layout="sliced"), name="sliced")
        yield SampleInput(matrix(m, (0, 3, 3), kind), name="zero-batch")
        yield SampleInput(matrix(m, (0, 0), kind), name="0x0")

    return samples


def _det_samples(op, m, dtype):
    yield from _square_samples("general")(op, m, dtype)
    # PyTorch 2.13 answers the gradient at an exactly singular matrix with zeros (its own
    # gradcheck fails there); coretorch gives the adjugate, checked in tests/test_linalg.py
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    yield SampleInput(m.make((3, 3), values=singular), name="singular", gradcheck=False)
    yield SampleInput(
        m.make((2, 3, 3), values=np.stack([singular, singular.T + 3 * np.eye(3)])),
        name="singular-and-invertible",
        gradcheck=False,
    )


def _logdet_samples(op, m, dtype):
    yield from _square_samples()(op, m, dtype)
    # a negative determinant: NaN (forward only)
    yield SampleInput(
        m.make((2, 2), values=[[0.0, 1.0], [1.0, 0.5]], requires_grad=False), name="negative-det"
    )


def _inv_ex_ref(a, *, check_errors=False):
    return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)


def _det_ref(a):
    return np.linalg.det(a) if a.size else np.ones(a.shape[:-2], a.dtype)


def _slogdet_ref(a):
    if a.size == 0:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], a.dtype)
    return tuple(np.linalg.slogdet(a))


def _logdet_ref(a):
    sign, logabs = _slogdet_ref(a)
    with np.errstate(invalid="ignore"):
        return np.where(sign < 0, np.nan, logabs)


# ---- cholesky -----------------------------------------------------------------------------------


def _spd_samples(op, m, dtype):
    for shape in ((3, 3), (2, 4, 4), (1, 1)):
        yield SampleInput(matrix(m, shape, "spd"), name=f"{shape}", gradcheck=False)
    yield SampleInput(
        matrix(m, (3, 3), "spd"), kwargs=dict(upper=True), name="upper", gradcheck=False
    )
    yield SampleInput(
        matrix(m, (3, 3), "spd", layout="transposed"), name="transposed", gradcheck=False
    )


def _cholesky_ref(a, upper=False):
    return _cholesky_ex_ref(a, upper)[0]


def _cholesky_ex_kw_ref(a, *, upper=False, check_errors=False):
    return _cholesky_ex_ref(a, upper)


def _chol_factor(m, shape, upper=False):
    low = np.linalg.cholesky(matrix_values(m, shape, "spd"))
    f = np.swapaxes(low, -1, -2) if upper else low
    return m.make(shape, values=f)


def _cholesky_solve_samples(op, m, dtype):
    yield SampleInput(matrix(m, (3, 2)), (_chol_factor(m, (3, 3)),), name="lower", gradcheck=False)
    yield SampleInput(
        matrix(m, (3, 2)), (_chol_factor(m, (3, 3), True), True), name="upper", gradcheck=False
    )
    yield SampleInput(
        matrix(m, (2, 3, 1)), (_chol_factor(m, (3, 3)),), name="broadcast", gradcheck=False
    )


def _gram(f, upper):
    return np.swapaxes(f, -1, -2) @ f if upper else f @ np.swapaxes(f, -1, -2)


def _cholesky_solve_ref(b, f, upper=False):
    return np.linalg.solve(_gram(f, upper), b)


def _cholesky_inverse_samples(op, m, dtype):
    yield SampleInput(_chol_factor(m, (3, 3)), name="lower", gradcheck=False)
    yield SampleInput(_chol_factor(m, (4, 4), True), (True,), name="upper", gradcheck=False)
    yield SampleInput(_chol_factor(m, (2, 3, 3)), name="batched", gradcheck=False)


def _cholesky_inverse_ref(f, upper=False):
    return np.linalg.inv(_gram(f, upper))


def _triangular_solve_samples(op, m, dtype):
    yield SampleInput(matrix(m, (3, 2)), (matrix(m, (3, 3), "upper"),), name="upper")
    yield SampleInput(matrix(m, (3, 2)), (matrix(m, (3, 3), "lower"), False), name="lower")
    yield SampleInput(
        matrix(m, (2, 3, 2)),
        (matrix(m, (3, 3), "upper"),),
        dict(transpose=True, unitriangular=True),
        name="transpose-unit",
    )


def _triangular_solve_ref(b, a, upper=True, transpose=False, unitriangular=False):
    def one(x, y):
        return sl.solve_triangular(
            x, y, trans=1 if transpose else 0, lower=not upper, unit_diagonal=unitriangular
        )

    x = per_matrix(one, a, b)
    return x, np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]).copy()


def _tl(name):
    return torch_linalg(name)


_O: dict[str, Any] = dict(dtypes=LINALG_DTYPES, tol=TOL)
OPS: list[OpInfo] = [
    OpInfo(
        "linalg_lu_factor_ex",
        ref=_lu_factor_ex_ref,
        torch_ref=_tl("lu_factor_ex"),
        sample_inputs_func=_lu_samples,
        **_O,
    ),
    OpInfo(
        "linalg_lu_factor",
        ref=_lu_factor_ref,
        torch_ref=_tl("lu_factor"),
        sample_inputs_func=_lu_samples,
        **_O,
    ),
    OpInfo("linalg_lu", ref=_lu_ref, torch_ref=_tl("lu"), sample_inputs_func=_lu_samples, **_O),
    OpInfo("lu_unpack", ref=_lu_unpack_ref, sample_inputs_func=_lu_unpack_samples, **_O),
    OpInfo(
        "linalg_lu_solve",
        ref=_lu_solve_ref,
        torch_ref=_tl("lu_solve"),
        sample_inputs_func=_lu_solve_samples,
        **_O,
    ),
    OpInfo("lu_solve", ref=_lu_solve_legacy_ref, sample_inputs_func=_lu_solve_legacy_samples, **_O),
    OpInfo(
        "linalg_solve_ex",
        ref=_solve_ex_ref,
        torch_ref=_tl("solve_ex"),
        sample_inputs_func=_solve_samples,
        **_O,
    ),
    OpInfo(
        "linalg_solve",
        ref=_solve_ref,
        torch_ref=_tl("solve"),
        sample_inputs_func=_solve_samples,
        **_O,
    ),
    OpInfo(
        "linalg_inv_ex",
        ref=_inv_ex_ref,
        torch_ref=_tl("inv_ex"),
        sample_inputs_func=_square_samples(),
        **_O,
    ),
    OpInfo(
        "linalg_inv",
        ref=np.linalg.inv,
        torch_ref=_tl("inv"),
        sample_inputs_func=_square_samples(),
        **_O,
    ),
    OpInfo("inverse", ref=np.linalg.inv, sample_inputs_func=_square_samples(), **_O),
    OpInfo("linalg_det", ref=_det_ref, torch_ref=_tl("det"), sample_inputs_func=_det_samples, **_O),
    OpInfo("det", ref=_det_ref, sample_inputs_func=_det_samples, **_O),
    OpInfo(
        "linalg_slogdet",
        ref=_slogdet_ref,
        torch_ref=_tl("slogdet"),
        sample_inputs_func=_square_samples(),
        **_O,
    ),
    OpInfo("slogdet", ref=_slogdet_ref, sample_inputs_func=_square_samples(), **_O),
    OpInfo("logdet", ref=_logdet_ref, sample_inputs_func=_logdet_samples, **_O),
    OpInfo(
        "linalg_cholesky_ex",
        ref=_cholesky_ex_kw_ref,
        torch_ref=_tl("cholesky_ex"),
        sample_inputs_func=_spd_samples,
        **_O,
    ),
    OpInfo(
        "linalg_cholesky",
        ref=lambda a, *, upper=False: _cholesky_ref(a, upper),
        torch_ref=_tl("cholesky"),
        sample_inputs_func=_spd_samples,
        **_O,
    ),
    OpInfo("cholesky", ref=_cholesky_ref, sample_inputs_func=_spd_samples, **_O),
    OpInfo(
        "cholesky_solve", ref=_cholesky_solve_ref, sample_inputs_func=_cholesky_solve_samples, **_O
    ),
    OpInfo(
        "cholesky_inverse",
        ref=_cholesky_inverse_ref,
        sample_inputs_func=_cholesky_inverse_samples,
        **_O,
    ),
    OpInfo(
        "triangular_solve",
        ref=_triangular_solve_ref,
        sample_inputs_func=_triangular_solve_samples,
        **_O,
    ),
]


def _other_dtype(*shape):
    """A tensor of the other float dtype than the sample's."""
    return lambda m: m.make(shape, dtype=_dt.float64 if m.dtype is _dt.float32 else _dt.float32)


_SQUARE_ERR = "must be batches of square matrices, but they are 2 by 3 matrices"
_ERRORS = {
    "linalg_lu_factor": [error_case("1-d", t(3), match=r"must have at least 2 dimensions")],
    "linalg_lu_solve": [
        error_case(
            "pivots-dtype",
            t(3, 3),
            (t(3, dtype=_dt.int64), t(3, 1)),
            match=r"pivots should be a Tensor of scalar type int32",
        )
    ],
    "linalg_solve": [
        error_case("non-square", t(2, 3), (t(2, 1),), match=r"linalg.solve: A " + _SQUARE_ERR),
        error_case(
            "rhs",
            t(3, 3),
            (t(4, 1),),
            match=r"Incompatible shapes of A and B for the equation AX = B",
        ),
        error_case(
            "dtype",
            t(3, 3),
            (_other_dtype(3, 1),),
            match=r"Expected A and B to have the same dtype",
        ),
    ],
    "linalg_inv": [
        error_case("non-square", t(2, 3), match=r"linalg.inv: A " + _SQUARE_ERR),
        error_case(
            "int", t(2, 2, dtype=_dt.int64), match=r"Expected a floating point or complex tensor"
        ),
    ],
    "linalg_det": [error_case("1-d", t(3), match=r"must have at least 2 dimensions")],
    "linalg_slogdet": [error_case("non-square", t(2, 3), match=_SQUARE_ERR)],
    "linalg_cholesky": [error_case("non-square", t(2, 3), match=_SQUARE_ERR)],
    "cholesky_solve": [
        error_case(
            "sizes", t(4, 1), (t(3, 3),), match=r"Incompatible matrix sizes for cholesky_solve"
        )
    ],
    "triangular_solve": [
        error_case(
            "sizes", t(4, 1), (t(3, 3),), match=r"Incompatible matrix sizes for triangular_solve"
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
