"""Solvers, inverses and determinants, written with the factorizations
(linalg_factorizations.py): LU (lu_factor, lu, lu_unpack, lu_solve, solve, inv, det, slogdet),
Cholesky (cholesky, cholesky_solve, cholesky_inverse) and the triangular solve
(triangular_solve), in their ``torch.linalg`` and top-level forms.

The ``_ex`` forms report a singular / non-positive-definite matrix through ``info``; the others
raise `LinAlgError` with PyTorch's message (on devices that hold values). Derivatives are
PyTorch's (linalg_solve_backward, linalg_det_backward, slogdet_backward, inverse,
cholesky_solve_backward, cholesky_inverse_backward); the rest differentiate through the
factorizations.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from .declare import declare
from .linalg_common import (
    batch_error,
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    diag_embed,
    eye_like,
    holds_data,
    meta_square,
    mT,
    named,
    op,
)
from .linalg_factorizations import lu_unpack_impl, permutation_of
from .meta_rules import broadcast_shapes, common_device

__all__ = ["is_vector_rhs", "lu_solve_impl"]

_L: dict[str, Any] = dict(family="linalg", method=False, function=False)


def _spec(t, shape=None, dtype=None):
    return (t._shape if shape is None else shape, dtype or t._dtype, t._device)


def _singular(name: str):
    return lambda info: (
        f"The diagonal element {info} is zero, the inversion could not be "
        f"completed because the input matrix is singular."
    )


def _not_pd(info: int) -> str:
    return (
        f"The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {info} is not positive-definite)."
    )


# ---- LU -----------------------------------------------------------------------------------------


def _meta_lu_factor_ex(A, pivot, check_errors):
    return _lu_specs("linalg.lu_factor_ex", A)


def _lu_specs(name, A):
    check_float(name, A)
    check_matrix(name, A)
    *batch, m, n = A._shape
    batch = tuple(batch)
    return [_spec(A), _spec(A, batch + (min(m, n),), dt.int32), _spec(A, batch, dt.int32)]


def _lu_factor_ex(A, pivot, check_errors):
    """(LU, pivots, info) of A = P L U with partial pivoting (L and U packed in one matrix,
    1-based row swaps in pivots); check_errors raises for a singular matrix."""
    LU, pivots, info = op("_linalg_lu_factor_ex")(A, pivot)
    if check_errors:
        batch_error("linalg.lu_factor_ex", info, _u_zero)
    return named("linalg_lu_factor_ex", LU, pivots, info)


def _u_zero(info: int) -> str:
    return (
        f"U[{info},{info}] is zero and using it on lu_solve would result in a division by "
        f"zero. If you still want to perform the factorization, consider calling "
        f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def _meta_lu_factor(A, pivot):
    return _lu_specs("linalg.lu_factor", A)[:2]


def _lu_factor(A, pivot):
    """(LU, pivots) of A = P L U; raises LinAlgError for a singular matrix."""
    LU, pivots, info = op("_linalg_lu_factor_ex")(A, pivot)
    batch_error("linalg.lu_factor", info, _u_zero)
    return named("linalg_lu_factor", LU, pivots)


def _lu_shapes(A):
    *batch, m, n = A._shape
    batch, k = tuple(batch), min(m, n)
    return batch, m, n, k


def _meta_lu(A, pivot):
    check_float("linalg.lu", A)
    check_matrix("linalg.lu", A)
    batch, m, n, k = _lu_shapes(A)
    return [
        _spec(A, batch + (m, m) if pivot else (0,)),
        _spec(A, batch + (m, k)),
        _spec(A, batch + (k, n)),
    ]


def _lu(A, pivot):
    """(P, L, U) with A = P L U, L unit lower triangular, U upper triangular."""
    LU, pivots, _ = op("_linalg_lu_factor_ex")(A, pivot)
    return named("linalg_lu", *lu_unpack_impl(LU, pivots, True, pivot))


def _meta_lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots):
    check_matrix("lu_unpack", LU_data, "LU_data")
    batch, m, n, k = _lu_shapes(LU_data)
    if LU_pivots._dtype is not dt.int32:
        raise RuntimeError(
            f"lu_unpack: LU_pivots is expected to be a contiguous tensor of "
            f"torch.int32 dtype. Note: this function is intended to be used with "
            f"the output produced by torch.linalg.lu_factor, got "
            f"{LU_pivots._dtype.name}"
        )
    if LU_pivots._shape != batch + (k,):
        raise RuntimeError(
            f"lu_unpack: LU_pivots of shape {list(LU_pivots._shape)} does not "
            f"match LU_data of shape {list(LU_data._shape)}: expected "
            f"{list(batch + (k,))}"
        )
    return [
        _spec(LU_data, batch + (m, m) if unpack_pivots else (0,)),
        _spec(LU_data, batch + (m, k) if unpack_data else (0,)),
        _spec(LU_data, batch + (k, n) if unpack_data else (0,)),
    ]


def _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots):
    """(P, L, U) of a packed LU factorization (``torch.lu_unpack``)."""
    return named("lu_unpack", *lu_unpack_impl(LU_data, LU_pivots, unpack_data, unpack_pivots))


def is_vector_rhs(A, B) -> bool:
    """PyTorch's rule: B is a vector (or batch of vectors) when it is 1-D or has A's shape
    without its last dim."""
    return len(B._shape) == 1 or (len(B._shape) == len(A._shape) - 1 and B._shape == A._shape[:-1])


def _rhs_shape(name: str, A, B, left: bool) -> tuple:
    """The shape of X in A X = B (or X A = B), refusing what PyTorch refuses."""
    n = A._shape[-1]
    if is_vector_rhs(A, B) and left:
        if B._shape[-1] != n:
            raise RuntimeError(
                f"{name}: Incompatible shapes of A and B for the equation AX = B "
                f"({n}x{n} and {B._shape[-1]}x1)"
            )
        return broadcast_shapes(name, A._shape[:-2], B._shape[:-1]) + (n,)
    check_matrix(name, B, "B")
    rows, cols = B._shape[-2:]
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} "
            f"({n}x{n} and {rows}x{cols})"
        )
    return broadcast_shapes(name, A._shape[:-2], B._shape[:-2]) + (rows, cols)


def lu_solve_impl(LU, pivots, B, left: bool = True, adjoint: bool = False):
    """X with A X = B (A^T X = B when adjoint; X A = B when not left), A = P L U packed in
    (LU, pivots); B a batch of matrices."""
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return mT(lu_solve_impl(LU, pivots, mT(B), True, not adjoint)).contiguous()
    solve_tri = op("linalg_solve_triangular")
    m = LU._shape[-1]
    perm = permutation_of(pivots, m)
    if not adjoint:  # X = U^-1 L^-1 P^T B, P^T B taking row perm[r] of B to row r
        batch = broadcast_shapes("linalg.lu_solve", perm._shape[:-1], B._shape[:-2])
        rows = perm.expand(batch + (m,)).unsqueeze(-1).expand(batch + (m, B._shape[-1]))
        PtB = B.expand(batch + B._shape[-2:]).gather(-2, rows)
        Y = solve_tri(LU, PtB, upper=False, unitriangular=True)
        return solve_tri(LU, Y, upper=True)
    Y = solve_tri(mT(LU), B, upper=False)  # U^T Y = B
    Z = solve_tri(mT(LU), Y, upper=True, unitriangular=True)  # L^T Z = Y
    P = op("arange")(m, device=LU._device).unsqueeze(-1).eq(perm.unsqueeze(-2)).to(LU._dtype)
    return P.matmul(Z)


def _meta_lu_solve(LU, pivots, B, left, adjoint):
    name = "linalg.lu_solve"
    check_float(name, LU, B)
    check_same_dtype(name, LU, B, "LU and B")
    check_square(name, LU, "LU")
    check_matrix(name, B, "B")
    if pivots._dtype is not dt.int32:
        raise RuntimeError(
            f"{name}: pivots should be a Tensor of scalar type int32, got {pivots._dtype.name}"
        )
    if pivots._shape[-1:] != LU._shape[-1:]:
        raise RuntimeError(
            f"{name}: Number of pivots per batch should be same as the dimension of the matrix"
        )
    return (_rhs_shape(name, LU, B, left), B._dtype, common_device(name, LU, B))


def _lu_solve(LU, pivots, B, left, adjoint):
    """X with A X = B for A = P L U given as (LU, pivots) from lu_factor (A^T when adjoint,
    X A = B when not left)."""
    return lu_solve_impl(LU, pivots, B, left, adjoint)


def _meta_lu_solve_legacy(self, LU_data, LU_pivots):
    return _meta_lu_solve(LU_data, LU_pivots, self, True, False)


def _lu_solve_legacy(self, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU_data, LU_pivots)``: X with A X = b."""
    return lu_solve_impl(LU_data, LU_pivots, self)


