"""The linear-algebra primitives: svd, eigh, qr, cholesky, LU and the triangular solve, with
PyTorch's backward formulas (FunctionsManual.cpp: svd_backward, linalg_eig_backward for the
symmetric case, linalg_qr_backward, cholesky_backward, lu_factor_ex_backward,
linalg_solve_triangular backward). Every other ``linalg`` op is a composite of these and the
matrix products. Leading dims are batch dims; only float32/float64 (no complex dtypes yet).

The formulas are written with ops, so they differentiate again (double backward). Missing
output gradients arrive as zeros; the formulas are then still exact for distinct singular
values / eigenvalues (svdvals and eigvalsh have their own derivatives for repeated ones).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as dt
from ..device import get_device_type
from ..tensor.impl import shape_numel
from .declare import declare
from .factories_public import tensor
from .linalg_common import (
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    check_uplo,
    diag_embed,
    eye_like,
    holds_data,
    mT,
    op,
)
from .meta_rules import broadcast_shapes, common_device

__all__ = ["lu_unpack_impl", "svd_backward", "eigh_backward", "cholesky_backward"]

_FACTOR: dict[str, Any] = dict(family="linalg")


# ---- svd ----------------------------------------------------------------------------------------


def _meta_svd(A, full_matrices, driver):
    check_float("linalg.svd", A)
    check_matrix("linalg.svd", A)
    *batch, m, n = A._shape
    batch, k = tuple(batch), min(m, n)
    u = batch + ((m, m) if full_matrices else (m, k))
    vh = batch + ((n, n) if full_matrices else (k, n))
    return [
        (u, A._dtype, A._device),
        (batch + (k,), A._dtype, A._device),
        (vh, A._dtype, A._device),
    ]


def svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's svd_backward (real case; reduced factors, at least one of gU/gVh given)."""
    m, n = U._shape[-2], Vh._shape[-1]
    UhgU = mT(U).matmul(gU)
    UhgU = UhgU - mT(UhgU)
    VhgV = Vh.matmul(mT(gVh))
    VhgV = VhgV - mT(VhgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye_like(S)  # ones on the diagonal
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + diag_embed(gS)
    if m > n:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U.matmul(mT(U).matmul(gUSinv))
        return gA.matmul(Vh)
    if m < n:
        gA = gA.matmul(Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - SinvgVh.matmul(mT(Vh)).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(gA.matmul(Vh))


def _d_svd(ctx, gU, gS, gVh):
    U, S, Vh = ctx.result
    if ctx.full_matrices:  # the extra columns of U / rows of Vh carry nothing about A
        k = S._shape[-1]
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    return (svd_backward(gU, gS, gVh, U, S, Vh),)


# ---- eigh ---------------------------------------------------------------------------------------


def _meta_eigh(A, UPLO):
    check_float("linalg.eigh", A)
    check_square("linalg.eigh", A)
    check_uplo("linalg.eigh", UPLO)
    return [(A._shape[:-1], A._dtype, A._device), (A._shape, A._dtype, A._device)]


def eigh_backward(gL, gV, L, V):
    """PyTorch's linalg_eig_backward for a symmetric matrix: V (skew(V^T gV) / E + diag(gL)) V^T
    with E_ij = L_j - L_i (ones on the diagonal)."""
    VhgV = mT(V).matmul(gV)
    VhgV = (VhgV - mT(VhgV)) * 0.5
    eye = eye_like(L)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    gA = VhgV / E + diag_embed(gL)
    return V.matmul(gA.matmul(mT(V)))


def _d_eigh(ctx, gL, gV):
    L, V = ctx.result
    return (eigh_backward(gL, gV, L, V),)


# ---- qr -----------------------------------------------------------------------------------------

_QR_MODES = ("reduced", "complete", "r")


def _meta_qr(A, mode):
    check_float("linalg.qr", A)
    check_matrix("linalg.qr", A)
    if mode not in _QR_MODES:
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            f"'reduced' (default), 'r', or 'complete'"
        )
    *batch, m, n = A._shape
    batch, k = tuple(batch), min(m, n)
    if mode == "complete":
        q, r = batch + (m, m), batch + (m, n)
    else:
        q, r = (batch + (m, k) if mode == "reduced" else (0,)), batch + (k, n)
    return [(q, A._dtype, A._device), (r, A._dtype, A._device)]


def _d_qr(ctx, gQ, gR):
    """PyTorch's linalg_qr_backward (real case)."""
    Q, R = ctx.result
    if ctx.mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when "
            "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
            "to differentiate through linalg.qr."
        )
    m, n = Q._shape[-2], R._shape[-1]
    if ctx.mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    gA = gR.matmul(mT(R)) - mT(Q).matmul(gQ)
    solve_tri = op("linalg_solve_triangular")
    if m >= n:
        sym = gA.triu()
        sym = sym + mT(sym)
        sym = sym - diag_embed(sym.diagonal(0, -2, -1) * 0.5)  # X + X^T, diagonal halved
        return (solve_tri(mT(R), Q.matmul(sym) + gQ, upper=False, left=False),)
    X = gA.neg()
    gA = solve_tri(mT(R.narrow(-1, 0, m)), Q.matmul((X - mT(X)).tril()), upper=False, left=False)
    gA = op("cat")([gA, gA.new_zeros(R._shape[:-1] + (n - m,))], -1)
    return (gA + Q.matmul(gR),)


