"""Matrix functions and small linear-algebra composites: matrix_power, matrix_exp (scaling and
squaring with the [13/13] Pade approximant; PyTorch's backward through the exponential of a
block matrix), cross, multi_dot / chain_matmul (the cheapest multiplication order), vander,
vecdot, linalg.diagonal, householder_product, tensorinv and tensorsolve."""

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
    eye_like,
    holds_data,
    meta_square,
    mT,
    named,
    op,
)
from .meta_rules import broadcast_shapes, common_device, promote

__all__ = ["chain_order_product"]

_L: dict[str, Any] = dict(family="linalg", method=False, function=False)


def _spec(t, shape=None, dtype=None):
    return (t._shape if shape is None else shape, dtype or t._dtype, t._device)


# ---- matrix_power -------------------------------------------------------------------------------


def _meta_matrix_power(name: str):
    def meta(A, n):
        check_square(name, A)
        if n < 0:
            check_float(name, A)
        return _spec(A)

    return meta


def _matrix_power_impl(A, n: int):
    """A^n by repeated squaring (A^-1 first for negative n; the identity for n = 0)."""
    if n == 0:  # the identity, connected to A (zero gradient) as PyTorch's is
        return A.clone().copy_(eye_like(A).expand(A._shape))
    if n < 0:
        A, n = op("linalg_inv")(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


def _linalg_matrix_power(A, n):
    """A raised to the integer power n (negative n: a power of the inverse)."""
    return _matrix_power_impl(A, n)


def _matrix_power(self, n):
    """The n-th power of a square matrix (``torch.matrix_power``)."""
    return _matrix_power_impl(self, n)


# ---- matrix_exp ---------------------------------------------------------------------------------

# [13/13] Pade coefficients (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"); theta_13 bounds the 1-norm for which degree 13 is accurate
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def _squarings(A) -> int:
    """How often to halve A so its 1-norm is at most theta_13 (the largest over the batch)."""
    if not holds_data(A) or A.numel() == 0:
        return 0
    norm = float(A.abs().sum(-2).amax().item())
    return max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 else 0


def matrix_exp_impl(A):
    """exp(A) by scaling and squaring with the [13/13] Pade approximant."""
    if A.numel() == 0:
        return A.clone()
    s = _squarings(A)
    if s:
        A = A / float(2**s)
    b = _PADE13
    eye = eye_like(A)
    A2 = A.matmul(A)
    A4 = A2.matmul(A2)
    A6 = A4.matmul(A2)
    U = A.matmul(
        A6.matmul(A6 * b[13] + A4 * b[11] + A2 * b[9])
        + A6 * b[7]
        + A4 * b[5]
        + A2 * b[3]
        + eye * b[1]
    )
    V = (
        A6.matmul(A6 * b[12] + A4 * b[10] + A2 * b[8])
        + A6 * b[6]
        + A4 * b[4]
        + A2 * b[2]
        + eye * b[0]
    )
    R = op("linalg_solve")(V - U, V + U)
    for _ in range(s):
        R = R.matmul(R)
    return R


def matrix_exp_backward(A, grad):
    """PyTorch's linalg_matrix_exp_differential: the top-right block of exp([[A^T, G], [0,
    A^T]])."""
    n = A._shape[-1]
    At = mT(A)
    cat = op("cat")
    top = cat([At, grad], -1)
    bottom = cat([A.new_zeros(A._shape), At], -1)
    big = op("matrix_exp")(cat([top, bottom], -2))
    return big.narrow(-2, 0, n).narrow(-1, n, n)


def _linalg_matrix_exp(A):
    """The matrix exponential exp(A) = sum A^k / k!."""
    return matrix_exp_impl(A)


def _matrix_exp(self):
    """The matrix exponential of a square matrix (``torch.matrix_exp``)."""
    return matrix_exp_impl(self)


def _d_linalg_matrix_exp(ctx, grad):
    return (matrix_exp_backward(ctx.A, grad),)


def _d_matrix_exp(ctx, grad):
    return (matrix_exp_backward(ctx.self, grad),)


# ---- cross --------------------------------------------------------------------------------------


def _cross_shape(name: str, a, b, dim) -> tuple:
    if len(a._shape) != len(b._shape):
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(name, a._shape, b._shape)
    nd = len(shape)
    if not -nd <= dim < max(nd, 1) or not nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    d = dim % nd
    if a._shape[d] != 3 or b._shape[d] != 3:
        raise RuntimeError(
            f"{name}: inputs dimension {dim} must have length 3. Got "
            f"{a._shape[d]} and {b._shape[d]}"
        )
    return shape


def _meta_linalg_cross(self, other, dim):
    shape = _cross_shape("linalg.cross", self, other, dim)
    return (shape, promote(self, other), common_device("linalg.cross", self, other))


def cross_impl(a, b, dim: int):
    """a x b along `dim` (size 3), broadcasting the other dims."""
    shape = broadcast_shapes("cross", a._shape, b._shape)
    d = promote(a, b)
    a, b = a.to(d).expand(shape), b.to(d).expand(shape)

    def c(t, i):
        return t.narrow(dim, i, 1)

    return op("cat")(
        [
            c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1),
            c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
            c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0),
        ],
        dim,
    )