# ---- solve, inv ---------------------------------------------------------------------------------


def _meta_solve(name: str):
    def meta(A, B, left, *rest):
        check_float(name, A, B)
        check_same_dtype(name, A, B)
        check_square(name, A)
        shape = _rhs_shape(name, A, B, left)
        out = (shape, A._dtype, common_device(name, A, B))
        if rest:  # the _ex form: info too
            return [out, (A._shape[:-2], dt.int32, A._device)]
        return out

    return meta


def _solve_ex(A, B, left, check_errors):
    """(X, info) with A X = B (X A = B when not left); B a vector, batch of vectors or of
    matrices (PyTorch's rule); batch dims broadcast."""
    LU, pivots, info = op("_linalg_lu_factor_ex")(A, True)
    if check_errors:
        batch_error(
            "linalg.solve_ex",
            info,
            lambda i: "The solver failed because the input matrix is singular.",
        )
    vector = left and is_vector_rhs(A, B)
    X = lu_solve_impl(LU, pivots, B.unsqueeze(-1) if vector else B, left)
    return named("linalg_solve_ex", X.squeeze(-1) if vector else X, info)


def _d_solve_ex(ctx, gX, ginfo=None):
    """PyTorch's linalg_solve_backward: gB solves the transposed system, gA = -gB X^T."""
    A, B, left = ctx.A, ctx.B, ctx.left
    X = ctx.result[0]
    vector = left and is_vector_rhs(A, B)
    if vector:
        gX, X = gX.unsqueeze(-1), X.unsqueeze(-1)
    gB = op("linalg_solve")(mT(A), gX, left=left)
    gA = None
    if ctx.needs_input_grad[0]:
        gA = (gB.matmul(mT(X)) if left else mT(X).matmul(gB)).neg()
    return (gA, gB.squeeze(-1) if vector else gB)


