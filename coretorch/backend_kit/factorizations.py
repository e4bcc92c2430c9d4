"""Matrix factorizations on the array API: the linear-algebra primitives (svd, eigh, qr,
cholesky, LU, triangular solve) every other ``linalg`` op is written with.

Leading dims are batch dims. numpy and CuPy batch svd, eigh and cholesky themselves; where the
library call takes one matrix (scipy's or cupyx's lu_factor and triangular solve, CuPy's qr)
the kernel loops over the batch. Kernels never raise for the values: a singular or
non-positive-definite input is reported through the ``info`` outputs, as LAPACK does.
"""

from __future__ import annotations

import warnings

import numpy as np

from .array_kit import kit_of

__all__ = ["KERNELS"]


def _is_numpy(xp) -> bool:
    return xp.__name__ == "numpy"


def _batches(shape: tuple):
    """Index tuples of every matrix of a stack of `shape` (its last two dims are the matrix)."""
    return np.ndindex(*shape[:-2])


def column_signs(xp, V):
    """+-1 per column of (a stack of) V: the sign of the column's largest-magnitude entry
    (the first of equal ones). Singular / eigen vectors are defined up to sign; scaling each
    column by this makes that entry positive, so every device and library gives the same
    vectors (LAPACK builds differ)."""
    idx = xp.argmax(xp.abs(V), axis=-2)[..., None, :]
    s = xp.sign(xp.take_along_axis(V, idx, axis=-2))
    return xp.where(s == 0, 1, s).astype(V.dtype)


def linalg_svd(out, A, full_matrices, driver):
    """out = (U, S, Vh) with A = U diag(S) Vh"""
    U, S, Vh = out
    k = kit_of(S)
    xp, a = k.xp, k.arr(A)
    if a.size == 0:  # LAPACK refuses empty matrices; a full factorization is then identities
        if full_matrices:
            k.write(U, xp.eye(a.shape[-2], dtype=a.dtype))
            k.write(Vh, xp.eye(a.shape[-1], dtype=a.dtype))
        return
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    sign = column_signs(xp, u)  # (..., 1, m or k)
    u = u * sign
    kk = s.shape[-1]
    vh[..., :kk, :] *= xp.swapaxes(sign[..., :kk], -1, -2)
    if vh.shape[-2] > kk:  # a full factorization's extra rows are singular vectors of their own
        vh[..., kk:, :] *= xp.swapaxes(
            column_signs(xp, xp.swapaxes(vh[..., kk:, :], -1, -2)), -1, -2
        )
    k.write(U, u)
    k.write(S, s)
    k.write(Vh, vh)


def linalg_eigh(out, A, UPLO):
    """out = (eigenvalues ascending, orthonormal eigenvectors) of the symmetric matrix whose
    UPLO triangle A holds"""
    L, V = out
    k = kit_of(L)
    a = k.arr(A)
    if a.size == 0:
        return
    w, v = k.xp.linalg.eigh(a, UPLO=UPLO)
    k.write(L, w)
    k.write(V, v * column_signs(k.xp, v))


def linalg_qr(out, A, mode):
    """out = (Q, R) with A = QR (Q empty for mode='r')"""
    Q, R = out
    k = kit_of(R)
    xp, a = k.xp, k.arr(A)
    if a.size == 0:
        if mode == "complete":
            k.write(Q, xp.eye(a.shape[-2], dtype=a.dtype))
        return
    if _is_numpy(xp) or a.ndim == 2:
        res = xp.linalg.qr(a, mode=mode)
        if mode == "r":
            k.write(R, res)
        else:
            k.write(Q, res[0])
            k.write(R, res[1])
        return
    q_arr, r_arr = k.as_array(Q), k.as_array(R)
    for idx in _batches(a.shape):
        res = xp.linalg.qr(a[idx], mode=mode)
        if mode == "r":
            r_arr[idx] = res
        else:
            q_arr[idx], r_arr[idx] = res


def _is_linalg_error(e: BaseException) -> bool:
    return type(e).__name__ == "LinAlgError"


def _cholesky_or_none(xp, a):
    """The lower factor of one matrix, or None where it is not positive-definite."""
    try:
        low = xp.linalg.cholesky(a)
    except Exception as e:  # noqa: BLE001 - numpy's and CuPy's LinAlgError
        if _is_linalg_error(e):
            return None
        raise
    return None if bool(xp.isnan(low).any()) else low


def _failing_order(xp, a) -> int:
    """LAPACK's info: the order of the first leading minor that is not positive-definite."""
    for j in range(1, a.shape[-1] + 1):
        if _cholesky_or_none(xp, a[:j, :j]) is None:
            return j
    return a.shape[-1]


