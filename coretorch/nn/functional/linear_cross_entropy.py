"""linear_cross_entropy of ``nn.functional``: cross entropy of a linear projection, as
PyTorch defines it (``cross_entropy(linear(input, linear_weight), target)``, with a
K-dimensional form when `linear_weight` is (C, d_1, ..., d_K, in_features))."""

from __future__ import annotations

import math

from ...tensor.tensor import Tensor
from .loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """Cross entropy between ``input @ linear_weightᵀ (+ linear_bias)`` and `target`.
    `options` (a LinearCrossEntropyOptions) selects PyTorch's chunked kernel there; the
    values are the same, and coretorch always computes them on the reference path."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            f"expected equal input and linear_weight last dimensions "
            f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
            f"respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(num_classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape "
            f"{tuple(linear_weight.shape)} requires batched input, (N, "
            f"{in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    rows = linear_weight.reshape(math.prod(linear_weight.shape[:-1]), in_features)
    logits = (input @ rows.transpose(0, 1)).reshape(logits_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(
        logits,
        target,
        weight=weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
