"""Comparisons built from pointwise ops: isclose, allclose, equal."""
from __future__ import annotations

from .. import dtypes as dt
from .declare import IMPLICIT, declare
from .pointwise import _need_tensor


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|self - other| <= atol + rtol * |other|`` (infinities close only to
    themselves; NaN close to NaN only with `equal_nan`)."""
    _need_tensor("isclose", self)
    _need_tensor("isclose", other)
    if self._dtype is not other._dtype:
        raise RuntimeError(f"isclose(): expected both tensors to have the same dtype, got "
                           f"{self._dtype.name} and {other._dtype.name}")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"isclose(): rtol and atol must be non-negative, got rtol={rtol} and "
                           f"atol={atol}")
    equal = self.eq(other)
    if self._dtype is dt.bool or (rtol == 0 and atol == 0):
        return equal
    if not self._dtype.is_floating_point:
        # integer differences can overflow their dtype; compare in float64 as PyTorch's float math
        a, b = self.to(dt.float64), other.to(dt.float64)
    else:
        a, b = self, other
    diff = (a - b).abs()
    close = equal.logical_or(diff.isfinite().logical_and(diff.le(b.abs().mul(rtol).add(atol))))
    if equal_nan and self._dtype.is_floating_point:
        close = close.logical_or(self.isnan().logical_and(other.isnan()))
    return close


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element is `isclose` (a Python bool)."""
    return bool(_isclose(self, other, rtol, atol, equal_nan).all().item())


def _equal(self, other) -> bool:
    """True when both have the same shape and the same values (a Python bool)."""
    _need_tensor("equal", self)
    _need_tensor("equal", other)
    if self._shape != other._shape:
        return False
    return bool(self.eq(other).all().item())


def _declare_all() -> None:
    comp = dict(kind=IMPLICIT, family="comparison", out=False, differentiable=False)
    declare("isclose", impl=_isclose, **comp)
    declare("allclose", impl=_allclose, **comp)
    declare("equal", impl=_equal, **comp)


_declare_all()