def _solve(A, B, left):
    """X with A X = B (X A = B when not left); raises LinAlgError for a singular A."""
    X, info = op("linalg_solve_ex")(A, B, left=left)
    batch_error(
        "linalg.solve", info, lambda i: "The solver failed because the input matrix is singular."
    )
    return X


def _meta_inv_ex(A, check_errors):
    check_float("linalg.inv_ex", A)
    check_square("linalg.inv_ex", A)
    return [_spec(A), _spec(A, A._shape[:-2], dt.int32)]


def _inv_ex(A, check_errors):
    """(A^-1, info)."""
    LU, pivots, info = op("_linalg_lu_factor_ex")(A, True)
    if check_errors:
        batch_error("linalg.inv_ex", info, _singular("linalg.inv_ex"))
    eye = eye_like(A).expand(A._shape)
    return named("linalg_inv_ex", lu_solve_impl(LU, pivots, eye), info)


def _d_inv_ex(ctx, grad, ginfo=None):
    inv_t = mT(ctx.result[0])
    return (inv_t.matmul(grad).matmul(inv_t).neg(),)


def _inv(A):
    """A^-1; raises LinAlgError for a singular A."""
    inv, info = op("linalg_inv_ex")(A)
    batch_error("linalg.inv", info, _singular("linalg.inv"))
    return inv


def _inverse(self):
    """The inverse of a square matrix (``torch.inverse``); raises LinAlgError when singular."""
    return op("linalg_inv")(self)


# ---- det, slogdet -------------------------------------------------------------------------------


