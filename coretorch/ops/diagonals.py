"""Diagonal composites: diag, diag_embed, diagflat, diagonal_scatter, tril_indices and
triu_indices. A diagonal is written with one functional `index_put` at (row, column) index
pairs of the last two dims, so gradients come from index_put's own."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as dt
from ..tensor.impl import wrap_dim
from .declare import EXPLICIT, IMPLICIT, declare, op_named as _op
from .meta_rules import resolve_device


def _diag_len(n: int, m: int, offset: int) -> int:
    return max(0, min(n + min(offset, 0), m - max(offset, 0)))


def _with_diagonal(x, values, offset: int):
    """`x` with the `offset` diagonal of its last two dims replaced by `values` (shape
    ``x.shape[:-2] + (k,)``)."""
    k = values._shape[-1] if values._shape else 0
    pos = _op("arange")(k, device=x._device)
    rows, cols = pos + max(-offset, 0), pos + max(offset, 0)
    return x.index_put([None] * (len(x._shape) - 2) + [rows, cols], values)


# ---- diag_embed, diagflat, diag -------------------------------------------------------------


def _embed_dims(op: str, self, dim1: int, dim2: int) -> tuple:
    nd = len(self._shape) + 1
    d1, d2 = wrap_dim(op, dim1, nd), wrap_dim(op, dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"{op}(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _meta_diag_embed(self, offset, dim1, dim2):
    d1, d2 = _embed_dims("diag_embed", self, dim1, dim2)
    n = (self._shape[-1] if self._shape else 1) + abs(offset)
    rest = iter(self._shape[:-1])
    shape = tuple(n if i in (d1, d2) else next(rest) for i in range(len(self._shape) + 1))
    return (shape, self._dtype, self._device)


def _diag_embed(self, offset, dim1, dim2):
    """A tensor whose (dim1, dim2) planes hold the last dim of `self` on their `offset`
    diagonal, zeros elsewhere."""
    d1, d2 = _embed_dims("diag_embed", self, dim1, dim2)
    x = self if self._shape else self.reshape(1)
    n = x._shape[-1] + abs(offset)
    zeros = _op("zeros")(x._shape[:-1] + (n, n), dtype=x._dtype, device=x._device)
    out = _with_diagonal(zeros, x, offset)
    return out.movedim((-2, -1), (d1, d2))


def _meta_diagflat(self, offset):
    n = max(self.numel(), 0) + abs(offset)
    return ((n, n), self._dtype, self._device)


def _diagflat(self, offset):
    """A 2-D matrix with the flattened `self` on its `offset` diagonal."""
    return _diag_embed(self.reshape(-1), offset, 0, 1)


def _meta_diag(self, diagonal):
    if len(self._shape) == 1:
        n = self._shape[0] + abs(diagonal)
        return ((n, n), self._dtype, self._device)
    if len(self._shape) == 2:
        n, m = self._shape
        return ((_diag_len(n, m, diagonal),), self._dtype, self._device)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {len(self._shape)}D")


def _diag(self, diagonal):
    """1-D `self`: a square matrix with it on the `diagonal`-th diagonal; 2-D: a copy of its
    `diagonal`-th diagonal."""
    if len(self._shape) == 1:
        return _diag_embed(self, diagonal, 0, 1)
    return self.diagonal(diagonal).clone()


# ---- diagonal_scatter ------------------------------------------------------------------------


def _meta_diagonal_scatter(self, src, offset, dim1, dim2):
    if len(self._shape) < 2:
        raise RuntimeError(
            f"diagonal_scatter(): expected a tensor with at least 2 dimensions, "
            f"got {len(self._shape)}"
        )
    if dim1 == dim2:
        raise RuntimeError(
            f"diagonal_scatter(): diagonal dimensions cannot be identical {dim1}, {dim2}"
        )
    rest = tuple(n for i, n in enumerate(self._shape) if i not in (dim1, dim2))
    want = rest + (_diag_len(self._shape[dim1], self._shape[dim2], offset),)
    problem = (
        f"a size equal to the diagonal of the input. Got {list(src._shape)} for a "
        f"diagonal of shape {list(want)}"
        if src._shape != want
        else f"dtype {self._dtype.name}, got {src._dtype.name}"
        if src._dtype is not self._dtype
        else None
    )
    if problem:
        raise RuntimeError(f"diagonal_scatter(): expected src to have {problem}")
    return (self._shape, self._dtype, self._device)


def _diagonal_scatter(self, src, offset, dim1, dim2):
    """`self` with its `offset` diagonal in the (dim1, dim2) planes replaced by `src`."""
    x = self.movedim((dim1, dim2), (-2, -1))
    return _with_diagonal(x, src, offset).movedim((-2, -1), (dim1, dim2))


# ---- tril_indices, triu_indices --------------------------------------------------------------


def _tri_indices(name: str, lower: bool):
    def meta(row, col, offset, dtype, layout, device, requires_grad, pin_memory):
        if row < 0 or col < 0:
            raise RuntimeError(
                f"{name}(): row and col must be non-negative, got row={row}, col={col}"
            )
        rows, _ = _tri_pairs(row, col, offset, lower)
        return ((2, len(rows)), dt.int64 if dtype is None else dtype, resolve_device(device))

    def impl(row, col, offset, dtype, layout, device, requires_grad, pin_memory):
        shape, dtype, dev = meta(row, col, offset, dtype, layout, device, requires_grad, pin_memory)
        pairs = np.stack(_tri_pairs(row, col, offset, lower)).astype(dtype.numpy)
        from .factories_public import tensor

        return tensor(pairs.reshape(shape), dtype=dtype, device=dev)

    impl.__name__ = name
    impl.__doc__ = (
        f"The (row, column) coordinates of the {'lower' if lower else 'upper'} "
        f"triangle of a row x col matrix (from the `offset` diagonal), as a "
        f"2 x N tensor in row-major order."
    )
    return meta, impl


def _tri_pairs(row: int, col: int, offset: int, lower: bool) -> tuple:
    rows, cols = np.indices((row, col)).reshape(2, -1)
    keep = cols - rows <= offset if lower else cols - rows >= offset
    return rows[keep], cols[keep]


def _declare_all() -> None:
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="shape", out=False)
    declare(
        "diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
        _meta_diag_embed,
        impl=_diag_embed,
        **comp,
    )
    declare("diagflat(Tensor self, int offset=0) -> Tensor", _meta_diagflat, impl=_diagflat, **comp)
    declare("diag(Tensor self, int diagonal=0) -> Tensor", _meta_diag, impl=_diag, **comp)
    declare(
        "diagonal_scatter(Tensor self, Tensor src, int offset=0, Dim dim1=0, Dim dim2=1) -> Tensor",
        _meta_diagonal_scatter,
        impl=_diagonal_scatter,
        **comp,
    )
    fa = (
        "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool requires_grad=False, bool pin_memory=False"
    )
    for name, lower in (("tril_indices", True), ("triu_indices", False)):
        meta, impl = _tri_indices(name, lower)
        declare(
            f"{name}(int row, int col, int offset=0, *, {fa}) -> Tensor",
            meta,
            impl=impl,
            kind=EXPLICIT,
            method=False,
            out=False,
            family="factory",
            differentiable=False,
        )


_declare_all()