# ---- cholesky -----------------------------------------------------------------------------------


def _meta_cholesky_ex(A, upper):
    check_float("linalg.cholesky", A)
    check_square("linalg.cholesky", A)
    return [(A._shape, A._dtype, A._device), (A._shape[:-2], dt.int32, A._device)]


def cholesky_backward(gL, upper: bool, L):
    """PyTorch's cholesky_backward: L^-T Phi(L^T gL) L^-1, Phi symmetrizing the lower half."""
    if upper:
        L, gL = mT(L), mT(gL)
    gA = mT(L).matmul(gL).tril()
    gA = (gA + mT(gA.tril(-1))) * 0.5
    solve_tri = op("linalg_solve_triangular")
    gA = solve_tri(mT(L), gA, upper=True, left=True)
    return solve_tri(L, gA, upper=False, left=False)


def _d_cholesky_ex(ctx, gL, ginfo=None):
    return (cholesky_backward(gL, ctx.upper, ctx.result[0]),)


# ---- LU -----------------------------------------------------------------------------------------


def _meta_lu_factor_ex(A, pivot):
    check_float("linalg.lu_factor", A)
    check_matrix("linalg.lu_factor", A)
    *batch, m, n = A._shape
    batch = tuple(batch)
    return [
        (A._shape, A._dtype, A._device),
        (batch + (min(m, n),), dt.int32, A._device),
        (batch, dt.int32, A._device),
    ]


def permutation_of(pivots, m: int):
    """The row permutation LAPACK's 1-based row swaps `pivots` (..., k) make of m rows:
    ``perm[..., r]`` is the original row that ends up at row r (int64, (..., m)). The swaps are
    replayed on the host (k small steps there, not k dispatched ops); a shape-only device gets
    the shape."""
    batch, k = pivots._shape[:-1], pivots._shape[-1]
    if not holds_data(pivots) or shape_numel(pivots._shape) == 0:
        return op("arange")(m, device=pivots._device).expand(batch + (m,)).contiguous()
    piv = np.asarray(get_device_type(pivots._device).read_numpy(pivots)).reshape(-1, k) - 1
    perm = np.tile(np.arange(m, dtype=np.int64), (piv.shape[0], 1))
    rows = np.arange(piv.shape[0])
    for i in range(k):
        j = piv[:, i]
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return tensor(perm.reshape(batch + (m,)), device=pivots._device)


def lu_unpack_impl(LU, pivots, unpack_data: bool = True, unpack_pivots: bool = True):
    """(P, L, U) of a packed LU factorization, with A = P L U (empty where not unpacked)."""
    m, n = LU._shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = LU.narrow(-1, 0, k).tril(-1) + op("eye")(m, k, dtype=LU._dtype, device=LU._device)
        U = LU.narrow(-2, 0, k).triu()
    else:
        L = U = LU.new_empty((0,))
    if unpack_pivots:
        perm = permutation_of(pivots, m)
        rows = op("arange")(m, device=LU._device).unsqueeze(-1)
        P = rows.eq(perm.unsqueeze(-2)).to(LU._dtype)
    else:
        P = LU.new_empty((0,))
    return P, L, U


