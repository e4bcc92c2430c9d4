"""Distances of ``nn.functional``: cosine_similarity, pairwise_distance and pdist (PyTorch's
formulas; a zero vector's norm has a zero gradient, as in PyTorch)."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...ops.meta_rules import broadcast_shapes
from ...tensor.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def vector_norm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """The p-norm of `x` along `dim` (p = inf, -inf, 0 or any positive number), with a zero
    gradient at zero vectors instead of NaN."""
    if math.isinf(p):
        a = x.abs()
        return a.amax(dim, keepdim) if p > 0 else a.amin(dim, keepdim)
    if p == 0:
        return (x != 0).to(x.dtype).sum(dim, keepdim)
    if p == 1:
        return x.abs().sum(dim, keepdim)
    s = (x * x).sum(dim, keepdim) if p == 2 else x.abs().pow(p).sum(dim, keepdim)
    zero = s == 0
    root = aten.where(zero, 1.0, s)
    root = root.sqrt() if p == 2 else root.pow(1.0 / p)
    return aten.where(zero, 0.0, root)


@autocast_function("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Σ (x1 / max(‖x1‖, eps)) (x2 / max(‖x2‖, eps)) along `dim` (inputs broadcast)."""
    x1, x2 = _broadcast(x1, x2)

    def unit(x: Tensor) -> Tensor:
        n = vector_norm(x, 2, dim, True)
        # the clamp changes the value only: PyTorch clamps in place under no_grad
        n = n + (n.clamp(min=eps) - n).detach()
        return x / n

    return (unit(x1) * unit(x2)).sum(dim)


def _broadcast(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    shape = broadcast_shapes("cosine_similarity", tuple(a.shape), tuple(b.shape))
    return a.expand(shape), b.expand(shape)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """‖x1 - x2 + eps‖_p along the last dimension."""
    dim = max(x1.dim(), x2.dim()) - 1
    if dim < 0:
        raise RuntimeError("pairwise_distance(): expected at least 1-D inputs, got 0-D")
    return vector_norm(x1 - x2 + eps, p, dim, keepdim)


@autocast_function("pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between every pair of rows i < j of a 2-D input (row-major order
    of the upper triangle)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    rows_i = input.index_select(
        0, _tensor(i.astype(np.int64), dtype=_dt.int64, device=input.device)
    )
    rows_j = input.index_select(
        0, _tensor(j.astype(np.int64), dtype=_dt.int64, device=input.device)
    )
    return vector_norm(rows_i - rows_j, p, 1)
