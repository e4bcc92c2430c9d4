"""The linear algebra MultivariateNormal needs before coretorch declares it as operators:
`cholesky` and `solve_triangular` (batched, broadcasting), each a
`coretorch.autograd.Function` computed with numpy/scipy on the host and differentiated with
PyTorch's formulas (written with coretorch ops, so they differentiate again), and
`cholesky_inverse` composed from them."""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..ops import aten
from ..tensor.tensor import Tensor
from ._special import _host, _like
from .utils import broadcast_shapes, sum_to

__all__ = ["cholesky", "solve_triangular", "cholesky_inverse"]


def _mT(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _not_positive_definite(a: np.ndarray) -> str:
    """PyTorch's message for the first batch element whose leading minor is not positive
    definite."""
    flat = a.reshape(-1, a.shape[-2], a.shape[-1])
    for index, m in enumerate(flat):
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:order, :order])
            except np.linalg.LinAlgError:
                where = f"(Batch element {index}): " if a.ndim > 2 else ""
                return (
                    f"linalg.cholesky: {where}The factorization could not be completed "
                    f"because the input is not positive-definite (the leading minor of "
                    f"order {order} is not positive-definite)."
                )
    return "linalg.cholesky: the input is not positive-definite"


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a):
        values = _host(a, "cholesky")
        try:
            lower = np.linalg.cholesky(values)
        except np.linalg.LinAlgError:
            raise RuntimeError(_not_positive_definite(values)) from None
        out = _like(lower, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # PyTorch's cholesky_backward: gA = L^{-H} Φ(L^H gL) L^{-1}, Φ taking the lower
        # triangle with half the diagonal
        (lower,) = ctx.saved_tensors
        phi = (_mT(lower) @ grad).tril()
        phi = 0.5 * (phi + _mT(phi.tril(-1)))
        left = solve_triangular(_mT(lower), phi, upper=True)
        # right division by L: (G L⁻¹)ᵀ = L⁻ᵀ Gᵀ
        return _mT(solve_triangular(_mT(lower), _mT(left), upper=True))


def _solve(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    import scipy.linalg

    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = (
        np.stack(
            [
                scipy.linalg.solve_triangular(ai, bi, lower=not upper, check_finite=False)
                for ai, bi in zip(a, b)
            ]
        )
        if len(a)
        else np.empty(a.shape[:1] + b.shape[1:])
    )
    return out.reshape(batch + out.shape[-2:])


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, a, b, upper):
        out = _like(
            _solve(_host(a, "solve_triangular"), _host(b, "solve_triangular"), upper),
            b if b.dtype == a.dtype else a,
        )
        ctx.upper, ctx.b_shape = upper, tuple(b.shape)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # X = A⁻¹B: gB = A⁻ᴴ gX, gA = -gB Xᴴ restricted to A's triangle
        a, x = ctx.saved_tensors
        grad_b = solve_triangular(_mT(a), grad, upper=not ctx.upper)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = -(grad_b @ _mT(x))
            grad_a = grad_a.triu() if ctx.upper else grad_a.tril()
            grad_a = sum_to(grad_a, a.shape)
        return grad_a, sum_to(grad_b, ctx.b_shape), None


def solve_triangular(a: Tensor, b: Tensor, *, upper: bool) -> Tensor:
    """X with A X = B for triangular A (``torch.linalg.solve_triangular(A, B, upper=...)``,
    left side only); batch dimensions broadcast."""
    for name, t in (("A", a), ("B", b)):
        if not isinstance(t, Tensor) or t.dim() < 2:
            raise RuntimeError(
                f"linalg.solve_triangular: expected {name} to be a tensor of at least 2 dimensions"
            )
    if a.shape[-1] != a.shape[-2] or a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"linalg.solve_triangular: incompatible shapes of A and B for the "
            f"equation AX = B ({tuple(a.shape)} and {tuple(b.shape)})"
        )
    return _SolveTriangular.apply(a, b, upper)


def cholesky(a: Tensor) -> Tensor:
    """The lower Cholesky factor L (L Lᴴ = A) of symmetric positive-definite matrices
    (``torch.linalg.cholesky``); a matrix that is not positive definite raises PyTorch's
    message."""
    if not isinstance(a, Tensor) or a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        shape = tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__
        raise RuntimeError(
            f"linalg.cholesky: A must be batches of square matrices, but they are {shape}"
        )
    return _Cholesky.apply(a)


def cholesky_inverse(lower: Tensor) -> Tensor:
    """(L Lᴴ)⁻¹ from the lower Cholesky factor L (``torch.cholesky_inverse``)."""
    eye = aten.eye(lower.shape[-1], dtype=lower.dtype, device=lower.device)
    inv = solve_triangular(lower, eye.expand(lower.shape), upper=False)
    return _mT(inv) @ inv
