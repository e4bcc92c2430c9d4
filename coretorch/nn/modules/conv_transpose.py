"""ConvTranspose1d/2d/3d (weight (C_in, C_out/groups, *kernel), PyTorch's initialization, an
optional `output_size` at call time) and Conv3d."""

from __future__ import annotations

from .. import functional as F
from ..functional._conv_args import ntuple
from .conv import _ConvNd

__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) inputs; weight (C_out, C_in/groups, kD, kH, kW)."""

    _n = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of ints, got '{padding}'")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )
        self.output_padding = ntuple(name, "output_padding", output_padding, self._n)

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims: int, dilation=None
    ) -> list:
        """The output_padding that gives `output_size` (or the layer's own when None)."""
        if output_size is None:
            return list(self.output_padding)
        non_spatial = 2 if input.dim() == num_spatial_dims + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                f"output_size must have {num_spatial_dims} or "
                f"{non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})"
            )
        dilation = dilation if dilation is not None else (1,) * num_spatial_dims
        min_sizes = [
            (input.size(d + non_spatial) - 1) * stride[d]
            - 2 * padding[d]
            + dilation[d] * (kernel_size[d] - 1)
            + 1
            for d in range(num_spatial_dims)
        ]
        max_sizes = [m + stride[d] - 1 for d, m in enumerate(min_sizes)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes "
                    f"range from {min_sizes} to {max_sizes} (for an input of "
                    f"{list(input.shape[non_spatial:])})"
                )
        return [o - m for o, m in zip(output_size, min_sizes)]

    def forward(self, input, output_size=None):
        n = self._n
        out_pad = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, n, self.dilation
        )
        fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
        return fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            out_pad,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C_in, L) inputs; weight (C_in, C_out/groups, k)."""

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C_in, H, W) inputs; weight
    (C_in, C_out/groups, kH, kW)."""

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W) inputs; weight
    (C_in, C_out/groups, kD, kH, kW)."""

    _n = 3
