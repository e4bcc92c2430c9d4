"""AdaptiveMaxPool1d/2d and MaxUnpool1d/2d."""

from __future__ import annotations

from .. import functional as F
from ..functional._conv_args import ntuple
from ._layer import functional_layer
from .module import Module

__all__ = ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d"]


AdaptiveMaxPool1d = functional_layer(
    "AdaptiveMaxPool1d",
    F.adaptive_max_pool1d,
    "Max over adaptive bins of (N, C, L) inputs to `output_size`.",
    __name__,
    ("output_size",),
)
AdaptiveMaxPool2d = functional_layer(
    "AdaptiveMaxPool2d",
    F.adaptive_max_pool2d,
    "Max over adaptive bins of (N, C, H, W) inputs to `output_size`.",
    __name__,
    ("output_size",),
)


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        name, n = type(self).__name__, self._n
        self.kernel_size = ntuple(name, "kernel_size", kernel_size, n)
        self.stride = ntuple(name, "stride", stride if stride is not None else kernel_size, n)
        self.padding = ntuple(name, "padding", padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Place each value of a max_pool1d output back at its index (zeros elsewhere)."""

    _n = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool2d(_MaxUnpoolNd):
    """Place each value of a max_pool2d output back at its index (zeros elsewhere)."""

    _n = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )
