"""3-D, power-average and fractional pooling layers: MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d, LPPool1d/2d/3d, FractionalMaxPool2d/3d and MaxUnpool3d."""

from __future__ import annotations

from .. import functional as F
from ._layer import functional_layer
from .module import Module
from .pooling import _AvgPoolNd, _MaxPoolNd
from .pooling_max import _MaxUnpoolNd

__all__ = [
    "MaxPool3d",
    "AvgPool3d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "MaxUnpool3d",
]


class MaxPool3d(_MaxPoolNd):
    """Max over (kT, kH, kW) windows of (N, C, D, H, W) inputs; stride defaults to
    kernel_size."""

    def forward(self, input):
        return F.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class AvgPool3d(_AvgPoolNd):
    """Mean over (kT, kH, kW) windows of (N, C, D, H, W) inputs; stride defaults to
    kernel_size."""

    _fn = staticmethod(F.avg_pool3d)


AdaptiveAvgPool3d = functional_layer(
    "AdaptiveAvgPool3d",
    F.adaptive_avg_pool3d,
    "Average pooling of (N, C, D, H, W) to `output_size` (int or triple, None keeping that size).",
    __name__,
)
AdaptiveMaxPool3d = functional_layer(
    "AdaptiveMaxPool3d",
    F.adaptive_max_pool3d,
    "Max over adaptive bins of (N, C, D, H, W) inputs to `output_size`.",
    __name__,
    ("output_size",),
)
LPPool1d = functional_layer(
    "LPPool1d",
    F.lp_pool1d,
    "Power-average pooling over windows of the last dim: (sum x^p)^(1/p).",
    __name__,
)
LPPool2d = functional_layer(
    "LPPool2d",
    F.lp_pool2d,
    "Power-average pooling over (kH, kW) windows: (sum x^p)^(1/p).",
    __name__,
)
LPPool3d = functional_layer(
    "LPPool3d",
    F.lp_pool3d,
    "Power-average pooling over (kT, kH, kW) windows: (sum x^p)^(1/p).",
    __name__,
)


class _FractionalMaxPoolNd(Module):
    _n = 0

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        n, name = self._n, type(self).__name__
        self.kernel_size = kernel_size
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = output_size
        self.output_ratio = output_ratio
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratio = (
                tuple(output_ratio)
                if isinstance(output_ratio, (tuple, list))
                else (output_ratio,) * n
            )
            if not all(0 < r < 1 for r in ratio):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
            self.output_ratio = ratio

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling (Graham, 2014) of (N, C, H, W) inputs to `output_size` or
    `output_ratio` of the input size, windows placed pseudo-randomly."""

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, D, H, W) inputs."""

    _n = 3


class MaxUnpool3d(_MaxUnpoolNd):
    """Place each value of a max_pool3d output back at its index (zeros elsewhere)."""

    _n = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )
