"""unfold (im2col) and fold (col2im) of ``nn.functional``: the ops `coretorch.ops.im2col`
with PyTorch's functional signatures; conv_tbc (`coretorch.ops.conv_tbc`)."""

from __future__ import annotations

from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["unfold", "fold", "conv_tbc"]

conv_tbc = aten.conv_tbc.entry


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding (kH, kW) blocks of (N, C, H, W) or (C, H, W) input as columns
    (N, C*kH*kW, L)."""
    return aten.im2col(input, kernel_size, dilation, padding, stride)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C*kH*kW, L) of sliding blocks into an (N, C, *output_size) image."""
    return aten.col2im(input, output_size, kernel_size, dilation, padding, stride)
