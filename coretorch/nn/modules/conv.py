"""Conv1d and Conv2d layers (stride, padding incl. "same"/"valid", dilation, groups and the
zeros/reflect/replicate/circular padding modes)."""

from __future__ import annotations

from .. import functional as F
from ._factory import new_param, register_bias, reset_fan_in_uniform
from .module import Module

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(name: str, value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        if len(value) != n:
            raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


class _ConvNd(Module):
    _n = 0
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple("kernel_size", kernel_size, n)
        self.stride = _ntuple("stride", stride, n)
        self.dilation = _ntuple("dilation", dilation, n)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of ['valid', 'same']"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: str | tuple = padding
        else:
            self.padding = _ntuple("padding", padding, n)
        self.output_padding = (0,) * n
        self.transposed = self._transposed
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad order (last dim first) of the explicit padding, for non-zeros padding modes
        if isinstance(self.padding, str):
            rev = [0, 0] * n
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i], rev[2 * i + 1] = left, total - left
        else:
            rev = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        channels = (
            (in_channels, out_channels // groups)
            if self._transposed
            else (out_channels, in_channels // groups)
        )
        self.weight = new_param(channels + self.kernel_size, device, dtype)
        register_bias(self, (out_channels,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        n = self._n
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias):
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[self._n]
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) inputs; weight (C_out, C_in/groups, k)."""

    _n = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) inputs; weight (C_out, C_in/groups, kH, kW).

    Examples:
        >>> import coretorch
        >>> conv = coretorch.nn.Conv2d(3, 8, kernel_size=3, padding=1)
        >>> conv
        Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> conv(coretorch.zeros(2, 3, 16, 16)).shape
        coretorch.Size([2, 8, 16, 16])
        >>> coretorch.nn.Conv2d(3, 8, 3, stride=2)(coretorch.zeros(2, 3, 16, 16)).shape
        coretorch.Size([2, 8, 7, 7])
        >>> conv(coretorch.zeros(2, 4, 16, 16))
        Traceback (most recent call last):
            ...
        RuntimeError: conv2d(): Given groups=1, ... to have 3 channels, but got 4 channels instead
    """

    _n = 2