def _linalg_cross(self, other, dim):
    """The cross product of 3-vectors along `dim`."""
    return cross_impl(self, other, dim)


def _cross_dim(self, other, dim) -> int:
    """torch.cross's dim: given, or the first dim of size 3 (PyTorch's deprecated default)."""
    if dim is not None:
        return dim
    shape = broadcast_shapes("cross", self._shape, other._shape)
    for i, s in enumerate(shape):
        if s == 3:
            return i
    raise RuntimeError(f"cross: no dimension of size 3 in input (shape {list(shape)})")


def _meta_cross(self, other, dim):
    if len(self._shape) != len(other._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _cross_dim(self, other, dim)
    shape = _cross_shape("linalg.cross", self, other, d)
    return (shape, promote(self, other), common_device("cross", self, other))


def _cross(self, other, dim):
    """The cross product of 3-vectors along `dim` (``torch.cross``; dim=None: the first dim of
    size 3)."""
    return cross_impl(self, other, _cross_dim(self, other, dim))


# ---- multi_dot, chain_matmul --------------------------------------------------------------------


def chain_order_product(mats: list):
    """The product of 2-D matrices in the order with the fewest multiplications (the classic
    O(n^3) dynamic program over split points)."""
    n = len(mats)
    dims = [mats[0]._shape[0]] + [m._shape[1] for m in mats]
    cost: list[list[float]] = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))

    return product(0, n - 1)


def _meta_multi_dot(tensors):
    name = "multi_dot"
    if len(tensors) < 2:
        raise RuntimeError(f"{name}(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    ends = (0, len(tensors) - 1)
    for i, x in enumerate(tensors):
        nd = len(x._shape)
        if nd != 2 and not (i in ends and nd == 1):
            kind = "1D or 2D" if i in ends else "2D"
            raise RuntimeError(f"{name}(): tensor {i} must be {kind} but got {nd}D")
        if x._dtype is not first._dtype:
            raise RuntimeError(
                f"{name}(): all tensors must have be the same dtype but tensor 0 "
                f"is {first._dtype.name} and tensor {i} {x._dtype.name}"
            )
    mats = _as_matrices(tensors)
    for i in range(1, len(mats)):
        if mats[i - 1][1] != mats[i][0]:
            raise RuntimeError(
                f"{name}(): tensors {i - 1} and {i} with shapes "
                f"{list(tensors[i - 1]._shape)} and {list(tensors[i]._shape)} "
                f"cannot be multiplied"
            )
    shape = ((mats[0][0],) if len(first._shape) == 2 else ()) + (
        (mats[-1][1],) if len(last._shape) == 2 else ()
    )
    return (shape, first._dtype, common_device(name, *tensors))


def _as_matrices(tensors) -> list:
    shapes = [t._shape for t in tensors]
    if len(shapes[0]) == 1:
        shapes[0] = (1,) + shapes[0]
    if len(shapes[-1]) == 1:
        shapes[-1] = shapes[-1] + (1,)
    return shapes


def _multi_dot(tensors):
    """The product of the tensors (the first may be a row vector, the last a column vector),
    multiplied in the cheapest order."""
    mats = list(tensors)
    vec_first, vec_last = len(mats[0]._shape) == 1, len(mats[-1]._shape) == 1
    if vec_first:
        mats[0] = mats[0].unsqueeze(0)
    if vec_last:
        mats[-1] = mats[-1].unsqueeze(1)
    out = chain_order_product(mats)
    if vec_first:
        out = out.squeeze(0)
    if vec_last:
        out = out.squeeze(-1)
    return out


def _meta_chain_matmul(matrices):
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if len(t._shape) != 2:
            raise RuntimeError(
                f"chain_matmul(): Tensor dimension is {len(t._shape)}, expected 2 instead."
            )
    if len(matrices) == 1:
        return _spec(matrices[0])
    return _meta_multi_dot(matrices)


def _chain_matmul(matrices):
    """The product of 2-D matrices in the cheapest order (``torch.chain_matmul``)."""
    if len(matrices) == 1:
        return matrices[0].clone()
    return chain_order_product(list(matrices))


# ---- vander, vecdot, diagonal -------------------------------------------------------------------


def _meta_vander(x, N):
    shape = x._shape or (1,)  # a 0-d x is one point, as in PyTorch
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    d = x._dtype
    if d is dt.bool or (not d.is_floating_point and d is not dt.int64):
        d = dt.int64
    return (shape + (n,), d, x._device)


def _vander(x, N):
    """Columns x^0, x^1, ..., x^(N-1) (N defaults to x's last dim)."""
    spec = _meta_vander(x, N)
    n = spec[0][-1]
    x = x.to(spec[1]).reshape(spec[0][:-1])
    ones = x.new_ones(x._shape + (1,))
    powers = x.unsqueeze(-1).expand(x._shape + (n - 1,))
    return op("cat")([ones, powers], -1).cumprod(-1)


def _meta_vecdot(x, y, dim):
    shape = broadcast_shapes("linalg.vecdot", x._shape, y._shape)
    if not shape:
        raise IndexError(
            "linalg.vecdot: Dimension out of range (expected to be in range of "
            "[-1, 0], but got " + str(dim) + ")"
        )
    nd = len(shape)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    if x._dtype is not y._dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found "
            f"x of type {x._dtype.name} and y of type {y._dtype.name} instead"
        )
    d = dim % nd
    return (shape[:d] + shape[d + 1 :], x._dtype, common_device("linalg.vecdot", x, y))