def lu_backward(gL, gU, P, L, U, pivot: bool):
    """PyTorch's linalg_lu_backward: the gradient of A = P L U from those of L and U."""
    m, n = L._shape[-2], U._shape[-1]
    k = min(m, n)
    solve_tri, cat = op("linalg_solve_triangular"), op("cat")
    if m == n:
        gA = mT(L).matmul(gL).tril(-1) + gU.matmul(mT(U)).triu()
        gA = solve_tri(mT(U), gA, upper=False, left=False)
        gA = solve_tri(mT(L), gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = mT(L).matmul(gL) - gU.triu().matmul(mT(U))
        gA = solve_tri(mT(U1), gA.tril(-1), upper=False, left=False)
        gA = cat([gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)], -1)
        gA = solve_tri(mT(L), gA, upper=True, left=True, unitriangular=True)
    else:
        L1 = L.narrow(-2, 0, k)
        gA = gU.matmul(mT(U)) - mT(L).matmul(gL.tril(-1))
        gA = solve_tri(mT(L1), gA.triu(), upper=True, left=True, unitriangular=True)
        gA = cat([gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
        gA = solve_tri(mT(U), gA, upper=False, left=False)
    return P.matmul(gA) if pivot else gA


def _d_lu_factor_ex(ctx, gLU, gpiv=None, ginfo=None):
    """PyTorch's lu_factor_ex_backward: unpack, then linalg_lu_backward."""
    LU, pivots = ctx.result[0], ctx.result[1]
    P, L, U = lu_unpack_impl(LU, pivots, True, ctx.pivot)
    k = min(LU._shape[-2:])
    return (
        lu_backward(gLU.narrow(-1, 0, k).tril(-1), gLU.narrow(-2, 0, k).triu(), P, L, U, ctx.pivot),
    )


# ---- triangular solve ---------------------------------------------------------------------------


def _meta_solve_triangular(A, B, upper, left, unitriangular):
    name = "linalg.solve_triangular"
    check_float(name, A, B)
    check_same_dtype(name, A, B)
    check_square(name, A)
    check_matrix(name, B, "B")
    n = A._shape[-1]
    rows, cols = B._shape[-2:]
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} "
            f"({n}x{n} and {rows}x{cols})"
        )
    batch = broadcast_shapes(name, A._shape[:-2], B._shape[:-2])
    return (batch + (rows, cols), B._dtype, common_device(name, A, B))


def _d_solve_triangular(ctx, grad):
    """gB solves the transposed system; gA = -gB X^T (or -X^T gB) on A's triangle."""
    A, X, upper, left, unit = ctx.A, ctx.result, ctx.upper, ctx.left, ctx.unitriangular
    gB = op("linalg_solve_triangular")(mT(A), grad, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if ctx.needs_input_grad[0]:
        gA = (gB.matmul(mT(X)) if left else mT(X).matmul(gB)).neg()
        gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
    return (gA, gB)


def _declare_all() -> None:
    declare(
        "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
        "(Tensor U, Tensor S, Tensor Vh)",
        _meta_svd,
        derivative=_d_svd,
        saves=(),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )
    declare(
        "linalg_eigh(Tensor A, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)",
        _meta_eigh,
        derivative=_d_eigh,
        saves=(),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )
    declare(
        "linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)",
        _meta_qr,
        derivative=_d_qr,
        saves=(),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )
    declare(
        "_linalg_cholesky_ex(Tensor A, bool upper=False) -> (Tensor L, Tensor info)",
        _meta_cholesky_ex,
        derivative=_d_cholesky_ex,
        saves=(),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )
    declare(
        "_linalg_lu_factor_ex(Tensor A, bool pivot=True) -> "
        "(Tensor LU, Tensor pivots, Tensor info)",
        _meta_lu_factor_ex,
        derivative=_d_lu_factor_ex,
        saves=(),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )
    declare(
        "linalg_solve_triangular(Tensor A, Tensor B, *, bool upper, bool left=True, "
        "bool unitriangular=False) -> Tensor",
        _meta_solve_triangular,
        derivative=_d_solve_triangular,
        saves=("A",),
        save_result=True,
        method=False,
        function=False,
        **_FACTOR,
    )


_declare_all()
