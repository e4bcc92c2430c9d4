"""pad of ``nn.functional``: constant, reflect, replicate and circular modes, built from slices,
flips and cat so autograd and every backend work."""

from __future__ import annotations

import numpy as np

from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...tensor.tensor import Tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _resized(x: Tensor, dim: int, n: int) -> tuple:
    """`x`'s shape with dimension `dim` of size `n`."""
    shape = list(x.shape)
    shape[dim] = n
    return tuple(shape)


def _pad_dim(x: Tensor, dim: int, left: int, right: int, mode: str, value: float) -> Tensor:
    size = x.shape[dim]
    if mode == "constant":
        if left < 0:
            x, size, left = x.narrow(dim, -left, size + left), size + left, 0
        if right < 0:
            x, right = x.narrow(dim, 0, size + right), 0
        lo, hi = (
            aten.full(_resized(x, dim, n), value, dtype=x.dtype, device=x.device) if n else None
            for n in (left, right)
        )
    elif mode == "circular" and (left < 0 or right < 0):
        # PyTorch crops first and wraps around what is left
        x = x.narrow(dim, max(-left, 0), size - max(-left, 0) - max(-right, 0))
        return _pad_dim(x, dim, max(left, 0), max(right, 0), mode, value)
    elif left < 0 or right < 0:
        return _pad_by_index(x, dim, left, right, mode)
    elif mode == "reflect":
        if left >= size or right >= size:
            raise RuntimeError(
                f"pad(): Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension "
                f"{dim} of input {list(x.shape)}"
            )
        lo = x.narrow(dim, 1, left).flip((dim,)) if left else None
        hi = x.narrow(dim, size - 1 - right, right).flip((dim,)) if right else None
    elif mode == "replicate":
        if size == 0:
            raise RuntimeError("pad(): replicate padding of an empty dimension")
        lo = x.narrow(dim, 0, 1).expand(_resized(x, dim, left)) if left else None
        hi = x.narrow(dim, size - 1, 1).expand(_resized(x, dim, right)) if right else None
    else:
        if left > size or right > size:
            raise RuntimeError(
                f"pad(): Padding value causes wrapping around more than once "
                f"(padding ({left}, {right}) for size {size})"
            )
        lo = x.narrow(dim, size - left, left) if left else None
        hi = x.narrow(dim, 0, right) if right else None
    pieces = [p for p in (lo, x, hi) if p is not None]
    return aten.cat(pieces, dim) if len(pieces) > 1 else x


def _source_index(size: int, left: int, right: int, mode: str) -> np.ndarray:
    """For each output position along a padded dim, the input position it reads (PyTorch's
    index rule for replicate and reflect; negative pads crop)."""
    i = np.arange(size + left + right) - left
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    i = np.abs(i)  # reflect about the first element, then about the last
    return np.where(i >= size, 2 * (size - 1) - i, i)


def _pad_by_index(x: Tensor, dim: int, left: int, right: int, mode: str) -> Tensor:
    """Replicate or reflect pads with a negative one: one index_select by the mode's rule."""
    size = x.shape[dim]
    if size + left + right < 0 or size == 0:
        raise RuntimeError(
            f"pad(): padding ({left}, {right}) at dimension {dim} of input "
            f"{list(x.shape)} leaves a negative or empty size"
        )
    if mode == "reflect" and (left >= size or right >= size):
        raise RuntimeError(
            f"pad(): Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({left}, {right}) at dimension "
            f"{dim} of input {list(x.shape)}"
        )
    index = _tensor(_source_index(size, left, right, mode), device=x.device)
    return x.index_select(dim, index)


def pad(
    input: Tensor,
    pad: "list[int] | tuple[int, ...]",
    mode: str = "constant",
    value: float | None = None,
) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions: ``pad = (left_last, right_last, left_prev,
    right_prev, ...)``. Negative padding crops (in every mode)."""
    if mode not in _MODES:
        raise NotImplementedError(
            f"pad(): Unrecognised padding mode {mode}; expected one of {list(_MODES)}"
        )
    if len(pad) % 2:
        raise RuntimeError("pad(): Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            f"pad(): Padding length should be less than or equal to two times the "
            f"input dimension but got padding length {len(pad)} and input of "
            f"dimension {input.dim()}"
        )
    if mode != "constant" and value not in (None, 0):
        raise RuntimeError(f'pad(): Padding mode "{mode}" doesn\'t take in value argument')
    value = 0.0 if value is None else value
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        if left or right:
            out = _pad_dim(out, dim, left, right, mode, value)
    return out
