"""``im2col`` (``F.unfold``) and ``col2im`` (``F.fold``) as composites over a host-built window
table (`window_tables`): im2col gathers every sliding block's elements with ``index_select``,
col2im sums blocks back into the image with ``index_add``; the two are adjoint, so each one's
gradient is the other's work, done by autograd through the ops they call."""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.impl import shape_numel
from .declare import declare, op_named as _op
from .factories_public import tensor as _tensor
from .nn_ops import conv_output_size
from .window_tables import window_table

__all__ = ["block_counts"]


def _fmt(v: tuple) -> str:
    return "(" + ", ".join(str(x) for x in v) + ")"


def _check_params(op: str, kernel_size, dilation, padding, stride) -> None:
    for name, v in (
        ("kernel_size", kernel_size),
        ("dilation", dilation),
        ("padding", padding),
        ("stride", stride),
    ):
        if len(v) != 2:
            raise RuntimeError(f"{op}(): It is expected {name} equals to 2, but got size {len(v)}")
    if min(kernel_size) <= 0:
        raise RuntimeError(
            f"{op}(): kernel size should be greater than zero, but got "
            f"kernel_height: {kernel_size[0]} kernel_width: {kernel_size[1]}"
        )
    if min(dilation) <= 0:
        raise RuntimeError(
            f"{op}(): dilation should be greater than zero, but got "
            f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}"
        )
    if min(padding) < 0:
        raise RuntimeError(
            f"{op}(): padding should be non-negative, but got pad_height: "
            f"{padding[0]} pad_width: {padding[1]}"
        )
    if min(stride) <= 0:
        raise RuntimeError(
            f"{op}(): stride should be greater than zero, but got "
            f"stride_height: {stride[0]} stride_width: {stride[1]}"
        )


def block_counts(sizes: tuple, kernel_size, dilation, padding, stride) -> tuple:
    """Number of sliding blocks along each spatial dim."""
    return tuple(
        conv_output_size(s, k, st, p, p, d)
        for s, k, st, p, d in zip(sizes, kernel_size, stride, padding, dilation)
    )


def _table(sizes, kernel_size, dilation, padding, stride, blocks, device):
    """(K*L,) flat source indices, kernel position major (-1 in the padding) and the mask of
    real ones, as tensors."""
    t = window_table(
        tuple(sizes), tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation), blocks
    ).T.reshape(-1)
    valid = t >= 0
    return (
        _tensor(t.clip(0), dtype=dt.int64, device=device),
        _tensor(valid, dtype=dt.bool, device=device),
    )


def _meta_im2col(self, kernel_size, dilation, padding, stride):
    op = "im2col"
    _check_params(op, kernel_size, dilation, padding, stride)
    shape = self._shape
    if len(shape) not in (3, 4) or shape_numel(shape[-3:]) == 0:
        raise RuntimeError(
            f"{op}(): Expected 3D or 4D (batch mode) tensor for input with "
            f"possible 0 batch size and non-zero dimensions, but got: "
            f"{list(shape)}"
        )
    blocks = block_counts(shape[-2:], kernel_size, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"{op}(): Given input with spatial size {_fmt(shape[-2:])}, "
            f"kernel_size={_fmt(kernel_size)}, dilation={_fmt(dilation)}, "
            f"padding={_fmt(padding)}, calculated shape of the array of sliding "
            f"blocks as {_fmt(blocks)}, but its components must be at least "
            f"one."
        )
    c = shape[-3] * kernel_size[0] * kernel_size[1]
    return (shape[:-3] + (c, blocks[0] * blocks[1]), self._dtype, self._device)


def _im2col(self, kernel_size, dilation, padding, stride):
    """Sliding blocks of (N, C, H, W) or (C, H, W) input as columns: (N, C*kH*kW, L)."""
    sizes = self._shape[-2:]
    blocks = block_counts(sizes, kernel_size, dilation, padding, stride)
    index, valid = _table(sizes, kernel_size, dilation, padding, stride, blocks, self._device)
    lead = self._shape[:-2]
    cols = self.reshape(lead + (sizes[0] * sizes[1],)).index_select(-1, index)  # -1: N may be 0
    cols = _op("where")(valid, cols, 0)
    k = kernel_size[0] * kernel_size[1]
    return cols.reshape(lead[:-1] + (lead[-1] * k, blocks[0] * blocks[1]))


def _meta_col2im(self, output_size, kernel_size, dilation, padding, stride):
    op = "col2im"
    _check_params(op, kernel_size, dilation, padding, stride)
    if len(output_size) != 2:
        raise RuntimeError(
            f"{op}(): It is expected output_size equals to 2, but got size {len(output_size)}"
        )
    shape = self._shape
    if len(shape) not in (2, 3) or shape_numel(shape[-2:]) == 0:
        raise RuntimeError(
            f"{op}(): Expected 2D or 3D (batch mode) tensor for input with "
            f"possible 0 batch size and non-zero dimensions, but got: "
            f"{list(shape)}"
        )
    k = kernel_size[0] * kernel_size[1]
    if shape[-2] % k:
        raise RuntimeError(
            f"{op}(): Expected size of input's dimension 1 to be divisible by the "
            f"product of kernel_size, but got input.size(1)={shape[-2]} and "
            f"kernel_size={_fmt(kernel_size)}"
        )
    blocks = block_counts(output_size, kernel_size, dilation, padding, stride)
    if min(blocks) < 1 or blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(
            f"{op}(): Given output_size={_fmt(output_size)}, "
            f"kernel_size={_fmt(kernel_size)}, dilation={_fmt(dilation)}, "
            f"padding={_fmt(padding)}, stride={_fmt(stride)}, expected size of "
            f"input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={shape[-1]}."
        )
    return (shape[:-2] + (shape[-2] // k,) + tuple(output_size), self._dtype, self._device)


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    """Sum columns (N, C*kH*kW, L) of sliding blocks back into an (N, C, H, W) image
    (overlapping blocks add up)."""
    blocks = block_counts(output_size, kernel_size, dilation, padding, stride)
    index, valid = _table(output_size, kernel_size, dilation, padding, stride, blocks, self._device)
    k = kernel_size[0] * kernel_size[1]
    lead = self._shape[:-2] + (self._shape[-2] // k,)
    src = _op("where")(valid, self.reshape(lead + (-1,)), 0)
    out = _op("zeros")(
        lead + (shape_numel(tuple(output_size)),), dtype=self._dtype, device=self._device
    )
    return out.index_add(-1, index, src).reshape(lead + tuple(output_size))


def _declare_all() -> None:
    fn: dict[str, Any] = dict(family="nn", method=False, function=False, out=False)
    declare(
        "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
        "int[2] stride) -> Tensor",
        _meta_im2col,
        impl=_im2col,
        **fn,
    )
    declare(
        "col2im(Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, "
        "int[2] padding, int[2] stride) -> Tensor",
        _meta_col2im,
        impl=_col2im,
        **fn,
    )


_declare_all()
