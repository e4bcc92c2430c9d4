"""combinations, isin, unravel_index, dist, renorm, scalar_tensor and fill: small
composites of existing ops (gradients through them where differentiable)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import EXPLICIT, IMPLICIT, declare, op_named as _op
from .meta_rules import float_result, resolve_device

_T = TensorImpl


# ---- combinations, isin, unravel_index ------------------------------------------------------


def _meta_combinations(self, r, with_replacement):
    if len(self._shape) != 1:
        raise RuntimeError(f"combinations(): Expect a 1D vector, but got shape {list(self._shape)}")
    if r < 0:
        raise RuntimeError(f"combinations(): Expect a non-negative number, but got {r}")
    n = self._shape[0]
    count = (math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)) if r else 0
    return ((count, r) if r else (0,), self._dtype, self._device)


def _combinations(self, r, with_replacement):
    """The length-`r` combinations of the elements of the 1-D `self`, one per row, in
    itertools order (``with_replacement``: elements may repeat)."""
    shape = _meta_combinations(self, r, with_replacement)[0]
    if not r:
        return self.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(self._shape[0]), r))
    from .factories_public import tensor

    index = tensor(rows, dtype=dt.int64, device=self._device).reshape(shape)
    return self.index_select(0, index.reshape(-1)).reshape(shape)


def _meta_isin(elements, test_elements, assume_unique, invert):
    if not isinstance(elements, _T) and not isinstance(test_elements, _T):
        raise TypeError(
            "isin(): expected at least one of elements and test_elements to be a Tensor"
        )
    ref = elements if isinstance(elements, _T) else test_elements
    shape = elements._shape if isinstance(elements, _T) else ()
    return (shape, dt.bool, ref._device)


def _isin(elements, test_elements, assume_unique, invert):
    """For each element, whether it occurs in `test_elements` (the opposite with `invert`)."""
    shape, _, device = _meta_isin(elements, test_elements, assume_unique, invert)
    full = _op("full")
    if not isinstance(elements, _T):
        elements = full((), elements, device=device)
    if not isinstance(test_elements, _T):
        test_elements = full((1,), test_elements, device=device)
    hit = elements.unsqueeze(-1).eq(test_elements.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def _meta_unravel_index(indices, shape):
    if indices._dtype.is_floating_point or indices._dtype is dt.bool:
        raise TypeError(
            f"unravel_index(): expected 'indices' to be integer dtype, but got "
            f"{indices._dtype.name}"
        )
    if any(n < 0 for n in shape):
        raise ValueError(
            f"unravel_index(): 'shape' cannot have negative values, but got {tuple(shape)}"
        )
    return [(indices._shape, dt.int64, indices._device) for _ in shape]


def _unravel_index(indices, shape):
    """The coordinates, one tensor per dim of `shape`, of the flat `indices` into a tensor of
    that shape (row-major)."""
    _meta_unravel_index(indices, shape)
    flat = indices.to(dt.int64)
    coords = []
    for n in reversed(shape):
        coords.append(flat.remainder(n) if n else flat)
        flat = flat.div(n, rounding_mode="floor") if n else flat
    return tuple(reversed(coords))


# ---- dist, renorm ---------------------------------------------------------------------------


def _dist(self, other, p):
    """The p-norm of ``self - other`` (broadcast)."""
    return (self - other).norm(p)


def _meta_renorm(self, p, dim, maxnorm):
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"renorm(): expected a floating-point tensor, got {self._dtype.name}")
    if p < 0:
        raise RuntimeError(f"renorm(): non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm(): expected maxnorm to be >= 0 but got {maxnorm}")
    return (self._shape, self._dtype, self._device)


def _renorm(self, p, dim, maxnorm):
    """Each slice along `dim` scaled down to p-norm `maxnorm` where its norm exceeds it (by
    maxnorm / (norm + 1e-7), as PyTorch)."""
    dims = [d for d in range(len(self._shape)) if d != dim]
    norm = self.norm(p, dims, keepdim=True) if dims else self.abs()
    scale = _op("where")(norm.gt(maxnorm), maxnorm / (norm + 1e-7), 1.0)
    return self * scale


# ---- scalar_tensor, fill ----------------------------------------------------------

_FA = (
    "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool requires_grad=False, bool pin_memory=False"
)


def _meta_scalar_tensor(s, dtype, layout, device, requires_grad, pin_memory):
    return ((), dt.get_default_dtype() if dtype is None else dtype, resolve_device(device))


def _scalar_tensor(s, dtype, layout, device, requires_grad, pin_memory):
    """A 0-d tensor holding `s` (the default float dtype unless `dtype` is given)."""
    shape, dtype, dev = _meta_scalar_tensor(s, dtype, layout, device, requires_grad, pin_memory)
    return _op("full")(shape, s, dtype=dtype, device=dev, requires_grad=requires_grad)


def _meta_fill(self, value):
    if isinstance(value, _T) and value._shape:
        raise RuntimeError(
            f"fill(): only supports 0-dimension value tensor but got tensor "
            f"with {len(value._shape)} dimensions."
        )
    return (self._shape, self._dtype, self._device)


def _fill(self, value):
    """A tensor like `self` filled with `value` (the functional ``fill_``)."""
    # where, not a new tensor: the result stays in self's graph (a zero gradient), as PyTorch's
    everywhere = _op("ones_like")(self, dtype=dt.bool)
    if not isinstance(value, _T):
        value = _op("full")((), value, dtype=self._dtype, device=self._device)
    return _op("where")(everywhere, value.to(self._dtype), self)


def _declare_all() -> None:
    comp: dict[str, Any] = dict(kind=IMPLICIT, out=False)
    declare(
        "combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",
        _meta_combinations,
        impl=_combinations,
        family="shape",
        method=False,
        **comp,
    )
    declare(
        "isin(Tensor|Scalar elements, Tensor|Scalar test_elements, *, "
        "bool assume_unique=False, bool invert=False) -> Tensor",
        _meta_isin,
        impl=_isin,
        family="searching",
        method=False,
        differentiable=False,
        **comp,
    )
    declare(
        "unravel_index(Tensor indices, int[] shape) -> Tensor[]",
        _meta_unravel_index,
        impl=_unravel_index,
        family="indexing",
        method=False,
        differentiable=False,
        **comp,
    )
    declare(
        "dist(Tensor self, Tensor other, Scalar p=2) -> Tensor",
        lambda self, other, p: ((), float_result(self._dtype), self._device),
        impl=_dist,
        family="reduction",
        **comp,
    )
    declare(
        "renorm(Tensor self, Scalar p, Dim dim, Scalar maxnorm) -> Tensor",
        _meta_renorm,
        impl=_renorm,
        family="reduction",
        inplace=True,
        **comp,
    )
    fac: dict[str, Any] = dict(
        kind=EXPLICIT, method=False, out=False, family="factory", differentiable=False
    )
    declare(
        f"scalar_tensor(Scalar s, *, {_FA}) -> Tensor",
        _meta_scalar_tensor,
        impl=_scalar_tensor,
        **fac,
    )
    declare(
        "fill(Tensor self, Tensor|Scalar value) -> Tensor",
        _meta_fill,
        impl=_fill,
        family="factory",
        **comp,
    )


_declare_all()
