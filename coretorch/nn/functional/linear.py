"""linear and convolutions of ``nn.functional`` (the ops are coretorch.linear / conv2d / conv1d)."""

from __future__ import annotations

from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["linear", "bilinear", "conv1d", "conv2d"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    return aten.linear(input, weight, bias)


@autocast_function("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_k = x1ᵀ W_k x2 + b_k for weight (out, in1, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input1 and input2 must have the same size except for the "
            f"last dimension, got {list(input1.shape)} and {list(input2.shape)}"
        )
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out_f, in1, in2 = weight.shape
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(lead) + (out_f,))


# PyTorch's functional signatures are the ops' own: the ops are the functions (their schemas hold
# the defaults)
conv1d = aten.conv1d.entry
conv2d = aten.conv2d.entry
