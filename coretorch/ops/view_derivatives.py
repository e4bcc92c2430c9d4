"""Derivative formulas of the view ops (`views.py`) and of copy_/clone/_to_copy (`copy.py`).

The gradient of a view that selects part of its input (slice, select, narrow, diagonal,
as_strided, unfold) is the output gradient written into zeros of the input's shape through the
same view; the rest are reshapes/permutations of the gradient. `expand` returns the gradient as
is: autograd sums it back to the input's shape centrally. Views read only their input's
geometry, never its values (they are declared with ``saves=()``).
"""

from __future__ import annotations

from typing import Callable

from ..tensor.impl import is_overlapping
from .derivative_utils import op

__all__ = ["VIEW_DERIVATIVES", "strided_scatter", "copy_backward", "identity_backward"]


def _extent(shape: tuple, stride: tuple, offset: int) -> int:
    if 0 in shape:
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1


def strided_scatter(grad, in_geom: tuple, out_geom: tuple):
    """Gradient of an input with geometry `in_geom` = (shape, stride, storage offset) for an
    output view `out_geom` of the same storage: zeros except where the output reads the input."""
    in_shape, in_stride, in_off = in_geom
    out_shape, out_stride, out_off = out_geom
    if is_overlapping(out_shape, out_stride) or is_overlapping(in_shape, in_stride):
        raise NotImplementedError(
            f"as_strided backward: views whose elements overlap in memory (sizes "
            f"{list(out_shape)}, strides {list(out_stride)}) are not supported by coretorch "
            f"autograd; use expand() or unfold(), whose backward is supported"
        )
    lo = min(in_off, out_off)
    hi = max(_extent(in_shape, in_stride, in_off), _extent(out_shape, out_stride, out_off))
    buf = op("zeros")((max(hi - lo, 0),), dtype=grad._dtype, device=grad._device)
    op("as_strided")(buf, out_shape, out_stride, out_off - lo).copy_(grad)
    return op("as_strided")(buf, in_shape, in_stride, in_off - lo)


def _reshape_back(ctx, g):
    return (g.reshape(ctx.self._shape),)


def _as_strided(ctx, g):
    x = ctx.self
    off = x._offset if ctx.storage_offset is None else ctx.storage_offset
    return (strided_scatter(g, (x._shape, x._stride, x._offset), (ctx.size, ctx.stride, off)),)


def _transpose(ctx, g):
    return (g.transpose(ctx.dim0, ctx.dim1),)


def _t(ctx, g):
    return (g.t(),)


def _permute(ctx, g):
    inv = [0] * len(ctx.dims)
    for i, d in enumerate(ctx.dims):
        inv[d] = i
    return (g.permute(inv),)


def _identity(ctx, g):
    return (g,)


def _scatter_through(name: str, view: Callable) -> Callable:
    """The derivative of view `name`, which selects part of `self`: `g` written through the
    same view into zeros shaped like `self`."""

    def formula(ctx, g):
        z = op("zeros")(ctx.self._shape, dtype=g._dtype, device=g._device)
        view(ctx, z).copy_(g)
        return (z,)

    formula.__name__ = f"{name}_backward"
    return formula


def _unfold(ctx, g):
    x, d, size, step = ctx.self, ctx.dimension, ctx.size, ctx.step
    if not x._shape:
        return (g.reshape(()),)
    z = op("zeros")(x._shape, dtype=g._dtype, device=g._device)
    for i in range(g._shape[d]):
        # windows may overlap: accumulate each one
        z.narrow(d, i * step, size).add_(g.select(d, i).movedim(-1, d))
    return (z,)


VIEW_DERIVATIVES: dict[str, Callable] = {
    "view": _reshape_back,
    "view_as": _reshape_back,
    "squeeze": _reshape_back,
    "unsqueeze": _reshape_back,
    "as_strided": _as_strided,
    "transpose": _transpose,
    "t": _t,
    "permute": _permute,
    "expand": _identity,
    "expand_as": _identity,
    "alias": _identity,
    "slice": _scatter_through(
        "slice", lambda ctx, z: z.slice(ctx.dim, ctx.start, ctx.end, ctx.step)
    ),
    "narrow": _scatter_through("narrow", lambda ctx, z: z.narrow(ctx.dim, ctx.start, ctx.length)),
    "select": _scatter_through("select", lambda ctx, z: z.select(ctx.dim, ctx.index)),
    "diagonal": _scatter_through(
        "diagonal", lambda ctx, z: z.diagonal(ctx.offset, ctx.dim1, ctx.dim2)
    ),
    "unfold": _unfold,
}


# ---- copy.py ------------------------------------------------------------------------------------


def copy_backward(ctx, g):
    """copy_(self, src): self's old values are overwritten; src gets the gradient (reduced to
    its shape and cast to its dtype/device by autograd)."""
    return (op("zeros_like")(g), g)


def identity_backward(ctx, g):
    """clone / _to_copy: the gradient passes through (autograd casts it back)."""
    return (g,)
