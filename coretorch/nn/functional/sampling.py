"""grid_sample and affine_grid of ``nn.functional`` (spatial transformer networks): the string
options mapped to the ``grid_sampler`` / ``affine_grid_generator`` ops."""

from __future__ import annotations

import warnings

from ...ops import aten
from ...ops.grid_sample import INTERPOLATION_MODES, PADDING_MODES
from ...tensor.tensor import Tensor

__all__ = ["grid_sample", "affine_grid"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to "
    "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
    "behavior is desired. See the documentation of grid_sample for details."
)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) or (N, C, D, H, W) `input` at the [-1, 1] positions of `grid`
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3); `mode` bilinear | nearest | bicubic,
    `padding_mode` zeros | border | reflection."""
    if mode not in INTERPOLATION_MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
            f"'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in PADDING_MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return aten.grid_sampler(
        input,
        grid,
        INTERPOLATION_MODES.index(mode),
        PADDING_MODES.index(padding_mode),
        align_corners,
    )


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps `theta` (N, 2, 3) or (N, 3, 4) for an output of
    `size` (N, C, H, W) or (N, C, D, H, W), for `grid_sample`."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    size = [int(s) for s in size]
    if align_corners and len(size) in (4, 5) and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size "
            "grids when align_corners=True. This is not an intended use case of "
            "affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    return aten.affine_grid_generator(theta, size, align_corners)
