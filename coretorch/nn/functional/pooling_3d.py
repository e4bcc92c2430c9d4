"""3-D, fractional and power-average pooling of ``nn.functional`` and the ``*_with_indices``
forms (the pools are coretorch ops, `coretorch.ops.pooling_nd`; these add PyTorch's functional
signatures)."""

from __future__ import annotations

from ...ops import aten
from ...tensor.tensor import Tensor
from ._conv_args import ntuple
from .pooling import avg_pool1d, max_pool1d, power_average

__all__ = [
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

max_pool3d = aten.max_pool3d.entry
avg_pool3d = aten.avg_pool3d.entry


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """(values, indices) of 1-D max pooling."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """(values, flat H*W indices) of 2-D max pooling."""
    return aten.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """(values, flat D*H*W indices) of 3-D max pooling."""
    return aten.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def _sizes3(input: Tensor, output_size) -> tuple:
    """An int or a triple (None keeping that input size) as three ints."""
    if isinstance(output_size, int):
        return (output_size,) * 3
    if len(output_size) != 3:
        raise ValueError(f"output_size must be an int or a triple, got {output_size}")
    return tuple(
        int(s) if s is not None else int(input.shape[i - 3]) for i, s in enumerate(output_size)
    )


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to `output_size` bins (an int or a
    triple, None keeping that size)."""
    return aten.adaptive_avg_pool3d(input, _sizes3(input, output_size))


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(values, flat D*H*W indices) of adaptive 3-D max pooling."""
    return aten.adaptive_max_pool3d(input, _sizes3(input, output_size))


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive bins of (N, C, D, H, W) or (C, D, H, W) input; with `return_indices`
    also the flat indices."""
    res = adaptive_max_pool3d_with_indices(input, output_size)
    return res if return_indices else res[0]


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """(sum over each window of x^p)^(1/p) along the last dim."""
    (k,) = ntuple("lp_pool1d", "kernel_size", kernel_size, 1)
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return power_average(out, k, norm_type)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """(sum over each (kT, kH, kW) window of x^p)^(1/p)."""
    kd, kh, kw = ntuple("lp_pool3d", "kernel_size", kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return power_average(out, kd * kh * kw, norm_type)


def _fractional(n: int, input: Tensor, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if isinstance(output_ratio, (tuple, list)) and len(output_ratio) > n:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        output_size = [int(input.shape[-n + i] * ratio[i]) for i in range(n)]
    if _random_samples is None:
        batch = 1 if input.dim() == n + 1 else input.shape[0]
        _random_samples = aten.rand(
            (batch, input.shape[-n - 1], n), dtype=input.dtype, device=input.device
        )
    op = aten.fractional_max_pool2d if n == 2 else aten.fractional_max_pool3d
    return op(input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples=None,
) -> tuple[Tensor, Tensor]:
    """(values, flat H*W indices) of fractional max pooling (Graham, 2014) of (N, C, H, W) or
    (C, H, W) input to `output_size` (or `output_ratio` of the input size)."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples=None,
):
    """Fractional 2-D max pooling; with `return_indices` also the flat indices."""
    res = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return res if return_indices else res[0]


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples=None,
) -> tuple[Tensor, Tensor]:
    """(values, flat D*H*W indices) of fractional 3-D max pooling."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples=None,
):
    """Fractional 3-D max pooling; with `return_indices` also the flat indices."""
    res = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return res if return_indices else res[0]