def _det_from_lu(LU, pivots):
    """(sign of the permutation, diagonal of U) of a packed LU factorization."""
    k = pivots._shape[-1]
    swaps = pivots.to(dt.int64).ne(op("arange")(1, k + 1, device=pivots._device)).sum(-1)
    sign = 1 - 2 * (swaps % 2)
    return sign.to(LU._dtype), LU.diagonal(0, -2, -1)


def _meta_det(name: str):
    def meta(A):
        check_float(name, A)
        check_square(name, A)
        return _spec(A, A._shape[:-2])

    return meta


def _det(A):
    """The determinant: the product of U's diagonal, signed by the row swaps of A = P L U."""
    LU, pivots, _ = op("_linalg_lu_factor_ex")(A.detach(), True)
    sign, diag = _det_from_lu(LU, pivots)
    return sign * diag.prod(-1)


def _d_det(ctx, grad):
    """PyTorch's linalg_det_backward: (grad det) A^-T for invertible A, through the SVD
    (det A = det U det Vh prod S) where A is singular."""
    A, det = ctx.A, ctx.result
    if A.numel() == 0:
        return (A.new_zeros(A._shape),)
    g = (grad * det).unsqueeze(-1).unsqueeze(-1) * eye_like(A)

    def invertible(M):
        return op("linalg_solve")(mT(M), g)

    def singular(M):
        U, S, Vh = op("linalg_svd")(M, False)
        alpha = op("linalg_det")(U) * op("linalg_det")(Vh) * grad
        # prod(S) with one factor left out, for each factor (no division by a zero S)
        n = S._shape[-1]
        mask = eye_like(S).to(dt.bool)
        others = op("where")(mask, 1.0, S.unsqueeze(-2).expand(S._shape[:-1] + (n, n)))
        D = alpha.unsqueeze(-1) * others.prod(-1)
        return (U * D.unsqueeze(-2)).matmul(Vh)

    if not holds_data(A):
        return (invertible(A),)
    eps = 2.220446049250313e-16 if A._dtype is dt.float64 else 1.1920928955078125e-07
    small = det.abs().lt(100 * eps)
    if not bool(small.any().item()):
        return (invertible(A),)
    if bool(small.all().item()):
        return (singular(A),)
    # a batch of both kinds: each path gets a harmless stand-in for the other's matrices
    mask = small.unsqueeze(-1).unsqueeze(-1)
    eye = eye_like(A)
    distinct = diag_embed(op("arange")(1, A._shape[-1] + 1, dtype=A._dtype, device=A._device))
    where = op("where")
    return (where(mask, singular(where(mask, A, distinct)), invertible(where(mask, eye, A))),)


def _det_top(self):
    """The determinant of a square matrix (``torch.det``)."""
    return op("linalg_det")(self)


def _meta_slogdet(name: str):
    def meta(A):
        check_float(name, A)
        check_square(name, A)
        return [_spec(A, A._shape[:-2]), _spec(A, A._shape[:-2])]

    return meta


def _slogdet(A):
    """(sign, log|det|) of A."""
    LU, pivots, _ = op("_linalg_lu_factor_ex")(A.detach(), True)
    sign, diag = _det_from_lu(LU, pivots)
    sign = sign * diag.sign().prod(-1)
    return named("linalg_slogdet", sign, diag.abs().log().sum(-1))


def _d_slogdet(ctx, gsign, glogabsdet):
    """PyTorch's slogdet_backward (real): glogabsdet A^-T."""
    A = ctx.A
    return (op("linalg_solve")(mT(A), diag_embed(glogabsdet.unsqueeze(-1).expand(A._shape[:-1]))),)


def _slogdet_top(self):
    """(sign, logabsdet) of a square matrix (``torch.slogdet``)."""
    sign, logabsdet = op("linalg_slogdet")(self)
    return named("slogdet", sign, logabsdet)


def _logdet(self):
    """log(det(self)): NaN for a negative determinant, -inf for a zero one."""
    sign, logabsdet = op("linalg_slogdet")(self)
    return op("where")(sign.lt(0), float("nan"), logabsdet)


# ---- cholesky -----------------------------------------------------------------------------------


def _meta_cholesky_ex(A, upper, check_errors):
    check_float("linalg.cholesky_ex", A)
    check_square("linalg.cholesky_ex", A)
    return [_spec(A), _spec(A, A._shape[:-2], dt.int32)]


