"""interpolate / upsample of ``nn.functional``: nearest, nearest-exact, (bi/tri)linear, bicubic
and area resampling of (N, C, *spatial) inputs.

The resampling is separable, so each spatial dim is resampled in turn by `index_select` of the
source positions and a weighted sum; the source positions and weights are computed on the host
exactly as PyTorch's CPU kernels compute them (float32 for nearest, the input's precision for
the interpolating modes), and gradients come from index_select. A composite stand-in until a
backend provides native resampling kernels.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import dtypes as _dt
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...ops.grid_sample import cubic_weights
from ...tensor.tensor import Tensor
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _np_float(dtype):
    return np.float64 if dtype is _dt.float64 else np.float32


def _index(values: np.ndarray, device) -> Tensor:
    return _tensor(values.astype(np.int64), dtype=_dt.int64, device=device)


def _weights(values: np.ndarray, x: Tensor, dim: int) -> Tensor:
    """Per-output weights shaped to broadcast along `dim` of `x`."""
    shape = [1] * x.dim()
    shape[dim] = values.size
    return _tensor(values.reshape(shape), dtype=x.dtype, device=x.device)


def _nearest_1d(x: Tensor, dim: int, out: int, scale: float | None, exact: bool) -> Tensor:
    size = x.shape[dim]
    dst = np.arange(out, dtype=np.float32)
    if out == size and not exact:
        src = np.arange(out)
    elif out == 2 * size and not exact:
        src = np.arange(out) >> 1
    else:
        s = (
            np.float32(1.0 / scale)
            if scale is not None and scale > 0
            else np.float32(size) / np.float32(out)
        )
        pos = (dst + np.float32(0.5)) * s if exact else dst * s
        src = np.minimum(np.floor(pos).astype(np.int64), size - 1)
    return x.index_select(dim, _index(src, x.device))


def _source_positions(
    size: int, out: int, scale: float | None, align_corners: bool, cubic: bool, ftype
) -> np.ndarray:
    """PyTorch's area_pixel_compute_source_index for every output position."""
    dst = np.arange(out, dtype=ftype)
    if align_corners:
        s = ftype(size - 1) / ftype(out - 1) if out > 1 else ftype(0)
        return s * dst
    s = ftype(1.0 / scale) if scale is not None and scale > 0 else ftype(size) / ftype(out)
    src = s * (dst + ftype(0.5)) - ftype(0.5)
    return src if cubic else np.maximum(src, ftype(0))


def _base_and_fraction(
    x: Tensor, dim: int, out: int, scale: float | None, align_corners: bool, cubic: bool
) -> tuple:
    """(first source index, fractional offset, float type) per output position, clamped as in
    PyTorch's guard_index_and_lambda."""
    size = x.shape[dim]
    ftype = _np_float(x.dtype)
    real = _source_positions(size, out, scale, align_corners, cubic, ftype)
    base = np.minimum(np.floor(real).astype(np.int64), size - 1)
    return base, np.clip(real - base.astype(ftype), 0, 1).astype(ftype), ftype


def _linear_1d(x: Tensor, dim: int, out: int, scale: float | None, align_corners: bool) -> Tensor:
    size = x.shape[dim]
    i0, lam1, ftype = _base_and_fraction(x, dim, out, scale, align_corners, False)
    lam0 = (ftype(1) - lam1).astype(ftype)
    i1 = np.where(i0 < size - 1, i0 + 1, i0)
    a = x.index_select(dim, _index(i0, x.device))
    b = x.index_select(dim, _index(i1, x.device))
    return a * _weights(lam0, x, dim) + b * _weights(lam1, x, dim)


def _cubic_1d(x: Tensor, dim: int, out: int, scale: float | None, align_corners: bool) -> Tensor:
    size = x.shape[dim]
    base, t, ftype = _base_and_fraction(x, dim, out, scale, align_corners, True)
    res: Any = None
    for k, w in enumerate(cubic_weights(t)):
        idx = np.clip(base - 1 + k, 0, size - 1)
        term = x.index_select(dim, _index(idx, x.device)) * _weights(w.astype(ftype), x, dim)
        res = term if res is None else res + term
    return res


def _per_dim(input: Tensor, value, convert, words: tuple) -> list:
    """`value` (one number, or a sequence of one per spatial dim) as a list of one per spatial
    dim; `words` name it in PyTorch's message for a sequence of the wrong length."""
    dim = input.dim() - 2
    if not isinstance(value, (list, tuple)):
        return [convert(value)] * dim
    if len(value) != dim:
        what, got, given, fmt = words
        raise ValueError(
            f"Input and {what} must have the same number of spatial dimensions, but "
            f"got input with spatial dimensions of {list(input.shape[2:])} and "
            f"{got} {value}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
            f"format and {given} in {fmt} format."
        )
    return [convert(v) for v in value]


def _output_sizes(input: Tensor, size, scale_factor, recompute_scale_factor, mode: str):
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = _per_dim(
            input,
            size,
            lambda v: v,
            ("output", "output size of", "output size", "(o1, o2, ...,oK)"),
        )
        if isinstance(size, (list, tuple)) and not all(
            isinstance(v, int) and not isinstance(v, bool) for v in size
        ):
            raise TypeError(
                f"expected size to be one of int or Tuple[int] or Tuple[int, "
                f"int] or Tuple[int, int, int], but got size with types "
                f"{[type(v) for v in size]}"
            )
        out = [int(v) for v in out]
        scales = [None] * dim
    elif scale_factor is not None:
        scales = _per_dim(
            input,
            scale_factor,
            float,
            ("scale_factor", "scale_factor of shape", "scale_factor", "(s1, s2, ...,sK)"),
        )
        out = [int(math.floor(input.shape[2 + i] * scales[i])) for i in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = [None] * dim
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"interpolate(): Input and output sizes should be greater than 0, but "
            f"got input (spatial {list(input.shape[2:])}) and output "
            f"(spatial {out})"
        )
    return out, scales


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size`
    or by `scale_factor` with `mode` nearest | nearest-exact | linear | bilinear | bicubic |
    trilinear | area."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if mode not in _MODES:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: nearest | linear | bilinear "
            f"| bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError(
                "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                "modes and requires a 4-D tensor as input"
            )
        raise NotImplementedError("interpolate(): antialias=True is not supported by coretorch yet")
    if input.dim() not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: nearest | linear | bilinear "
            f"| bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    want = _LINEAR_RANK.get(mode)
    if want is not None and input.dim() != want:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want}D input")
    out, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if mode == "area":
        if input.dim() == 3:
            return adaptive_avg_pool1d(input, out[0])
        if input.dim() == 4:
            return adaptive_avg_pool2d(input, out)
        return aten.adaptive_avg_pool3d(input, out)
    x = input
    for i in range(input.dim() - 3, -1, -1):
        dim = 2 + i
        if mode in ("nearest", "nearest-exact"):
            x = _nearest_1d(x, dim, out[i], scales[i], mode == "nearest-exact")
        elif mode == "bicubic":
            x = _cubic_1d(x, dim, out[i], scales[i], bool(align_corners))
        else:
            x = _linear_1d(x, dim, out[i], scales[i], bool(align_corners))
    return x


def upsample(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of `interpolate`."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
