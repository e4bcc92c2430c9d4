"""Functions of the spectrum, written with svd / eigh: svdvals, eigvalsh, pinv, matrix_rank,
cond, lstsq, and the top-level svd / qr / pinverse forms. Derivatives are PyTorch's (svdvals
and eigvalsh through the singular / eigen vectors, pinv_backward); lstsq differentiates through
pinv as PyTorch's linalg_lstsq_backward does.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from .declare import declare
from .linalg_common import (
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    check_uplo,
    mT,
    named,
    op,
)
from .meta_rules import broadcast_shapes, common_device

__all__ = ["svd_rank_threshold"]

_L: dict[str, Any] = dict(family="linalg", method=False, function=False)


# ---- svdvals, eigvalsh --------------------------------------------------------------------------


def _meta_svdvals(A, driver):
    check_float("linalg.svdvals", A)
    check_matrix("linalg.svdvals", A)
    return (A._shape[:-2] + (min(A._shape[-2:]),), A._dtype, A._device)


def _svdvals(A, driver):
    """The singular values of A, in descending order."""
    return op("linalg_svd")(A, False)[1]


def _d_svdvals(ctx, grad):
    """U diag(grad) Vh (svd_backward with only the singular values' gradient)."""
    U, _, Vh = op("linalg_svd")(ctx.A, False)
    m, n = ctx.A._shape[-2:]
    if m >= n:
        return (U.matmul(grad.unsqueeze(-1) * Vh),)
    return ((U * grad.unsqueeze(-2)).matmul(Vh),)


def _meta_eigvalsh(A, UPLO):
    check_float("linalg.eigvalsh", A)
    check_square("linalg.eigvalsh", A)
    check_uplo("linalg.eigvalsh", UPLO)
    return (A._shape[:-1], A._dtype, A._device)


def _eigvalsh(A, UPLO):
    """The eigenvalues of a symmetric matrix (from its UPLO triangle), ascending."""
    return op("linalg_eigh")(A, UPLO)[0]


def _d_eigvalsh(ctx, grad):
    """V diag(grad) V^T (linalg_eig_backward with only the eigenvalues' gradient)."""
    V = op("linalg_eigh")(ctx.A, ctx.UPLO)[1]
    return ((V * grad.unsqueeze(-2)).matmul(mT(V)),)


# ---- pinv, matrix_rank --------------------------------------------------------------------------


def _eps(d) -> float:
    return 2.220446049250313e-16 if d is dt.float64 else 1.1920928955078125e-07


def svd_rank_threshold(A, S, atol, rtol):
    """PyTorch's cut-off for "zero" singular values: max(atol, rtol * largest), rtol defaulting
    to eps * max(m, n) (to 0 when only a positive atol is given)."""
    m, n = A._shape[-2:]
    if rtol is None:
        rtol = (
            0.0
            if (atol is not None and (not isinstance(atol, (int, float)) or atol > 0))
            else _eps(A._dtype) * max(m, n)
        )
    largest = S.amax(-1, keepdim=True) if S._shape[-1] else S.new_zeros(S._shape[:-1] + (1,))
    thr = largest * (rtol.unsqueeze(-1) if hasattr(rtol, "_shape") else rtol)
    if atol is not None:
        thr = op("maximum")(
            thr, atol.unsqueeze(-1) if hasattr(atol, "_shape") else thr.new_full((), float(atol))
        )
    return thr


def _check_spectral(name, A, atol, rtol, hermitian) -> None:
    """pinv / matrix_rank: a float matrix (square when hermitian), float tolerance tensors."""
    check_float(name, A)
    check_matrix(name, A)
    for tol in (atol, rtol):
        if hasattr(tol, "_shape") and not tol._dtype.is_floating_point:
            raise RuntimeError(
                f"{name}: atol and rtol tensors must be floating point, got {tol._dtype.name}"
            )
    if hermitian:
        check_square(name, A)


def _meta_pinv(A, atol, rtol, hermitian):
    _check_spectral("linalg.pinv", A, atol, rtol, hermitian)
    return (A._shape[:-2] + (A._shape[-1], A._shape[-2]), A._dtype, A._device)


def _pinv(A, atol, rtol, hermitian):
    """The Moore-Penrose pseudo-inverse through the SVD (eigh when hermitian), singular values
    below max(atol, rtol * largest) treated as zero."""
    where = op("where")
    if hermitian:
        L, V = op("linalg_eigh")(A)
        thr = svd_rank_threshold(A, L.abs(), atol, rtol)
        Linv = where(L.abs().gt(thr), L.reciprocal(), 0.0)
        return (V * Linv.unsqueeze(-2)).matmul(mT(V))
    U, S, Vh = op("linalg_svd")(A, False)
    thr = svd_rank_threshold(A, S, atol, rtol)
    Sinv = where(S.gt(thr), S.reciprocal(), 0.0)
    return (mT(Vh) * Sinv.unsqueeze(-2)).matmul(mT(U))


def pinv_backward(grad, pinvA, A):
    """PyTorch's pinv_backward (real case)."""
    m, n = A._shape[-2:]
    pinvAh, gradh = mT(pinvA), mT(grad)
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (
            mT(pinvA.matmul(K)).neg()
            + KpinvAh
            - A.matmul(pinvA).matmul(KpinvAh)
            + pinvAh.matmul(pinvA).matmul(gradh - K.matmul(A))
        )
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (
        mT(K.matmul(pinvA)).neg()
        + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh)
        + pinvAhK
        - pinvAhK.matmul(pinvA).matmul(A)
    )


