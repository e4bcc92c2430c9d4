"""Dropout of ``nn.functional``: a Bernoulli(1 - p) mask scaled by 1 / (1 - p); the feature
forms draw one mask value per (sample, channel); alpha dropout keeps SELU's mean and variance."""

from __future__ import annotations

import math
import warnings

from ...tensor.tensor import Tensor

__all__ = [
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]


def _check_p(name: str, p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"{name} probability has to be between 0 and 1, but got {p}")


def _apply_mask(input: Tensor, mask: Tensor, p: float, inplace: bool) -> Tensor:
    if p == 1.0:
        mask.zero_()
    else:
        mask.mul_(1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1 / (1 - p) (training only)."""
    _check_p("dropout", p)
    if not training or p == 0.0:
        return input
    mask = input.new_empty(input.shape).bernoulli_(1.0 - p)
    return _apply_mask(input, mask, p, inplace)


def _feature_dropout(
    name: str, input: Tensor, p: float, training: bool, inplace: bool, spatial: int
) -> Tensor:
    _check_p(name, p)
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
            f"received a {input.dim()}D input of shape {list(input.shape)}"
        )
    if not training or p == 0.0:
        return input
    keep = input.dim() - spatial
    mask_shape = tuple(input.shape[:keep]) + (1,) * spatial
    mask = input.new_empty(mask_shape).bernoulli_(1.0 - p)
    return _apply_mask(input, mask, p, inplace)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def _feature_noise(name: str, input: Tensor, p: float) -> Tensor:
    """A Bernoulli(1 - p) mask of shape (N, C, 1, ..., 1) for `input`."""
    if input.dim() < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return input.new_empty(shape).bernoulli_(1.0 - p)


def _rank_warning(name: str, dim: int, spatial: int) -> None:
    warnings.warn(
        f"{name}: Received a {dim}-D input to {name}, which is deprecated and will "
        f"result in an error in a future release. To retain the behavior and silence "
        f"this warning, please use dropout instead. Note that {name} exists to "
        f"provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
        f"channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or "
        f"{spatial + 2}D inputs).",
        stacklevel=3,
    )


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) inputs. As in PyTorch, a 3-D input is read as
    (N, C, L) (with a warning), and other ranks drop (N, C) entries (with a warning)."""
    _check_p("dropout", p)
    dim = input.dim()
    if dim not in (3, 4):
        _rank_warning("dropout2d", dim, 2)
    if dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
            "where C is the channel dim. This behavior will change in a future release "
            "to interpret the input as one without a batch dimension, i.e. shape (C, "
            "H, W). To maintain the 1D channel-wise dropout behavior, please switch to "
            "using dropout1d instead.",
            stacklevel=2,
        )
    if not training or p == 0.0 or input.numel() == 0:
        return input
    return _apply_mask(input, _feature_noise("dropout2d", input, p), p, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs (other ranks: PyTorch's
    warning, the input read as unbatched unless it is 5-D)."""
    _check_p("dropout", p)
    dim = input.dim()
    if dim not in (4, 5):
        _rank_warning("dropout3d", dim, 3)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    x = input if dim == 5 else input.unsqueeze(0)
    mask = _feature_noise("dropout3d", x, p)
    if dim != 5:
        mask = mask.squeeze(0)
    return _apply_mask(input, mask, p, inplace)


_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    _check_p("dropout", p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = (
        _feature_noise("feature_alpha_dropout", input, p)
        if feature
        else input.new_empty(input.shape).bernoulli_(1.0 - p)
    )
    a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME**2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
    scaled = keep * a
    if inplace:
        return input.mul_(scaled).add_(b)
    return input * scaled + b


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped elements become SELU's negative saturation value and
    an affine correction keeps mean 0 and variance 1."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels of (N, C, *) inputs."""
    return _alpha_dropout(input, p, training, inplace, True)
