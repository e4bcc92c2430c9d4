"""Fold and Unfold: sliding blocks to columns and back (``F.fold`` / ``F.unfold``)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class _SlidingBlocks(Module):
    """What Fold and Unfold share: the sliding-block geometry and its repr."""

    def __init__(self, kernel_size, dilation, padding, stride) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(_SlidingBlocks):
    """Sum columns (N, C*prod(kernel_size), L) of sliding blocks into an
    (N, C, *output_size) image."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


class Unfold(_SlidingBlocks):
    """Sliding blocks of (N, C, H, W) inputs as columns (N, C*prod(kernel_size), L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)
