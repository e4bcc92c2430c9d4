"""Spatial-transformer sampling: ``grid_sampler`` (``F.grid_sample``) and
``affine_grid_generator`` (``F.affine_grid``), as composites.

grid_sampler reads every output position's source coordinates from `grid` (x, y[, z] in
[-1, 1]), maps them to pixel coordinates exactly as PyTorch's CPU kernel does (unnormalize, then
clip or reflect for the border and reflection padding modes) and gathers the neighbouring input
values with their interpolation weights (2**d corners for bilinear/trilinear, the rounded
position for nearest, 4x4 taps of the cubic-convolution kernel with A = -0.75 for bicubic).
Out-of-range taps read zero. Gradients reach the input through the gathers and the grid through
the weights, as in PyTorch (nearest gives the grid none).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..tensor.impl import shape_numel
from .declare import declare, op_named as _op
from .factories_public import tensor as _tensor
from .meta_rules import common_device

__all__ = ["INTERPOLATION_MODES", "PADDING_MODES", "cubic_weights"]

INTERPOLATION_MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")


def cubic_weights(t, a: float = -0.75) -> list:
    """The four cubic-convolution weights of taps -1, 0, 1, 2 for fractional offsets `t`
    (arrays or tensors)."""

    def near(u):  # |u| <= 1
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u):  # 1 < |u| < 2
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    return [far(t + 1), near(t), near(1 - t), far((1 - t) + 1)]


# ---- grid_sampler ------------------------------------------------------------------------------


def _meta_grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    op = "grid_sampler"
    if input._dtype is not grid._dtype:
        raise RuntimeError(
            f"{op}(): expected input and grid to have same dtype, but input has "
            f"{input._dtype.name} and grid has {grid._dtype.name}"
        )
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected a floating-point input, got {input._dtype.name}")
    n = len(input._shape)
    if n not in (4, 5) or len(grid._shape) != n:
        raise RuntimeError(
            f"{op}(): expected 4D or 5D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input._shape)} and grid "
            f"with sizes {list(grid._shape)}"
        )
    if input._shape[0] != grid._shape[0]:
        raise RuntimeError(
            f"{op}(): expected grid and input to have same batch size, but got "
            f"input with sizes {list(input._shape)} and grid with sizes "
            f"{list(grid._shape)}"
        )
    if grid._shape[-1] != n - 2:
        raise RuntimeError(
            f"{op}(): expected grid to have size {n - 2} in last dimension, but "
            f"got grid with sizes {list(grid._shape)}"
        )
    for i in range(2, n):
        if input._shape[i] == 0:
            raise RuntimeError(
                f"{op}(): expected input to have non-empty spatial dimensions, "
                f"but input has sizes {list(input._shape)} with dimension {i} "
                f"being empty"
            )
    if interpolation_mode not in (0, 1, 2):
        raise RuntimeError(
            f"{op}(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 "
            f"(bicubic), got {interpolation_mode}"
        )
    if padding_mode not in (0, 1, 2):
        raise RuntimeError(
            f"{op}(): padding_mode must be 0 (zeros), 1 (border) or 2 "
            f"(reflection), got {padding_mode}"
        )
    if interpolation_mode == 2 and n != 4:
        raise RuntimeError(f"{op}(): bicubic interpolation only supports 4D input")
    shape = input._shape[:2] + grid._shape[1:-1]
    return (shape, input._dtype, common_device(op, input, grid))


def _unnormalize(coord, size: int, align_corners: bool):
    """[-1, 1] -> pixel coordinates (corner pixels' centres or their outer edges at +-1)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    """Reflect `coord` into [twice_low / 2, twice_high / 2] as often as it takes."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = coord.fmod(span)
    flips = (coord / span).floor()
    return _op("where")(flips.fmod(2) == 0, extra + low, span - extra + low)


def _pad_coordinates(coord, size: int, padding_mode: int, align_corners: bool):
    """PyTorch's compute_coordinates: border clips, reflection reflects then clips."""
    if padding_mode == 1:
        return coord.clamp(0, size - 1)
    if padding_mode == 2:
        coord = (
            _reflect(coord, 0, 2 * (size - 1))
            if align_corners
            else _reflect(coord, -1, 2 * size - 1)
        )
        return coord.clamp(0, size - 1)
    return coord


def _gather(flat, positions: list, sizes: tuple):
    """Input values at integer (float-valued) `positions` (one tensor per spatial dim, each
    of the output's spatial shape with the batch in front), zero where any is out of range:
    (values (N, C, *out), in-range mask (N, 1, *out))."""
    n, c = flat._shape[:2]
    out_shape = positions[0]._shape
    valid: Any = None
    index: Any = None
    for pos, size in zip(positions, sizes):
        ok = (pos >= 0) & (pos <= size - 1)
        valid = ok if valid is None else valid & ok
        term = pos.clamp(0, size - 1).to(dt.int64)
        index = term if index is None else index * size + term
    index = index.reshape(n, 1, -1).expand(n, c, shape_numel(out_shape[1:]))
    values = flat.gather(2, index).reshape((n, c) + out_shape[1:])
    return values, valid.unsqueeze(1)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """Sample `input` (N, C, *spatial) at the normalized positions of `grid` (N, *out, d):
    bilinear (trilinear in 3-D), nearest or bicubic; zeros, border or reflection padding."""
    sizes = tuple(input._shape[2:])
    d = len(sizes)
    flat = input.reshape(input._shape[0], input._shape[1], -1)
    # grid's last dim holds (x, y[, z]): x indexes the last spatial dim
    raw = [_unnormalize(grid.select(-1, d - 1 - i), sizes[i], align_corners) for i in range(d)]
    if interpolation_mode == 2:
        return _bicubic(flat, raw, sizes, padding_mode, align_corners)
    coords = [_pad_coordinates(r, s, padding_mode, align_corners) for r, s in zip(raw, sizes)]
    if interpolation_mode == 1:
        values, valid = _gather(flat, [c.round() for c in coords], sizes)
        return values * valid
    lows = [c.floor() for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=d):
        weight: Any = None
        for k, f in zip(corner, fracs):
            w = f if k else 1 - f
            weight = w if weight is None else weight * w
        values, valid = _gather(flat, [lo + k for lo, k in zip(lows, corner)], sizes)
        term = values * (weight.unsqueeze(1) * valid)
        out = term if out is None else out + term
    return out


def _bicubic(flat, raw: list, sizes: tuple, padding_mode: int, align_corners: bool):
    """4x4 taps around each position; each tap's coordinates are padded separately, as in
    PyTorch's get_value_bounded."""
    (iy, ix), (h, w) = raw, sizes
    y0, x0 = iy.floor(), ix.floor()
    wy, wx = cubic_weights(iy - y0), cubic_weights(ix - x0)
    out = None
    for i in range(4):
        ty = _pad_coordinates(y0 + (i - 1), h, padding_mode, align_corners).trunc()
        for j in range(4):
            tx = _pad_coordinates(x0 + (j - 1), w, padding_mode, align_corners).trunc()
            values, valid = _gather(flat, [ty, tx], sizes)
            term = values * ((wy[i] * wx[j]).unsqueeze(1) * valid)
            out = term if out is None else out + term
    return out


# ---- affine_grid_generator ---------------------------------------------------------------------


def _meta_affine_grid(theta, size, align_corners):
    if not theta._dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta._dtype}")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
            f"affine transforms, respectively. Got size {list(size)}."
        )
    d = len(size) - 2
    if len(theta._shape) != 3 or theta._shape[-2:] != (d, d + 1) or theta._shape[0] != size[0]:
        kind = (
            "2D affine matrices of shape Nx2x3" if d == 2 else "3D affine matrices of shape Nx3x4"
        )
        raise ValueError(
            f"Expected a batch of {kind} for size {list(size)}. Got {list(theta._shape)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    return ((size[0],) + size[2:] + (d,), theta._dtype, theta._device)


def _base_grid(spatial: tuple, align_corners: bool, ftype) -> np.ndarray:
    """(prod(spatial), d + 1) homogeneous coordinates (x, y[, z], 1) of every output pixel,
    x varying fastest."""
    axes = []
    for n in spatial:
        if n <= 1:
            axes.append(np.zeros(1, dtype=ftype))
            continue
        r = np.linspace(-1, 1, n, dtype=ftype)
        axes.append(r if align_corners else (r * ftype((n - 1) / n)).astype(ftype))
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]  # x first
    return np.stack(cols + [np.ones_like(cols[0])], axis=1)


def _affine_grid(theta, size, align_corners):
    """Sampling grid (N, *spatial, d) of the affine maps `theta` (N, d, d + 1) for an output of
    `size` (N, C, *spatial), in grid_sampler's [-1, 1] convention."""
    spatial = tuple(size[2:])
    ftype = np.float64 if theta._dtype is dt.float64 else np.float32
    base = _tensor(
        _base_grid(spatial, align_corners, ftype), dtype=theta._dtype, device=theta._device
    )
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape((size[0],) + spatial + (len(spatial),))


def _declare_all() -> None:
    fn: dict[str, Any] = dict(family="nn", method=False, out=False)
    declare(
        "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
        "bool align_corners) -> Tensor",
        _meta_grid_sampler,
        impl=_grid_sampler,
        **fn,
    )
    declare(
        "affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor",
        _meta_affine_grid,
        impl=_affine_grid,
        **fn,
    )


_declare_all()
