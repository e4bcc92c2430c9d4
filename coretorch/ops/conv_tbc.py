"""``conv_tbc``: 1-D convolution over (time, batch, channels) inputs (fairseq's layout), a
composite of conv1d."""

from __future__ import annotations

from .declare import declare, op_named as _op
from .meta_rules import common_device


def _meta_conv_tbc(self, weight, bias, pad):
    op = "conv_tbc"
    if len(self._shape) != 3:
        raise RuntimeError(
            f"{op}(): Input must have 3 dims: time, batch, in_channel, got {list(self._shape)}"
        )
    if len(weight._shape) != 3:
        raise RuntimeError(
            f"{op}(): Weight tensor must have 3 dims: kernel_width, in_channels, "
            f"out_channels, got {list(weight._shape)}"
        )
    if len(bias._shape) != 1:
        raise RuntimeError(f"{op}(): Bias must be 1-D, got {list(bias._shape)}")
    k, c_in, c_out = weight._shape
    if self._shape[2] != c_in:
        raise RuntimeError(
            f"{op}(): Input dim 2 (input channels) is not == dim 1 in the weight "
            f"tensor ({self._shape[2]} vs {c_in})"
        )
    if bias._shape[0] != c_out:
        raise RuntimeError(
            f"{op}(): Bias size must equal dim 2 in the weight tensor (output "
            f"channels): {bias._shape[0]} vs {c_out}"
        )
    if pad < 0:
        raise RuntimeError(f"{op}(): pad must be non-negative, got {pad}")
    t_out = self._shape[0] + 2 * pad - k + 1
    if t_out < 0:
        raise RuntimeError(
            f"{op}(): the kernel ({k}) is longer than the padded input ({self._shape[0] + 2 * pad})"
        )
    if self._dtype is not weight._dtype or self._dtype is not bias._dtype:
        raise RuntimeError(
            f"{op}(): expected input, weight and bias of one dtype, got "
            f"{self._dtype.name}, {weight._dtype.name} and {bias._dtype.name}"
        )
    return ((t_out, self._shape[1], c_out), self._dtype, common_device(op, self, weight, bias))


def _conv_tbc(self, weight, bias, pad):
    """Convolve (T, B, C_in) input with a (kW, C_in, C_out) kernel plus bias, padding `pad`
    steps at both ends of time: (T + 2 pad - kW + 1, B, C_out)."""
    out = _op("conv1d")(self.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)


declare(
    "conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor",
    _meta_conv_tbc,
    impl=_conv_tbc,
    family="nn",
    method=False,
    out=False,
)
