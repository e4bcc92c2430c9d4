"""Derivative formulas of the view ops (`views.py`) and of copy_/clone/_to_copy (`copy.py`).

The gradient of a view that selects part of its input (slice, select, narrow, diagonal,
as_strided, unfold) is the output gradient written into zeros of the input's shape through the
same view; the rest are reshapes/permutations of the gradient. `expand` returns the gradient as
is: autograd sums it back to the input's shape centrally.
"""
from __future__ import annotations

from typing import Callable

from ..tensor.impl import is_overlapping
from .derivative_utils import is_tensor, op, saves
from .meta_rules import size_arg, wrap_dim

__all__ = ["VIEW_DERIVATIVES", "strided_scatter"]

VIEW_DERIVATIVES: dict[str, Callable] = {}


def _d(name: str):
    def register(fn: Callable) -> Callable:
        saves()(fn)  # views read only their input's geometry, never its values
        fn.__name__ = f"{name}_backward"
        VIEW_DERIVATIVES[name] = fn
        return fn
    return register


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
            f"autograd; use expand() or unfold(), whose backward is supported")
    lo = min(in_off, out_off)
    hi = max(_extent(in_shape, in_stride, in_off), _extent(out_shape, out_stride, out_off))
    buf = op("zeros")((max(hi - lo, 0),), dtype=grad._dtype, device=grad._device)
    op("as_strided")(buf, out_shape, out_stride, out_off - lo).copy_(grad)
    return op("as_strided")(buf, in_shape, in_stride, in_off - lo)


def _reshape_back(ctx, g):
    return (g.reshape(ctx.args[0]._shape),)


for _name in ("view", "squeeze", "unsqueeze"):
    _d(_name)(_reshape_back)


@_d("as_strided")
def _as_strided(ctx, g):
    x = ctx.args[0]
    a, kw = ctx.args, ctx.kwargs
    size = tuple(a[1] if len(a) > 1 else kw["size"])
    stride = tuple(a[2] if len(a) > 2 else kw["stride"])
    off = a[3] if len(a) > 3 else kw.get("storage_offset")
    out_geom = (size, stride, x._offset if off is None else off)
    return (strided_scatter(g, (x._shape, x._stride, x._offset), out_geom),)


@_d("transpose")
def _transpose(ctx, g):
    return (g.transpose(ctx.args[1], ctx.args[2]),)


@_d("t")
def _t(ctx, g):
    return (g.t(),)


@_d("permute")
def _permute(ctx, g):
    n = len(ctx.args[0]._shape)
    dims = [wrap_dim("permute", d, n) for d in size_arg("permute", ctx.args[1:])]
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv),)


@_d("expand")
def _expand(ctx, g):
    return (g,)


@_d("alias")
def _alias(ctx, g):
    return (g,)


def _scatter_through_view(name: str) -> Callable:
    def formula(ctx, g):
        x = ctx.args[0]
        z = op("zeros")(x._shape, dtype=g._dtype, device=g._device)
        op(name)(z, *ctx.args[1:], **ctx.kwargs).copy_(g)
        return (z,)
    return formula


for _name in ("slice", "narrow", "select", "diagonal"):
    _d(_name)(_scatter_through_view(_name))


@_d("unfold")
def _unfold(ctx, g):
    x, dimension, size, step = ctx.args[:4]
    if not x._shape:
        return (g.reshape(()),)
    d = wrap_dim("unfold", dimension, len(x._shape))
    z = op("zeros")(x._shape, dtype=g._dtype, device=g._device)
    for i in range(g._shape[d]):
        # windows may overlap: accumulate each one
        z.narrow(d, i * step, size).add_(g.select(d, i).movedim(-1, d))
    return (z,)


# ---- copy.py ------------------------------------------------------------------------------------

@saves()
def copy_backward(ctx, g):
    """copy_(self, src): self's old values are overwritten; src gets the gradient (reduced to
    its shape and cast to its dtype/device by autograd)."""
    src = ctx.args[1]
    return (op("zeros_like")(g), g if is_tensor(src) else None)


@saves()
def identity_backward(ctx, g):
    """clone / _to_copy: the gradient passes through (autograd casts it back)."""
    return (g,)
