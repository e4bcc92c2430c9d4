"""Matrix products: mm and bmm (primitives), addmm (one kernel for every backend), and matmul,
dot, mv, outer, linear written with them. FLOPs of a product: 2*M*N*K."""

from __future__ import annotations

from typing import Any

from .declare import EXPLICIT, IMPLICIT, declare, op_named
from .derivative_utils import holomorphic
from .meta_rules import broadcast_shapes, broadcasts_to, common_device, promote

__all__ = ["flops_mm", "flops_bmm", "flops_addmm", "meta_dot", "product_scalars"]


def _same_dtype(op: str, a, b) -> None:
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"{op}(): expected m1 and m2 to have the same dtype, but got: "
            f"{a._dtype.name} != {b._dtype.name}"
        )


def _meta_mm(self, mat2):
    if len(self._shape) != 2 or len(mat2._shape) != 2:
        raise RuntimeError(
            f"mm(): expected 2-D matrices, but got {len(self._shape)}-D and "
            f"{len(mat2._shape)}-D tensors"
        )
    _same_dtype("mm", self, mat2)
    (n, k), (k2, m) = self._shape, mat2._shape
    if k != k2:
        raise RuntimeError(
            f"mm(): mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})"
        )
    return ((n, m), self._dtype, common_device("mm", self, mat2))


def _mat2_grad(mat1, grad, mat2):
    """mat1.T @ grad laid out like `mat2` (as PyTorch's mm_mat2_backward): a transposed weight
    (linear's ``weight.t()``) gets a transposed gradient, which is contiguous again for the
    weight itself and so can become its `.grad` without a copy."""
    rows, cols = mat2._shape
    if rows > 1 and cols > 1 and mat2._stride == (1, rows):
        return grad.t().mm(mat1).t()
    return mat1.t().mm(grad)


def _d_mm(ctx, grad):
    need = ctx.needs_input_grad
    return (
        grad.mm(ctx.mat2.t()) if need[0] else None,
        _mat2_grad(ctx.self, grad, ctx.mat2) if need[1] else None,
    )


def flops_mm(result, self, mat2) -> int:
    """2*M*N*K."""
    return 2 * self._shape[0] * self._shape[1] * mat2._shape[1]


def _meta_bmm(self, mat2):
    if len(self._shape) != 3 or len(mat2._shape) != 3:
        raise RuntimeError(
            f"bmm(): expected 3-D tensors (batch, rows, cols), but got "
            f"{len(self._shape)}-D and {len(mat2._shape)}-D tensors"
        )
    _same_dtype("bmm", self, mat2)
    (b, n, k), (b2, k2, m) = self._shape, mat2._shape
    if b != b2 or k != k2:
        raise RuntimeError(
            f"bmm(): Expected size for first two dimensions of batch2 tensor to "
            f"be: [{b}, {k}] but got: [{b2}, {k2}]."
        )
    return ((b, n, m), self._dtype, common_device("bmm", self, mat2))


def _d_bmm(ctx, grad):
    need = ctx.needs_input_grad
    return (
        grad.bmm(ctx.mat2.transpose(1, 2)) if need[0] else None,
        ctx.self.transpose(1, 2).bmm(grad) if need[1] else None,
    )


def flops_bmm(result, self, mat2) -> int:
    """2*B*M*N*K."""
    b, n, k = self._shape
    return 2 * b * n * k * mat2._shape[2]


def _meta_addmm(self, mat1, mat2, beta, alpha):
    shape, dtype, device = _meta_mm(mat1, mat2)
    if self._dtype is not dtype:
        raise RuntimeError(
            f"addmm(): expected self and mat1 to have the same dtype, but got: "
            f"{self._dtype.name} != {dtype.name}"
        )
    if self._shape != shape[1:] and not broadcasts_to(self._shape, shape):
        raise RuntimeError(
            f"addmm(): self of shape {list(self._shape)} can't be broadcast to "
            f"the product's shape {list(shape)}"
        )
    return (shape, dtype, common_device("addmm", self, mat1))


def product_scalars(dtype, beta, alpha) -> tuple:
    """(beta, alpha) in a product's dtype, as PyTorch takes them: truncated to integers for an
    integer product (``beta=0.5`` is 0), so the result keeps the integer dtype."""
    if dtype.is_floating_point or dtype.is_complex:
        return beta, alpha
    return int(beta), int(alpha)


