"""Dropout layers (active only in training mode)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


def _dropout_layer(name: str, fn, doc: str, passes_inplace: bool = True) -> type:
    """The dropout layer `name` applying ``fn(input, p, training[, inplace])`` (the alpha
    dropouts take no `inplace`, as in PyTorch)."""
    if passes_inplace:

        def forward(self, input):
            """Zero elements of `input` with probability p while training; identity in eval."""
            return fn(input, self.p, self.training, self.inplace)
    else:

        def forward(self, input):
            """Zero elements of `input` with probability p while training; identity in eval."""
            return fn(input, self.p, self.training)

    return type(name, (_DropoutNd,), {"forward": forward, "__doc__": doc, "__module__": __name__})


Dropout = _dropout_layer(
    "Dropout",
    F.dropout,
    "Zero elements with probability p and scale the rest by 1/(1-p) while training.",
)
Dropout1d = _dropout_layer(
    "Dropout1d", F.dropout1d, "Zero whole channels of (N, C, L) inputs while training."
)
Dropout2d = _dropout_layer(
    "Dropout2d",
    F.dropout2d,
    "Zero whole channels of (N, C, H, W) inputs while training (a 3-D input is read as "
    "(N, C, L), with PyTorch's warning).",
)
Dropout3d = _dropout_layer(
    "Dropout3d",
    F.dropout3d,
    "Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs while training.",
)
AlphaDropout = _dropout_layer(
    "AlphaDropout",
    F.alpha_dropout,
    "Dropout that keeps the self-normalizing property of SELU networks (training only).",
    False,
)
FeatureAlphaDropout = _dropout_layer(
    "FeatureAlphaDropout",
    F.feature_alpha_dropout,
    "Alpha dropout of whole channels (training only).",
    False,
)