def _linalg_cholesky_ex(out, A, upper):
    """out = (L, info): A = L L^T from A's lower triangle (upper: A = U^T U from its upper
    one); info = 0, or the order of the first leading minor that is not positive-definite"""
    L, info = out
    k = kit_of(L)
    xp, a = k.xp, k.arr(A)
    if upper:
        a = xp.swapaxes(a, -1, -2)
    k.write(info, 0)
    if a.size == 0:
        return
    low = _cholesky_or_none(xp, a)
    if low is None:  # some matrix of the batch failed: factor them one by one
        low = xp.zeros_like(a)
        info_arr = k.as_array(info)
        for idx in _batches(a.shape):
            one = _cholesky_or_none(xp, a[idx])
            if one is None:
                info_arr[idx] = _failing_order(xp, a[idx])
            else:
                low[idx] = one
    low = xp.tril(low)
    k.write(L, xp.swapaxes(low, -1, -2) if upper else low)


def _lu_no_pivoting(xp, a):
    """Doolittle's LU of a stack of matrices, batched over the leading dims (no row swaps)."""
    lu = a.copy()
    for j in range(min(a.shape[-2:])):
        lu[..., j + 1 :, j] /= lu[..., j, j][..., None]
        lu[..., j + 1 :, j + 1 :] -= lu[..., j + 1 :, j, None] * lu[..., j, None, j + 1 :]
    return lu


def _lu_factor(k, a):
    """(LU, 0-based pivots) of a stack of matrices: one call where the library batches (scipy
    >= 1.15), else one per matrix."""
    lu_factor = k.scipy_linalg.lu_factor
    with warnings.catch_warnings():  # a singular matrix is reported through info
        warnings.simplefilter("ignore")
        if a.ndim == 2:
            return lu_factor(a, check_finite=False)
        if _is_numpy(k.xp):
            try:
                return lu_factor(a, check_finite=False)
            except ValueError:  # an older scipy: two dims only
                pass
        lu, p = k.xp.empty_like(a), k.xp.empty(a.shape[:-2] + (min(a.shape[-2:]),), "int32")
        for idx in _batches(a.shape):
            lu[idx], p[idx] = lu_factor(a[idx], check_finite=False)
        return lu, p


def _linalg_lu_factor_ex(out, A, pivot):
    """out = (LU, pivots, info): P A = L U packed in one matrix (L's unit diagonal implied),
    1-based row swaps in `pivots`, info = first zero diagonal entry of U (1-based) or 0"""
    LU, piv, info = out
    k = kit_of(LU)
    xp, a = k.xp, k.arr(A)
    kk = min(a.shape[-2:])
    if a.size == 0:
        k.write(info, 0)
        return
    if pivot:
        lu, p = _lu_factor(k, a)
        k.write(LU, lu)
        k.write(piv, p + 1)
    else:
        lu = _lu_no_pivoting(xp, a)
        k.write(LU, lu)
        k.write(piv, xp.arange(1, kk + 1))
    zero = xp.diagonal(lu, axis1=-2, axis2=-1) == 0
    k.write(info, xp.where(zero.any(-1), xp.argmax(zero, -1) + 1, 0))


def _trsm(k, a, b, lower: bool, unit: bool):
    """solve(x, y) -> X with x X = y for one triangular matrix x: BLAS trsm (looked up once
    per kernel call), which unlike LAPACK's trtrs lets a zero on the diagonal give inf/nan as
    PyTorch does instead of raising; cupyx's solve_triangular on CuPy."""
    if _is_numpy(k.xp):
        from scipy.linalg import get_blas_funcs

        trsm = get_blas_funcs("trsm", (a, b))
        return lambda x, y: trsm(1.0, x, y, side=0, lower=int(lower), trans_a=0, diag=int(unit))
    solve = k.scipy_linalg.solve_triangular
    return lambda x, y: solve(x, y, lower=lower, unit_diagonal=unit)


def linalg_solve_triangular(out, A, B, upper, left, unitriangular):
    """out = X with A X = B (left) or X A = B, A triangular; batch dims broadcast"""
    k = kit_of(out)
    xp, a, b = k.xp, k.arr(A), k.arr(B)
    o = k.as_array(out)
    if o.size == 0:
        return
    batch = o.shape[:-2]
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    lower = not upper
    if not left:  # X A = B  <=>  A^T X^T = B^T, and A^T is triangular the other way
        a, b, lower = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), upper
    solve = _trsm(k, a, b, lower, unitriangular)
    for idx in _batches(o.shape):
        x = solve(a[idx], b[idx])
        o[idx] = x if left else x.T


KERNELS = {
    "linalg_svd": linalg_svd,
    "linalg_eigh": linalg_eigh,
    "linalg_qr": linalg_qr,
    "_linalg_cholesky_ex": _linalg_cholesky_ex,
    "_linalg_lu_factor_ex": _linalg_lu_factor_ex,
    "linalg_solve_triangular": linalg_solve_triangular,
}