def scaled_sum(self, prod, beta, alpha):
    """beta * self + alpha * prod, the tail of addmm and its relatives. `self` broadcasts to the
    product's shape; with beta=0 it is ignored (NaN in it does not propagate); the scalars are
    `product_scalars`."""
    beta, alpha = product_scalars(prod._dtype, beta, alpha)
    if alpha != 1:
        prod = prod.mul(alpha)
    if beta == 0:
        return prod
    return prod.add(self if beta == 1 else self.mul(beta))


def _addmm(self, mat1, mat2, beta, alpha):
    """beta * self + alpha * (mat1 @ mat2)."""
    return scaled_sum(self, mat1.mm(mat2), beta, alpha)


def _d_addmm(ctx, grad):
    need = ctx.needs_input_grad
    beta, alpha, mat1, mat2 = ctx.beta, ctx.alpha, ctx.mat1, ctx.mat2
    g_self = (grad if beta == 1 else grad.mul(beta)) if need[0] else None
    g1 = grad.mm(mat2.t()) if need[1] else None
    g2 = _mat2_grad(mat1, grad, mat2) if need[2] else None
    if alpha != 1:
        g1 = None if g1 is None else g1.mul(alpha)
        g2 = None if g2 is None else g2.mul(alpha)
    return (g_self, g1, g2)


def flops_addmm(result, self, mat1, mat2, beta, alpha) -> int:
    """2*M*N*K for the product plus one per output element for the addition."""
    n, k = mat1._shape
    return 2 * n * k * mat2._shape[1] + result.numel()


def meta_dot(op: str):
    """The meta rule of an inner product of two 1-D tensors of one size and dtype (dot, vdot)."""

    def meta(self, other):
        if len(self._shape) != 1 or len(other._shape) != 1:
            raise RuntimeError(
                f"{op}(): 1D tensors expected, but got {len(self._shape)}D and "
                f"{len(other._shape)}D tensors"
            )
        if self._dtype is not other._dtype:
            raise RuntimeError(
                f"{op}(): expected both vectors to have same dtype, but found "
                f"{self._dtype.name} and {other._dtype.name}"
            )
        if self._shape != other._shape:
            n, k = self._shape[0], other._shape[0]
            raise RuntimeError(
                f"{op}(): inconsistent tensor size, expected tensor [{n}] and "
                f"src [{k}] to have the same number of elements, but got {n} "
                f"and {k} elements respectively"
            )
        return ((), self._dtype, common_device(op, self, other))

    meta.__name__ = f"_meta_{op}"
    return meta


def _dot(self, other):
    """Inner product of two 1-D tensors of the same size and dtype."""
    return self.unsqueeze(0).mm(other.unsqueeze(1)).reshape(())


def _meta_mv(self, vec):
    if len(self._shape) != 2 or len(vec._shape) != 1:
        raise RuntimeError(
            f"mv(): matrix @ vector expected, got {len(self._shape)}-D and "
            f"{len(vec._shape)}-D tensors"
        )
    if self._shape[1] != vec._shape[0]:
        raise RuntimeError(
            f"mv(): size mismatch, got input ({self._shape[0]}x{self._shape[1]}), "
            f"vec ({vec._shape[0]})"
        )
    _same_dtype("mv", self, vec)
    return ((self._shape[0],), self._dtype, common_device("mv", self, vec))


def _mv(self, vec):
    """Matrix (n, m) times vector (m,)."""
    return self.mm(vec.unsqueeze(1)).squeeze(1)


def _meta_outer(self, vec2):
    if len(self._shape) != 1 or len(vec2._shape) != 1:
        raise RuntimeError(
            f"outer(): expected 1-D tensors, but got {len(self._shape)}-D and "
            f"{len(vec2._shape)}-D tensors"
        )
    return (
        (self._shape[0], vec2._shape[0]),
        promote(self, vec2),
        common_device("outer", self, vec2),
    )


def _outer(self, vec2):
    """Outer product of two 1-D tensors (dtypes promote, as in PyTorch)."""
    return self.unsqueeze(1).mul(vec2.unsqueeze(0))


def _matmul_shape(op: str, a: tuple, b: tuple) -> tuple:
    """The result shape of ``matmul`` of shapes `a` and `b` (PyTorch's rules), refusing what it
    refuses."""
    da, db = len(a), len(b)
    if da == 0 or db == 0:
        raise RuntimeError(
            f"{op}(): both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    n, k = (1, a[0]) if da == 1 else a[-2:]
    k2, m = (b[0], 1) if db == 1 else b[-2:]
    if k != k2:
        if da == 1 and db == 1:
            raise RuntimeError(
                f"{op}(): inconsistent tensor size, expected tensor [{k}] and src "
                f"[{k2}] to have the same number of elements, but got {k} and "
                f"{k2} elements respectively"
            )
        raise RuntimeError(
            f"{op}(): mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})"
        )
    batch = broadcast_shapes(op, a[:-2], b[:-2])
    return batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())