def _cholesky_ex(A, upper, check_errors):
    """(L, info): A = L L^T from A's lower triangle (A = U^T U from the upper one when upper);
    info > 0 names the first leading minor that is not positive-definite."""
    L, info = op("_linalg_cholesky_ex")(A, upper)
    if check_errors:
        batch_error("linalg.cholesky_ex", info, _not_pd)
    return named("linalg_cholesky_ex", L, info)


def _meta_cholesky(name: str):
    def meta(A, upper):
        check_float(name, A)
        check_square(name, A)
        return _spec(A)

    return meta


def _linalg_cholesky(A, upper):
    """The Cholesky factor of a symmetric positive-definite matrix (lower, or upper when
    upper=True); raises LinAlgError otherwise."""
    L, info = op("_linalg_cholesky_ex")(A, upper)
    batch_error("linalg.cholesky", info, _not_pd)
    return L


def _cholesky(self, upper):
    """The Cholesky factor of a symmetric positive-definite matrix (``torch.cholesky``)."""
    L, info = op("_linalg_cholesky_ex")(self, upper)
    batch_error("cholesky", info, _not_pd)
    return L


def _triangular_rhs(name: str, b, A, names: str) -> tuple:
    """The broadcast batch of a solve with triangular-factor `A` and right-hand side `b`
    (``cholesky_solve``, ``triangular_solve``), refusing what PyTorch refuses."""
    check_float(name, b, A)
    check_same_dtype(name, b, A, names)
    check_square(name, A, names.split(" and ")[1])
    check_matrix(name, b, "b")
    if b._shape[-2] != A._shape[-1]:
        raise RuntimeError(
            f"{name}: Incompatible matrix sizes for {name}: each A matrix is "
            f"{A._shape[-1]} by {A._shape[-1]} but each b matrix is "
            f"{b._shape[-2]} by {b._shape[-1]}"
        )
    return broadcast_shapes(name, b._shape[:-2], A._shape[:-2])


def _meta_cholesky_solve(self, input2, upper):
    batch = _triangular_rhs("cholesky_solve", self, input2, "b and u")
    return (batch + self._shape[-2:], self._dtype, common_device("cholesky_solve", self, input2))


def _cholesky_solve(self, input2, upper):
    """X with A X = self for A = L L^T (or U^T U when upper) given its factor input2."""
    solve_tri = op("linalg_solve_triangular")
    L = mT(input2) if upper else input2
    return solve_tri(mT(L), solve_tri(L, self, upper=False), upper=True)


def _d_cholesky_solve(ctx, grad):
    """PyTorch's cholesky_solve_backward."""
    gB = op("cholesky_solve")(grad, ctx.input2, ctx.upper)
    gL = None
    if ctx.needs_input_grad[1]:
        common = gB.matmul(mT(ctx.result))
        common = common + mT(common)
        gL = (ctx.input2.matmul(common) if ctx.upper else common.matmul(ctx.input2)).neg()
    return (gB, gL)


def _meta_cholesky_inverse(self, upper):
    check_float("cholesky_inverse", self)
    check_square("cholesky_inverse", self, "input")
    return _spec(self)


def _cholesky_inverse(self, upper):
    """A^-1 for A = L L^T (U^T U when upper) given its factor."""
    eye = eye_like(self).expand(self._shape)
    return _cholesky_solve(eye, self, upper)


def _d_cholesky_inverse(ctx, grad):
    """PyTorch's cholesky_inverse_backward."""
    inv = ctx.result
    common = inv.matmul((grad + mT(grad)).matmul(inv))
    return ((ctx.self.matmul(common) if ctx.upper else common.matmul(ctx.self)).neg(),)


# ---- triangular_solve (legacy) ------------------------------------------------------------------


def _meta_triangular_solve(self, A, upper, transpose, unitriangular):
    batch = _triangular_rhs("triangular_solve", self, A, "b and A")
    return [
        (batch + self._shape[-2:], self._dtype, common_device("triangular_solve", self, A)),
        (batch + A._shape[-2:], A._dtype, A._device),
    ]


