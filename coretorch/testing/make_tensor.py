"""Deterministic test tensors: `make_tensor` and the `Maker` the OpInfo sample functions use."""

from __future__ import annotations

import zlib
from typing import Sequence

import numpy as np

from .. import dtypes as _dt
from ..tensor.impl import shape_numel

__all__ = ["make_tensor", "Maker", "LAYOUTS", "stable_rng", "same_layout_copy"]

# how a sample tensor is laid out in memory: a non-contiguous layout has the same values as the
# contiguous one but other strides ("expanded" also repeats values along broadcast dims)
LAYOUTS = ("contiguous", "transposed", "sliced", "expanded")


def stable_rng(*key) -> np.random.Generator:
    """A numpy generator seeded from `key` (strings/ints), identical in every process."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _values(rng: np.random.Generator, shape: tuple, dtype, low, high) -> np.ndarray:
    if dtype is _dt.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.is_floating_point or dtype.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        if dtype.is_complex:  # both parts in [low, high), as torch.testing.make_tensor
            return (rng.uniform(lo, hi, size=shape) + 1j * rng.uniform(lo, hi, size=shape)).astype(
                dtype.numpy
            )
        return rng.uniform(lo, hi, size=shape).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    lo = max(info.min, -9 if low is None else int(np.ceil(low)))
    hi = min(int(info.max) + 1, 10 if high is None else int(np.ceil(high)))
    if hi <= lo:
        hi = lo + 1
    return rng.integers(lo, hi, size=shape).astype(dtype.numpy)


def _place(arr: np.ndarray, dtype, device, layout: str):
    """A tensor with `arr`'s values on `device` in `layout` (see LAYOUTS)."""
    from ..ops.factories_public import tensor

    if layout == "contiguous" or arr.ndim == 0 or arr.size == 0 and layout != "sliced":
        return tensor(arr, dtype=dtype, device=device)
    if layout == "transposed":
        order = tuple(range(arr.ndim - 1, -1, -1))
        t = tensor(np.ascontiguousarray(arr.transpose(order)), dtype=dtype, device=device)
        return t.permute(order)
    if layout == "sliced":
        wide = np.repeat(arr, 2, axis=-1)
        t = tensor(wide, dtype=dtype, device=device)
        return t.slice(arr.ndim - 1, 0, None, 2)
    if layout == "expanded":
        # keep the first row of dim 0 and broadcast it: values repeat along dim 0
        t = tensor(np.ascontiguousarray(arr[:1]), dtype=dtype, device=device)
        return t.expand(arr.shape)
    raise ValueError(f"make_tensor(): unknown layout {layout!r}; expected one of {LAYOUTS}")


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    layout: str | None = None,
    seed: int = 0,
):
    """A tensor of `shape` with deterministic values in [low, high) (as torch.testing.make_tensor;
    defaults [-9, 9) for floats, [-9, 10) for ints). `layout` picks a non-contiguous memory
    layout from LAYOUTS (``noncontiguous=True`` means "sliced")."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    rng = stable_rng("make_tensor", shape, dtype.name, low, high, seed)
    return Maker(device, dtype, rng).make(
        shape,
        low=low,
        high=high,
        requires_grad=requires_grad,
        layout=layout or ("sliced" if noncontiguous else "contiguous"),
        exclude_zero=exclude_zero,
    )


class Maker:
    """Builds the tensors of one sample stream: fixed device/dtype, values from one generator, so
    the same calls give the same values on every device."""

    def __init__(self, device, dtype, rng: np.random.Generator, requires_grad: bool = False):
        self.device, self.dtype, self.rng, self.requires_grad = device, dtype, rng, requires_grad

    def make(
        self,
        shape: Sequence[int],
        *,
        dtype=None,
        low=None,
        high=None,
        layout: str = "contiguous",
        requires_grad: bool | None = None,
        exclude_zero: bool = False,
        values=None,
    ):
        """A tensor of `shape` (values drawn, or `values` given) in `layout`."""
        dtype = dtype or self.dtype
        shape = tuple(shape)
        if values is None:
            arr = _values(self.rng, shape, dtype, low, high)
        else:
            arr = np.asarray(values, dtype=dtype.numpy).reshape(shape)
        if exclude_zero:
            arr = np.where(arr == 0, np.ones((), dtype.numpy), arr)
        t = _place(arr, dtype, self.device, layout)
        rg = self.requires_grad if requires_grad is None else requires_grad
        if rg and (dtype.is_floating_point or dtype.is_complex):
            t.requires_grad_(True)
        return t

    def index(self, shape: Sequence[int], high: int, *, unique_along: int | None = None):
        """An int64 index tensor of `shape` with values in [0, high); `unique_along` makes the
        values distinct along that dim (needs shape[dim] <= high) so scatters have no races."""
        shape = tuple(shape)
        if unique_along is None:
            arr = self.rng.integers(0, high, size=shape) if high > 0 else np.zeros(shape, np.int64)
        else:
            d = unique_along
            n = shape[d]
            moved = shape[:d] + shape[d + 1 :]
            rows = [self.rng.permutation(high)[:n] for _ in range(shape_numel(moved))]
            arr = np.moveaxis(np.array(rows, dtype=np.int64).reshape(moved + (n,)), -1, d)
        return _place(np.asarray(arr, np.int64), _dt.int64, self.device, "contiguous")

    def mask(self, shape: Sequence[int]):
        """A bool tensor of `shape`."""
        arr = self.rng.integers(0, 2, size=tuple(shape)).astype(np.bool_)
        return _place(arr, _dt.bool, self.device, "contiguous")


def same_layout_copy(t, device=None):
    """A detached copy of `t` with `t`'s strides (on `device` if given), so kernels meet the
    same non-contiguous layout as on the original."""
    from ..ops import REGISTRY

    c = REGISTRY["empty_strided"].op(
        t._shape, t._stride, dtype=t._dtype, device=t._device if device is None else device
    )
    return c.copy_(t.detach())