def _meta_matmul(self, other):
    _same_dtype("matmul", self, other)
    return (
        _matmul_shape("matmul", self._shape, other._shape),
        self._dtype,
        common_device("matmul", self, other),
    )


def _matmul(self, other):
    """Matrix product with ``torch.matmul`` semantics: 1-D operands are promoted to matrices
    (and the added dim removed after), batch dims broadcast."""
    da, db = len(self._shape), len(other._shape)
    if da == 1 and db == 1:
        return _dot(self, other)
    if da == 2 and db == 1:
        return _mv(self, other)
    if da == 1 and db == 2:
        return self.unsqueeze(0).mm(other).squeeze(0)
    if da == 2 and db == 2:
        return self.mm(other)
    if da >= 3 and db <= 2:
        # fold the batch into the rows: one mm instead of a batched product
        b = other.unsqueeze(1) if db == 1 else other
        out = self.reshape(-1, self._shape[-1]).mm(b)
        return out.reshape(self._shape[:-1] + ((b._shape[-1],) if db == 2 else ()))
    a = self.unsqueeze(0) if da == 1 else self
    b = other.unsqueeze(-1) if db == 1 else other
    n, k, m = a._shape[-2], a._shape[-1], b._shape[-1]
    batch = broadcast_shapes("matmul", a._shape[:-2], b._shape[:-2])
    nb = 1
    for s in batch:
        nb *= s
    a3 = a.expand(batch + (n, k)).reshape(nb, n, k)
    b3 = b.expand(batch + (k, m)).reshape(nb, k, m)
    out = a3.bmm(b3).reshape(batch + (n, m))
    if da == 1:
        out = out.squeeze(-2)
    if db == 1:
        out = out.squeeze(-1)
    return out


def _meta_linear(input, weight, bias):  # noqa: A002 - PyTorch's argument name
    if len(weight._shape) not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {len(weight._shape)}-D")
    _same_dtype("linear", input, weight)
    shape = _matmul_shape("linear", input._shape, weight._shape[::-1])
    if bias is not None and bias._shape != shape[-1:]:
        shape = broadcast_shapes("linear", shape, bias._shape)
    return (shape, input._dtype, common_device("linear", input, weight, bias))


def _linear(input, weight, bias):  # noqa: A002 - PyTorch's argument name
    """input @ weight.T + bias (``torch.nn.functional.linear``)."""
    if len(input._shape) == 2 and len(weight._shape) == 2 and bias is not None:
        return _addmm_entry(bias, input, weight.t())
    out = _matmul(input, weight.t())
    return out if bias is None else out.add(bias)


def _declare_all() -> None:
    declare(
        "mm(Tensor self, Tensor mat2) -> Tensor",
        _meta_mm,
        family="linalg",
        derivative=holomorphic(_d_mm),
        flops=flops_mm,
        doc="The matrix product of the (n, k) matrix `input` and the (k, m) matrix `mat2`.",
    )
    declare(
        "bmm(Tensor self, Tensor mat2) -> Tensor",
        _meta_bmm,
        family="linalg",
        derivative=holomorphic(_d_bmm),
        flops=flops_bmm,
        doc="The batched matrix product of (b, n, k) `input` and (b, k, m) `mat2`.",
    )
    declare(
        "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        _meta_addmm,
        impl=_addmm,
        kind=EXPLICIT,
        family="linalg",
        derivative=holomorphic(_d_addmm),
        saves=("mat1", "mat2"),
        flops=flops_addmm,
    )
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="linalg", out=False)
    declare("matmul(Tensor self, Tensor other) -> Tensor", _meta_matmul, impl=_matmul, **comp)
    declare("dot(Tensor self, Tensor other) -> Tensor", meta_dot("dot"), impl=_dot, **comp)
    declare("mv(Tensor self, Tensor vec) -> Tensor", _meta_mv, impl=_mv, **comp)
    declare("outer(Tensor self, Tensor vec2) -> Tensor", _meta_outer, impl=_outer, **comp)
    declare(
        "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
        _meta_linear,
        impl=_linear,
        method=False,
        **comp,
    )


_declare_all()
_addmm_entry = op_named("addmm").entry  # linear's fast path calls it directly
