"""local_response_norm of ``nn.functional``: x / (k + alpha/n · Σ x² over n neighbouring
channels)^beta, the channel window sum taken by average pooling (as PyTorch)."""

from __future__ import annotations

from ...ops import aten
from ...tensor.tensor import Tensor
from .padding import pad

__all__ = ["local_response_norm"]


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalization across channels of (N, C, *) input (at least 3-D)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sizes = tuple(input.shape)
    div = (input * input).reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = aten.avg_pool2d(div, (size, 1), 1, 0, False, True, None).reshape(sizes)
    return input / (div * alpha + k).pow(beta)