def _vecdot(x, y, dim):
    """The dot product of x and y along `dim` (other dims broadcast)."""
    return (x * y).sum(dim)


def _meta_linalg_diagonal(A, offset, dim1, dim2):
    from .declare import REGISTRY

    return REGISTRY["diagonal"].meta(A, offset, dim1, dim2)


def _linalg_diagonal(A, offset, dim1, dim2):
    """The diagonal of each matrix over (dim1, dim2) (a view; defaults to the last two dims)."""
    return A.diagonal(offset, dim1, dim2)


# ---- householder_product ------------------------------------------------------------------------


def _meta_householder(A, tau, name="linalg.householder_product"):
    check_float(name, A, tau)
    check_same_dtype(name, A, tau, "A and tau")
    check_matrix(name, A)
    m, n = A._shape[-2:]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if len(tau._shape) != len(A._shape) - 1 or tau._shape[:-1] != A._shape[:-2]:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input and the "
            f"same batch dimensions, but got tau of shape {list(tau._shape)} and "
            f"input of shape {list(A._shape)}"
        )
    if tau._shape[-1] > n:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    return (A._shape, A._dtype, common_device(name, A, tau))


def _householder_product(A, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i the i-th column
    of A below the diagonal (and a 1 on it)."""
    m, n = A._shape[-2:]
    V = A.tril(-1) + op("eye")(m, n, dtype=A._dtype, device=A._device)
    Q = eye_like(A, m).expand(A._shape[:-2] + (m, m))
    for i in range(tau._shape[-1]):
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q = Q - (Q.matmul(v) * t).matmul(mT(v))
    return Q.narrow(-1, 0, n).contiguous() if n < m else Q.contiguous()


def _meta_orgqr(self, input2):
    return _meta_householder(self, input2, "orgqr")


def _orgqr(self, input2):
    """``torch.orgqr``: linalg.householder_product(self, input2)."""
    return _householder_product(self, input2)


# ---- geqrf, ormqr -------------------------------------------------------------------------------


def _meta_geqrf(self):
    check_float("geqrf", self)
    check_matrix("geqrf", self, "input")
    *batch, m, n = self._shape
    return [
        (self._shape, self._dtype, self._device),
        (tuple(batch) + (min(m, n),), self._dtype, self._device),
    ]


def _householder_step(R, j: int):
    """LAPACK's dlarfg + dlarf on column j of R: (R with column j reduced, tau_j)."""
    where, cat = op("where"), op("cat")
    m = R._shape[-2]
    col = R.narrow(-1, j, 1).narrow(-2, j, m - j)  # (..., m - j, 1)
    alpha = col.narrow(-2, 0, 1)  # (..., 1, 1)
    rest = col.narrow(-2, 1, m - j - 1)
    xnorm = (rest * rest).sum(-2, keepdim=True).sqrt()
    norm = (alpha * alpha + xnorm * xnorm).sqrt()
    identity = xnorm.eq(0)  # H = I, tau = 0
    beta = where(alpha.ge(0), norm.neg(), norm)
    tau = where(identity, 0.0, (beta - alpha) / beta)
    v = where(identity, 0.0, rest / where(identity, 1.0, alpha - beta))
    w = cat([alpha.new_ones(alpha._shape), v], -2)  # (..., m - j, 1)
    trailing = R.narrow(-2, j, m - j).narrow(-1, j + 1, R._shape[-1] - j - 1)
    trailing = trailing - (w * tau).matmul(mT(w).matmul(trailing))
    bottom = cat(
        [
            R.narrow(-2, j, m - j).narrow(-1, 0, j),
            cat([where(identity, alpha, beta), v], -2),
            trailing,
        ],
        -1,
    )
    return cat([R.narrow(-2, 0, j), bottom], -2), tau.squeeze(-1)


def _geqrf(self):
    """(a, tau): LAPACK's compact Householder QR (``torch.geqrf``): R on and above the
    diagonal of a, the reflectors' vectors below it, their scales in tau."""
    R, taus = self, []
    for j in range(min(self._shape[-2:])):
        R, tau = _householder_step(R, j)
        taus.append(tau)
    tau = op("cat")(taus, -1) if taus else self.new_zeros(self._shape[:-2] + (0,))
    return named("geqrf", R.contiguous(), tau)


def _meta_ormqr(self, input2, input3, left, transpose):
    name = "ormqr"
    check_float(name, self, input2, input3)
    check_matrix(name, self, "input")
    check_matrix(name, input3, "other")
    if len(input3._shape) != len(self._shape):
        raise RuntimeError(
            f"torch.ormqr: Expected other to have the same number of dimensions "
            f"as input, but got other.ndim equal to {len(input3._shape)} and "
            f"input.ndim is equal to {len(self._shape)}"
        )
    rows = input3._shape[-2] if left else input3._shape[-1]
    if self._shape[-2] != rows:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(
            f"{name}: input.shape[-2] must be equal to {which} when left is "
            f"{left}, got {self._shape[-2]} and {rows}"
        )
    if input2._shape[-1] > min(self._shape[-2:]) or input2._shape[:-1] != self._shape[:-2]:
        raise RuntimeError(
            f"{name}: tau must have shape input.shape[:-2] + (k,) with k <= "
            f"min(input.shape[-2:]), got tau of shape {list(input2._shape)} "
            f"and input of shape {list(self._shape)}"
        )
    batch = broadcast_shapes(name, self._shape[:-2], input3._shape[:-2])
    return (batch + input3._shape[-2:], input3._dtype, common_device(name, self, input3))


def _ormqr(self, input2, input3, left, transpose):
    """op(Q) @ other (left) or other @ op(Q), Q = H_1 ... H_k from geqrf's (input, tau), op
    transposing when `transpose`; the reflectors are applied one by one, Q never formed."""
    m, k = self._shape[-2], input2._shape[-1]
    V = self.tril(-1) + op("eye")(m, self._shape[-1], dtype=self._dtype, device=self._device)
    C = input3
    # Q C applies H_k first; Q^T C applies H_1 first (and C Q the other way round)
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        w = V.narrow(-1, i, 1)
        t = input2.narrow(-1, i, 1).unsqueeze(-1)
        C = C - (w * t).matmul(mT(w).matmul(C)) if left else C - C.matmul(w * t).matmul(mT(w))
    return C


# ---- tensorinv, tensorsolve ---------------------------------------------------------------------


def _prod(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _meta_tensorinv(A, ind):
    if ind <= 0:
        raise RuntimeError(
            f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}"
        )
    check_float("linalg.tensorinv", A)
    left, right = A._shape[:ind], A._shape[ind:]
    if _prod(left) != _prod(right):
        raise RuntimeError(
            f"linalg.tensorinv: Expected self to satisfy the requirement "
            f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
            f"{_prod(right)} != {_prod(left)}"
        )
    return (right + left, A._dtype, A._device)


def _tensorinv(A, ind):
    """The inverse of A seen as a linear map from shape[ind:] to shape[:ind]."""
    left, right = A._shape[:ind], A._shape[ind:]
    n = _prod(left)
    return op("linalg_inv")(A.reshape(n, n)).reshape(right + left)


def _moved(A, dims):
    if dims is None:
        return A
    nd = len(A._shape)
    dims = [d % nd for d in dims]
    return A.movedim(dims, list(range(nd - len(dims), nd)))


def _meta_tensorsolve(A, B, dims):
    check_float("linalg.tensorsolve", A, B)
    check_same_dtype("linalg.tensorsolve", A, B)
    A = _moved(A, dims)
    rest = A._shape[len(B._shape) :]
    lead = _prod(A._shape[: len(B._shape)])
    if _prod(rest) != lead:
        raise RuntimeError(
            f"linalg.tensorsolve: Expected self to satisfy the requirement "
            f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
            f"but got {_prod(rest)} != {lead}"
        )
    if _prod(B._shape) != lead:
        raise RuntimeError(
            f"linalg.tensorsolve: expected other to have "
            f"prod(self.shape[:other.ndim]) = {lead} elements, but got "
            f"{_prod(B._shape)} (shape {list(B._shape)})"
        )
    return (rest, A._dtype, common_device("linalg.tensorsolve", A, B))


def _tensorsolve(A, B, dims):
    """X with tensordot(A, X, X.ndim) = B (dims of A moved to the end first)."""
    A = _moved(A, dims)
    rest = A._shape[len(B._shape) :]
    n = _prod(B._shape)
    return op("linalg_solve")(A.reshape(n, n), B.reshape(n)).reshape(rest)


def _declare_all() -> None:
    declare(
        "linalg_matrix_power(Tensor A, int n) -> Tensor",
        _meta_matrix_power("linalg.matrix_power"),
        impl=_linalg_matrix_power,
        **_L,
    )
    declare(
        "matrix_power(Tensor self, int n) -> Tensor",
        _meta_matrix_power("matrix_power"),
        impl=_matrix_power,
        family="linalg",
    )
    declare(
        "linalg_matrix_exp(Tensor A) -> Tensor",
        meta_square("linalg.matrix_exp"),
        impl=_linalg_matrix_exp,
        derivative=_d_linalg_matrix_exp,
        saves=("A",),
        **_L,
    )
    declare(
        "matrix_exp(Tensor self) -> Tensor",
        meta_square("matrix_exp"),
        impl=_matrix_exp,
        derivative=_d_matrix_exp,
        saves=("self",),
        family="linalg",
    )
    declare(
        "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
        _meta_linalg_cross,
        impl=_linalg_cross,
        **_L,
    )
    declare(
        "cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
        _meta_cross,
        impl=_cross,
        family="linalg",
    )
    declare("linalg_multi_dot(Tensor[] tensors) -> Tensor", _meta_multi_dot, impl=_multi_dot, **_L)
    declare(
        "chain_matmul(Tensor[] matrices) -> Tensor",
        _meta_chain_matmul,
        impl=_chain_matmul,
        family="linalg",
        method=False,
    )
    declare("linalg_vander(Tensor x, *, int? N=None) -> Tensor", _meta_vander, impl=_vander, **_L)
    declare(
        "linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor",
        _meta_vecdot,
        impl=_vecdot,
        **_L,
    )
    declare(
        "linalg_diagonal(Tensor(a) A, *, int offset=0, Dim dim1=-2, Dim dim2=-1) -> Tensor(a)",
        _meta_linalg_diagonal,
        impl=_linalg_diagonal,
        out=False,
        **_L,
    )
    declare(
        "linalg_householder_product(Tensor A, Tensor tau) -> Tensor",
        _meta_householder,
        impl=_householder_product,
        **_L,
    )
    declare(
        "orgqr(Tensor self, Tensor input2) -> Tensor", _meta_orgqr, impl=_orgqr, family="linalg"
    )
    declare(
        "geqrf(Tensor self) -> (Tensor a, Tensor tau)",
        _meta_geqrf,
        impl=_geqrf,
        differentiable=False,
        family="linalg",
    )
    declare(
        "ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, "
        "bool transpose=False) -> Tensor",
        _meta_ormqr,
        impl=_ormqr,
        family="linalg",
    )
    declare(
        "linalg_tensorinv(Tensor A, int ind=2) -> Tensor", _meta_tensorinv, impl=_tensorinv, **_L
    )
    declare(
        "linalg_tensorsolve(Tensor A, Tensor B, int[]? dims=None) -> Tensor",
        _meta_tensorsolve,
        impl=_tensorsolve,
        **_L,
    )


_declare_all()