def _d_pinv(ctx, grad):
    return (pinv_backward(grad, ctx.result, ctx.A),)


def _meta_pinverse(self, rcond):
    return _meta_pinv(self, None, rcond, False)


def _pinverse(self, rcond):
    """The pseudo-inverse, singular values below rcond * largest treated as zero
    (``torch.pinverse``)."""
    return op("linalg_pinv")(self, rtol=rcond)


def _meta_matrix_rank(A, atol, rtol, hermitian):
    _check_spectral("linalg.matrix_rank", A, atol, rtol, hermitian)
    return (A._shape[:-2], dt.int64, A._device)


def _matrix_rank(A, atol, rtol, hermitian):
    """The number of singular values (|eigenvalues| when hermitian) above the threshold."""
    S = op("linalg_eigvalsh")(A).abs() if hermitian else op("linalg_svdvals")(A)
    return S.gt(svd_rank_threshold(A, S, atol, rtol)).sum(-1)


# ---- cond ---------------------------------------------------------------------------------------

_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def _meta_cond(A, p):
    check_float("linalg.cond", A)
    check_matrix("linalg.cond", A)
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p not in (None, 2, -2):
        check_square("linalg.cond", A)
    return (A._shape[:-2], A._dtype, A._device)


def _cond(A, p):
    """The condition number ||A|| ||A^-1|| in norm p (None: the 2-norm, from the singular
    values); inf for a singular matrix."""
    if p in (None, 2, -2):
        S = op("linalg_svdvals")(A)
        big, small = S.narrow(-1, 0, 1).squeeze(-1), S.narrow(-1, S._shape[-1] - 1, 1).squeeze(-1)
        return big / small if p != -2 else small / big
    inv, info = op("linalg_inv_ex")(A)
    norm = op("linalg_matrix_norm")
    res = norm(A, p) * norm(inv, p)
    return op("where")(info.gt(0), math.inf, res)


