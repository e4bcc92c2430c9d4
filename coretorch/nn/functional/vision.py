"""pixel_shuffle, pixel_unshuffle and channel_shuffle of ``nn.functional``: pure reshapes and
permutations (views where possible)."""

from __future__ import annotations

from ...tensor.tensor import Tensor

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


def _check_factor(name: str, what: str, factor) -> int:
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' must be int, not {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")
    return factor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) -> (*, C, H r, W r): sub-pixel convolution's rearrangement."""
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got "
            f"input with {input.dim()} dimension(s)"
        )
    *lead_dims, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be "
            f"divisible by the square of upscale_factor, but input.size(-3)={c} "
            f"is not divisible by {r * r}"
        )
    lead = tuple(lead_dims)
    k = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r², H, W): the inverse of pixel_shuffle."""
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but "
            f"got input with {input.dim()} dimension(s)"
        )
    *lead_dims, c, h, w = input.shape
    if h % r or w % r:
        which = "height" if h % r else "width"
        size = h if h % r else w
        raise RuntimeError(
            f"pixel_unshuffle expects {which} to be divisible by "
            f"downscale_factor, but input.size({-2 if h % r else -1})={size} is "
            f"not divisible by {r}"
        )
    lead = tuple(lead_dims)
    k = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g·k, *) -> channels regrouped as (N, k·g, *) (ShuffleNet's channel shuffle)."""
    if input.dim() < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but "
            f"got input with {input.dim()} dimension(s)"
        )
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle
