"""Pooling functions of ``nn.functional`` (max/avg pooling are coretorch ops; the 1-d forms and
adaptive average pooling are written with them)."""

from __future__ import annotations

from ...ops import aten
from ...ops.pooling_nd import adaptive_mean
from ...tensor.tensor import Tensor

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "lp_pool2d",
]


def _single(name: str, v) -> int:
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{name}(): expected a single int or a 1-tuple, got {v}")
        return int(v[0])
    return int(v)


# PyTorch's functional signatures are the ops' own: the ops are the functions (their schemas hold
# the defaults)
max_pool2d = aten.max_pool2d.entry
avg_pool2d = aten.avg_pool2d.entry


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max over windows of the last dimension of (N, C, L) or (C, L) inputs."""
    k = _single("max_pool1d", kernel_size)
    s = k if stride is None or stride == [] else _single("max_pool1d", stride)
    res = aten.max_pool2d(
        input.unsqueeze(-2),
        (1, k),
        (1, s),
        (0, _single("max_pool1d", padding)),
        (1, _single("max_pool1d", dilation)),
        ceil_mode,
        return_indices,
    )
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over windows of the last dimension of (N, C, L) or (C, L) inputs."""
    k = _single("avg_pool1d", kernel_size)
    s = k if stride is None else _single("avg_pool1d", stride)
    out = aten.avg_pool2d(
        input.unsqueeze(-2),
        (1, k),
        (1, s),
        (0, _single("avg_pool1d", padding)),
        ceil_mode,
        count_include_pad,
    )
    return out.squeeze(-2)


def pair_output_size(name: str, output_size, h: int, w: int) -> tuple:
    """An adaptive 2-d pool's (out_h, out_w) from an int or a pair (None keeps that size)."""
    if isinstance(output_size, int):
        return output_size, output_size
    if len(output_size) != 2:
        raise ValueError(f"{name}(): output_size must be an int or a pair, got {output_size}")
    oh, ow = output_size
    return (h if oh is None else int(oh)), (w if ow is None else int(ow))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, H, W) or (C, H, W) to `output_size` (an int, a pair, or a pair
    with None keeping that size)."""
    if input.dim() not in (3, 4):
        raise ValueError(
            f"adaptive_avg_pool2d(): expected 3D or 4D input, got "
            f"{input.dim()}D input of shape {list(input.shape)}"
        )
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = pair_output_size("adaptive_avg_pool2d", output_size, h, w)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"adaptive_avg_pool2d(): elements of output_size must be greater than "
            f"0, got {output_size}"
        )
    if (oh, ow) == (1, 1):
        return input.mean((-2, -1), keepdim=True)
    if h % oh == 0 and w % ow == 0:
        kh, kw = h // oh, w // ow
        return aten.avg_pool2d(input, (kh, kw))
    # bins of an adaptive average are products of row and column ranges, so it separates
    return adaptive_mean(adaptive_mean(input, input.dim() - 2, oh), input.dim() - 1, ow)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, L) or (C, L) to `output_size` bins."""
    if input.dim() not in (2, 3):
        raise ValueError(f"adaptive_avg_pool1d(): expected 2D or 3D input, got {input.dim()}D")
    return adaptive_mean(input, input.dim() - 1, _single("adaptive_avg_pool1d", output_size))


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """(sum over the window of x^p)^(1/p)."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return power_average(out, kh * kw, norm_type)


def power_average(out: Tensor, window: int, norm_type: float) -> Tensor:
    """(window * mean of x^p)^(1/p) from the window means `out` of x^p (negative means clamped
    to 0 first, as PyTorch's lp_pool)."""
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)