# ---- lstsq --------------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _meta_lstsq(self, b, rcond, driver):
    name = "torch.linalg.lstsq"
    check_float(name, self, b)
    check_same_dtype(name, self, b, "self and b")
    check_matrix(name, self, "A")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(
            f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    m, n = self._shape[-2:]
    vector = _vector_rhs(self, b)
    rows = b._shape[-1] if vector else b._shape[-2]
    if rows != m:
        raise RuntimeError(
            f"{name}: input.size(-2) should match other.size(-{1 if vector else 2})"
            f". Got {m} and {rows}"
        )
    bshape = b._shape[:-1] + (1,) if vector else b._shape
    batch = broadcast_shapes(name, self._shape[:-2], bshape[:-2])
    k = bshape[-1]
    sol = batch + ((n,) if vector else (n, k))
    driver = driver or "gelsy"
    res = batch + (k,) if (m > n and driver != "gelsy") else (0,)
    if vector and res != (0,):
        res = batch + (1,)
    rank = batch if driver != "gels" else (0,)
    sv = batch + (min(m, n),) if driver in ("gelsd", "gelss") else (0,)
    dev = common_device(name, self, b)
    return [
        (sol, self._dtype, dev),
        (res, self._dtype, dev),
        (rank, dt.int64, dev),
        (sv, self._dtype, dev),
    ]


def _vector_rhs(A, b) -> bool:
    """PyTorch's rule: b is a vector (batch) when 1-D or shaped as A without its last dim."""
    return len(b._shape) == 1 or (len(b._shape) == len(A._shape) - 1 and b._shape == A._shape[:-1])


def _lstsq(self, b, rcond, driver):
    """(solution, residuals, rank, singular_values) of min ||A X - B||: X = pinv(A) B.
    residuals (the squared error per column) only for tall A and drivers other than gelsy;
    rank for drivers other than gels; singular values for gelsd / gelss (as PyTorch)."""
    A, driver = self, driver or "gelsy"
    vector = _vector_rhs(A, b)
    B = b.unsqueeze(-1) if vector else b
    rtol = rcond if rcond is not None and rcond > 0 else None
    X = op("linalg_pinv")(A, rtol=rtol).matmul(B)
    m, n = A._shape[-2:]
    empty = A.new_zeros((0,))
    if m > n and driver != "gelsy":
        r = A.matmul(X) - B
        residuals = (r * r).sum(-2)
    else:
        residuals = empty
    rank = op("linalg_matrix_rank")(A) if driver != "gels" else A.new_zeros((0,), dtype=dt.int64)
    sv = op("linalg_svdvals")(A) if driver in ("gelsd", "gelss") else empty
    if rank._shape and driver != "gels" and A._shape[:-2] != X._shape[:-2]:
        rank = rank.expand(X._shape[:-2])
    return named("linalg_lstsq", X.squeeze(-1) if vector else X, residuals, rank, sv)


# ---- top-level svd, qr --------------------------------------------------------------------------


def _meta_svd_top(self, some, compute_uv):
    check_float("svd", self)
    check_matrix("svd", self, "input")
    *batch, m, n = self._shape
    batch, k = tuple(batch), min(m, n)
    reduced = some and compute_uv  # without vectors PyTorch returns square zero matrices
    u = batch + (m, k if reduced else m)
    v = batch + (n, k if reduced else n)
    return [
        (u, self._dtype, self._device),
        (batch + (k,), self._dtype, self._device),
        (v, self._dtype, self._device),
    ]


def _svd_top(self, some, compute_uv):
    """(U, S, V) with self = U diag(S) V^T (``torch.svd``: V, not Vh; reduced when some;
    zero-filled U and V when not compute_uv)."""
    if not compute_uv:
        S = op("linalg_svdvals")(self)
        spec = _meta_svd_top(self, some, compute_uv)
        return named("svd", self.new_zeros(spec[0][0]), S, self.new_zeros(spec[2][0]))
    U, S, Vh = op("linalg_svd")(self, not some)
    return named("svd", U, S, mT(Vh).contiguous())


def _meta_qr_top(self, some):
    from .declare import REGISTRY

    return REGISTRY["linalg_qr"].meta(self, "reduced" if some else "complete")


def _qr_top(self, some):
    """(Q, R) with self = QR (``torch.qr``: reduced when some, else complete)."""
    return named("qr", *op("linalg_qr")(self, "reduced" if some else "complete"))


def _declare_all() -> None:
    declare(
        "linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor",
        _meta_svdvals,
        impl=_svdvals,
        derivative=_d_svdvals,
        saves=("A",),
        **_L,
    )
    declare(
        "linalg_eigvalsh(Tensor A, str UPLO='L') -> Tensor",
        _meta_eigvalsh,
        impl=_eigvalsh,
        derivative=_d_eigvalsh,
        saves=("A",),
        **_L,
    )
    declare(
        "linalg_pinv(Tensor A, *, Any atol=None, Any rtol=None, bool hermitian=False) -> Tensor",
        _meta_pinv,
        impl=_pinv,
        derivative=_d_pinv,
        saves=("A",),
        save_result=True,
        **_L,
    )
    declare(
        "pinverse(Tensor self, float rcond=1e-15) -> Tensor",
        _meta_pinverse,
        impl=_pinverse,
        family="linalg",
    )
    declare(
        "linalg_matrix_rank(Tensor A, *, Any atol=None, Any rtol=None, "
        "bool hermitian=False) -> Tensor",
        _meta_matrix_rank,
        impl=_matrix_rank,
        differentiable=False,
        **_L,
    )
    declare("linalg_cond(Tensor A, Any p=None) -> Tensor", _meta_cond, impl=_cond, **_L)
    declare(
        "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
        "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
        _meta_lstsq,
        impl=_lstsq,
        **_L,
    )
    declare(
        "svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
        _meta_svd_top,
        impl=_svd_top,
        family="linalg",
    )
    declare(
        "qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)",
        _meta_qr_top,
        impl=_qr_top,
        family="linalg",
    )


_declare_all()
