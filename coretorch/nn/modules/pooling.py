"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d."""

from __future__ import annotations

from typing import Any, Callable

from .. import functional as F
from ._layer import SHOWN, functional_layer, options_repr
from .module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
]


class _PoolNd(Module):
    """The window options every pooling layer stores (the stride defaults to the kernel)."""

    def __init__(self, kernel_size, stride, padding, ceil_mode: bool) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return options_repr(self, kernel_size=SHOWN, stride=SHOWN, padding=SHOWN)


class _MaxPoolNd(_PoolNd):
    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.dilation = dilation
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return options_repr(
            self, kernel_size=SHOWN, stride=SHOWN, padding=SHOWN, dilation=SHOWN, ceil_mode=SHOWN
        )


class MaxPool1d(_MaxPoolNd):
    """Max over windows of the last dimension of (N, C, L) inputs."""

    def forward(self, input):
        return F.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class MaxPool2d(_MaxPoolNd):
    """Max over (kH, kW) windows of (N, C, H, W) inputs; stride defaults to kernel_size."""

    def forward(self, input):
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


def _as_tuple(v) -> tuple:
    return (v,) if isinstance(v, int) else tuple(v)


class AvgPool1d(_PoolNd):
    """Mean over windows of the last dimension of (N, C, L) inputs."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__(
            _as_tuple(kernel_size),
            None if stride is None else _as_tuple(stride),
            _as_tuple(padding),
            ceil_mode,
        )
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class _AvgPoolNd(_PoolNd):
    _fn: Callable[..., Any]  # the functional pooling (per subclass)

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPoolNd):
    """Mean over (kH, kW) windows of (N, C, H, W) inputs; stride defaults to kernel_size."""

    _fn = staticmethod(F.avg_pool2d)


AdaptiveAvgPool1d = functional_layer(
    "AdaptiveAvgPool1d",
    F.adaptive_avg_pool1d,
    "Average pooling of (N, C, L) to `output_size` bins.",
    __name__,
)
AdaptiveAvgPool2d = functional_layer(
    "AdaptiveAvgPool2d",
    F.adaptive_avg_pool2d,
    "Average pooling of (N, C, H, W) to `output_size` (int, pair, or pair with None).",
    __name__,
)
