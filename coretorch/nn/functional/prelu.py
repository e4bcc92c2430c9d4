"""prelu of ``nn.functional``: x where x > 0, else weight * x with one weight per channel."""

from __future__ import annotations

from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["prelu"]


@autocast_function("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Parametric ReLU; `weight` has one element or one per channel (dim 1 of `input`)."""
    n = weight.numel()
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                f"prelu: Mismatch of parameter numbers and input channel size. "
                f"Found parameter numbers = {n} and channel size = {channels}."
            )
        w = weight.reshape((1, n) + (1,) * (input.dim() - 2)) if input.dim() >= 2 else weight
    else:
        w = weight.reshape(())
    return aten.where(input > 0, input, w * input)