def _triangular_solve(self, A, upper, transpose, unitriangular):
    """(X, A's copy) with A X = self (A^T X = self when transpose), A triangular."""
    M = mT(A) if transpose else A
    X = op("linalg_solve_triangular")(
        M, self, upper=upper != transpose, unitriangular=unitriangular
    )
    batch = X._shape[:-2]
    return named("triangular_solve", X, A.expand(batch + A._shape[-2:]).clone())


def _declare_all() -> None:
    declare(
        "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
        "(Tensor LU, Tensor pivots, Tensor info)",
        _meta_lu_factor_ex,
        impl=_lu_factor_ex,
        **_L,
    )
    declare(
        "linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
        _meta_lu_factor,
        impl=_lu_factor,
        **_L,
    )
    declare(
        "linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
        _meta_lu,
        impl=_lu,
        **_L,
    )
    declare(
        "lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
        "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)",
        _meta_lu_unpack,
        impl=_lu_unpack,
        family="linalg",
        method=False,
    )
    declare(
        "linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
        "bool adjoint=False) -> Tensor",
        _meta_lu_solve,
        impl=_lu_solve,
        **_L,
    )
    declare(
        "lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor",
        _meta_lu_solve_legacy,
        impl=_lu_solve_legacy,
        family="linalg",
    )
    declare(
        "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
        "(Tensor result, Tensor info)",
        _meta_solve("linalg.solve_ex"),
        impl=_solve_ex,
        derivative=_d_solve_ex,
        saves=("A", "B"),
        save_result=True,
        **_L,
    )
    declare(
        "linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor",
        _meta_solve("linalg.solve"),
        impl=_solve,
        **_L,
    )
    declare(
        "linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
        _meta_inv_ex,
        impl=_inv_ex,
        derivative=_d_inv_ex,
        saves=(),
        save_result=True,
        **_L,
    )
    declare("linalg_inv(Tensor A) -> Tensor", meta_square("linalg.inv"), impl=_inv, **_L)
    declare(
        "inverse(Tensor self) -> Tensor", meta_square("inverse"), impl=_inverse, family="linalg"
    )
    declare(
        "linalg_det(Tensor A) -> Tensor",
        _meta_det("linalg.det"),
        impl=_det,
        derivative=_d_det,
        saves=("A",),
        save_result=True,
        **_L,
    )
    declare("det(Tensor self) -> Tensor", _meta_det("det"), impl=_det_top, family="linalg")
    declare(
        "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
        _meta_slogdet("linalg.slogdet"),
        impl=_slogdet,
        derivative=_d_slogdet,
        saves=("A",),
        **_L,
    )
    declare(
        "slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)",
        _meta_slogdet("slogdet"),
        impl=_slogdet_top,
        family="linalg",
    )
    declare("logdet(Tensor self) -> Tensor", _meta_det("logdet"), impl=_logdet, family="linalg")
    declare(
        "linalg_cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False) -> "
        "(Tensor L, Tensor info)",
        _meta_cholesky_ex,
        impl=_cholesky_ex,
        **_L,
    )
    declare(
        "linalg_cholesky(Tensor A, *, bool upper=False) -> Tensor",
        _meta_cholesky("linalg.cholesky"),
        impl=_linalg_cholesky,
        **_L,
    )
    declare(
        "cholesky(Tensor self, bool upper=False) -> Tensor",
        _meta_cholesky("cholesky"),
        impl=_cholesky,
        family="linalg",
    )
    declare(
        "cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
        _meta_cholesky_solve,
        impl=_cholesky_solve,
        derivative=_d_cholesky_solve,
        saves=("input2",),
        save_result=True,
        family="linalg",
    )
    declare(
        "cholesky_inverse(Tensor self, bool upper=False) -> Tensor",
        _meta_cholesky_inverse,
        impl=_cholesky_inverse,
        derivative=_d_cholesky_inverse,
        saves=("self",),
        save_result=True,
        family="linalg",
    )
    declare(
        "triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, "
        "bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)",
        _meta_triangular_solve,
        impl=_triangular_solve,
        family="linalg",
    )


_declare_all()
