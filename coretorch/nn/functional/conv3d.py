"""conv3d of ``nn.functional``: a 3-D convolution written as one conv2d per kernel depth slice
(the depth positions of the output folded into the batch), summed. Gradients come from conv2d's.

A composite stand-in until a backend provides a native 3-D convolution."""

from __future__ import annotations

from typing import Any

from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...ops.nn_ops import check_conv_ranks
from ...tensor.tensor import Tensor
from ._conv_args import check_groups, explicit_padding, stride_dilation
from .padding import pad

__all__ = ["conv3d"]


def _check(op: str, input: Tensor, weight: Tensor, groups: int) -> None:
    check_conv_ranks(op, 3, input, weight, "out_channels, in_channels/groups, kD, kH, kW")
    check_groups(op, weight, groups)
    c_in = input.shape[-4]
    if c_in != weight.shape[1] * groups:
        raise RuntimeError(
            f"{op}(): Given groups={groups}, weight of size {list(weight.shape)}, "
            f"expected input{list(input.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {c_in} channels "
            f"instead"
        )


@autocast_function("conv3d")
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) inputs with a
    (C_out, C_in/groups, kD, kH, kW) weight; padding an int, a triple, "valid" or "same"."""
    _check("conv3d", input, weight, groups)
    s, d = stride_dilation("conv3d", stride, dilation, 3)
    k = tuple(weight.shape[2:])
    pads = explicit_padding("conv3d", padding, k, d, s)
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    hw_symmetric = pads[1][0] == pads[1][1] and pads[2][0] == pads[2][1]
    flat = [pads[0]] if hw_symmetric else list(pads)
    flat_pad = [p for lo_hi in reversed(flat) for p in lo_hi]
    if any(flat_pad):
        x = pad(x, flat_pad if not hw_symmetric else [0, 0, 0, 0] + flat_pad)
    conv_pad = (pads[1][0], pads[2][0]) if hw_symmetric else (0, 0)
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    span = d[0] * (k[0] - 1) + 1
    if depth < span or any(
        x.shape[3 + i] + 2 * conv_pad[i] < d[1 + i] * (k[1 + i] - 1) + 1 for i in range(2)
    ):
        raise RuntimeError(
            f"conv3d(): Calculated padded input size per channel is smaller than "
            f"the kernel (input {list(input.shape)}, kernel {list(k)}, dilation "
            f"{list(d)})"
        )
    d_out = (depth - span) // s[0] + 1
    xd = x.transpose(1, 2)  # (N, D, C, H, W): depth slices become batch entries
    out: Any = None
    for a in range(k[0]):
        start = a * d[0]
        sl = xd[:, start : start + s[0] * (d_out - 1) + 1 : s[0]]
        part = aten.conv2d(
            sl.reshape((n * d_out, c) + tuple(x.shape[3:])),
            weight[:, :, a],
            None,
            s[1:],
            conv_pad,
            d[1:],
            groups,
        )
        out = part if out is None else out + part
    out = out.reshape((n, d_out) + tuple(out.shape[1:])).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out if batched else out.squeeze(0)
