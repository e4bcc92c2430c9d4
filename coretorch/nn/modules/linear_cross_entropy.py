"""LinearCrossEntropyLoss and LinearCrossEntropyOptions: a classifier head fused with its loss
(``F.linear_cross_entropy``), with PyTorch's parameters and state_dict keys."""

from __future__ import annotations

import dataclasses
import math

from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's settings of its chunked linear_cross_entropy kernel (batch chunk size,
    accumulation policy and dtype). coretorch accepts them and computes the same values on
    the reference path."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``linear(input)`` against `target`: a Linear(in_features,
    num_classes * prod(out_features)) head whose weight is read as (num_classes,
    *out_features, in_features)."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight=None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(
            in_features,
            math.prod(self.out_features, start=num_classes),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.options = options

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.reshape(shape + (self.linear.in_features,))
        linear_bias = self.linear.bias.reshape(shape) if self.linear.bias is not None else None
        return F.linear_cross_entropy(
            input,
            linear_weight,
            target,
            linear_bias=linear_bias,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
