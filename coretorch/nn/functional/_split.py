"""Splitting a tensor into pieces whose gradient is the concatenation of the pieces' gradients
(PyTorch's split_with_sizes / unbind backward). The view ops' own backward writes each piece's
gradient into zeros of the whole input, so splitting a sequence into its T steps would cost
O(T²) in backward; recurrent layers split with this instead. A stand-in for a declared
split_with_sizes/unbind op with a cat/stack derivative."""

from __future__ import annotations

from ...autograd.function import Function
from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["split", "unbind"]


class _Split(Function):
    @staticmethod
    def forward(ctx, x: Tensor, dim: int, sizes: tuple, squeeze: bool):
        ctx.dim, ctx.squeeze = dim, squeeze
        pieces = x.split(list(sizes), dim)
        return tuple(p.squeeze(dim) for p in pieces) if squeeze else tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        if ctx.squeeze:
            return aten.stack(list(grads), ctx.dim), None, None, None
        return aten.cat(list(grads), ctx.dim), None, None, None


def split(x: Tensor, sizes, dim: int = 0) -> tuple:
    """``x.split(sizes, dim)`` with a concatenating backward."""
    return _Split.apply(x, dim, tuple(sizes), False)


def unbind(x: Tensor, dim: int = 0) -> tuple:
    """``x.unbind(dim)`` with a stacking backward."""
    return _Split.apply(x, dim, (1,) * x.shape[dim], True)
