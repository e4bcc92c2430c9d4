"""InstanceNorm1d/2d/3d (affine and running statistics off by default, as PyTorch) and
LocalResponseNorm."""

from __future__ import annotations

import warnings

import numpy as np

from ...ops.factories_public import tensor
from .. import functional as F
from ._layer import subclass
from .batchnorm import _BatchNorm
from .module import Module

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "CrossMapLRN2d",
]


class _InstanceNorm(_BatchNorm):
    _spatial = 0

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _check_input_dim(self, input) -> None:
        n = self._spatial
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.dim() == self._spatial + 1
        feature_dim = input.dim() - self._spatial - 1
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match "
                    f"num_features ({self.num_features}), but got: "
                    f"{input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You "
                f"can silence this warning by not passing in num_features, which is "
                f"not used because affine=False",
                stacklevel=2,
            )
        if unbatched:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


_INPUTS = {
    1: "(N, C, L) or (C, L)",
    2: "(N, C, H, W) or (C, H, W)",
    3: "(N, C, D, H, W) or (C, D, H, W)",
}
InstanceNorm1d, InstanceNorm2d, InstanceNorm3d = (
    subclass(
        f"InstanceNorm{n}d",
        _InstanceNorm,
        f"Normalize each channel of each sample of {_INPUTS[n]} inputs.",
        __name__,
        _spatial=n,
    )
    for n in (1, 2, 3)
)


class LocalResponseNorm(Module):
    """Normalize each position by the activity of `size` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_windows(channels: int, size: int) -> np.ndarray:
    """(C, C) 0/1 matrix: row c marks the channels whose squares scale channel c in the legacy
    CrossMapLRN2d: [c - pre_pad + 1, c + pre_pad - 1] clipped to the channels, plus channel 0
    (its running-sum update never removes channel 0; kept for parity with PyTorch)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    for c in range(channels):
        lo, hi = max(0, c - pre_pad + 1), min(channels - 1, c + pre_pad - 1)
        m[c, lo : hi + 1] = 1
        m[c, 0] = 1
    return m


class CrossMapLRN2d(LocalResponseNorm):
    """Local response normalization across channels of (N, C, H, W) inputs, as the legacy
    Lua-torch layer computes it: x * (k + alpha / size * sum of squares)^-beta."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        windows = tensor(
            _cross_map_windows(input.shape[1], self.size), dtype=input.dtype, device=input.device
        )
        sums = input.pow(2).permute(0, 2, 3, 1).matmul(windows.t()).permute(0, 3, 1, 2)
        return input * (sums * (self.alpha / self.size) + self.k).pow(-self.beta)
