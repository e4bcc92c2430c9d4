"""Dropout of ``nn.functional``: a Bernoulli(1 - p) mask scaled by 1 / (1 - p)."""
from __future__ import annotations

from ...tensor.tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d"]


def _check_p(name: str, p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"{name} probability has to be between 0 and 1, but got {p}")


def _apply_mask(input: Tensor, mask: Tensor, p: float, inplace: bool) -> Tensor:
    if p == 1.0:
        mask.zero_()
    else:
        mask.mul_(1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1 / (1 - p) (training only)."""
    _check_p("dropout", p)
    if not training or p == 0.0:
        return input
    mask = input.new_empty(input.shape).bernoulli_(1.0 - p)
    return _apply_mask(input, mask, p, inplace)


def _feature_dropout(name: str, input: Tensor, p: float, training: bool, inplace: bool,
                     spatial: int) -> Tensor:
    _check_p(name, p)
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                           f"received a {input.dim()}D input of shape {list(input.shape)}")
    if not training or p == 0.0:
        return input
    keep = input.dim() - spatial
    mask_shape = tuple(input.shape[:keep]) + (1,) * spatial
    mask = input.new_empty(mask_shape).bernoulli_(1.0 - p)
    return _apply_mask(input, mask, p, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs."""
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)

