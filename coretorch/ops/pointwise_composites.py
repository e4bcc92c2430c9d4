"""Elementwise composites: ops written with the primitives of `pointwise.py`, so a backend gets
them without implementing anything (it may still register a faster kernel for one).

Each has a meta rule (it validates, and gives the output spec a backend's own kernel would
fill); an explicit derivative only where the decomposition would differentiate wrongly or
wastefully (clamp's boundaries, fmax's NaN rule, logaddexp's stability, ...).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import dtypes as dt
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare
from .meta_rules import broadcast_shapes, common_device, float_result, promote, refuse_complex
from .pointwise import binary_meta, binary_spec, flops_pointwise

__all__ = ["where"]

_T = Tensor


def where(cond, a, b):
    """``coretorch.where`` (looked up when called)."""
    return REGISTRY["where"].op.entry(cond, a, b)


def _same(self):
    return (self._shape, self._dtype, self._device)


def _float(self):
    return (self._shape, float_result(self._dtype), self._device)


def _bool(self):
    return (self._shape, dt.bool, self._device)


# ---- unary ------------------------------------------------------------------------------------


def _meta_frac(self):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"frac(): not implemented for '{self._dtype.name}'; expected a floating point tensor"
        )
    return _same(self)


def _frac(self):
    """self - trunc(self) (floats only)."""
    return self - self.trunc()


def _meta_square(self):
    return (self._shape, dt.int64 if self._dtype is dt.bool else self._dtype, self._device)


def _square(self):
    """self * self (bool squares to int64, as in PyTorch)."""
    x = self.to(dt.int64) if self._dtype is dt.bool else self
    return x * x


def _meta_positive(self):
    if self._dtype is dt.bool:
        raise RuntimeError("positive(): The `+` operator, on a bool tensor is not supported.")
    return _same(self)


def _positive(self):
    """self itself (``+t``)."""
    return self


def _exp2(self):
    """2 ** self."""
    return REGISTRY["pow"].op.entry(
        2.0, self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    )


def _rsqrt(self):
    """1 / sqrt(self)."""
    return self.sqrt().reciprocal()


def _reciprocal(self):
    """1 / self (in a float dtype)."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    return x.new_ones(()).div(x)


def _isnan(self):
    """self != self (False for integer and bool tensors)."""
    return self.ne(self)


def _isinf(self):
    """|self| == inf."""
    if not self._dtype.is_floating_point:
        return self.new_zeros(self._shape, dtype=dt.bool)
    return self.abs().eq(math.inf)


def _isposinf(self):
    """True where an element of `input` is +inf."""
    return (
        self.eq(math.inf)
        if self._dtype.is_floating_point
        else self.new_zeros(self._shape, dtype=dt.bool)
    )


def _isneginf(self):
    """True where an element of `input` is -inf."""
    return (
        self.eq(-math.inf)
        if self._dtype.is_floating_point
        else self.new_zeros(self._shape, dtype=dt.bool)
    )


def _isfinite(self):
    """Neither infinite nor NaN (True for integer and bool tensors)."""
    if not self._dtype.is_floating_point:
        return self.new_ones(self._shape, dtype=dt.bool)
    return (self - self).eq(0)


def _logical_not(self):
    """self == 0."""
    return self.eq(0)


def _meta_nan_to_num(self, nan, posinf, neginf):
    return _same(self)


def _nan_to_num(self, nan, posinf, neginf):
    """self with NaN, +inf and -inf replaced (defaults: 0, the dtype's largest and lowest)."""
    if not self._dtype.is_floating_point:
        return self.clone()
    fi = dt.finfo(self._dtype)
    r = where(self.isnan(), 0.0 if nan is None else nan, self)
    r = where(r.eq(math.inf), fi.max if posinf is None else posinf, r)
    return where(r.eq(-math.inf), fi.min if neginf is None else neginf, r)


# ---- binary -----------------------------------------------------------------------------------


def _meta_sub(self, other, alpha):
    if any(
        x is True or x is False or (isinstance(x, _T) and x._dtype is dt.bool)
        for x in (self, other)
    ):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )
    spec = binary_spec("sub", self, other, "promote")
    if not spec[1].is_floating_point and isinstance(alpha, float):
        raise RuntimeError(
            "sub(): For integral input tensors, argument alpha must not be a floating point number."
        )
    return spec


def _sub(self, other, alpha):
    """self - alpha * other."""
    return REGISTRY["add"].op.entry(self, other, alpha=-alpha)


def _d_sub(ctx, g):
    if not ctx.needs_input_grad[1]:
        return (g,)
    return (g, g.neg() if ctx.alpha == 1 else g * -ctx.alpha)


def _meta_rsub(self, other, alpha):
    return _meta_sub(other, self, alpha)


def _rsub(self, other, alpha):
    """other - alpha * self (``2 - t``)."""
    return (self.neg() if alpha == 1 else self * -alpha).add(other)


def _ne(self, other):
    """not (self == other) (True where either is NaN)."""
    return self.eq(other).logical_not()


def _gt(self, other):
    """other < self."""
    return REGISTRY["lt"].op.entry(other, self)


def _ge(self, other):
    """other <= self."""
    return REGISTRY["le"].op.entry(other, self)


def _logical_and(self, other):
    """(self != 0) and (other != 0)."""
    return self.ne(0).bitwise_and(_nonzero(other))


def _logical_or(self, other):
    """(self != 0) or (other != 0)."""
    return self.ne(0).bitwise_or(_nonzero(other))


def _logical_xor(self, other):
    """(self != 0) xor (other != 0)."""
    return self.ne(0).bitwise_xor(_nonzero(other))


def _nonzero(x):
    return x.ne(0) if isinstance(x, _T) else bool(x)


def _meta_floor_divide(self, other):
    spec = binary_spec("floor_divide", self, other, "promote")
    if spec[1] is dt.bool:
        raise NotImplementedError("floor_divide(): not implemented for 'Bool'")
    return spec


def _floor_divide(self, other):
    """self / other rounded down."""
    return REGISTRY["div"].op.entry(self, other, rounding_mode="floor")


def _fmax(self, other):
    """maximum that ignores NaN (NaN only where both are)."""
    return _nan_ignoring(self, other, self.maximum(other))


def _fmin(self, other):
    """minimum that ignores NaN (NaN only where both are)."""
    return _nan_ignoring(self, other, self.minimum(other))


def _nan_ignoring(a, b, extremum):
    if isinstance(b, _T):
        return where(b.isnan(), a, where(a.isnan(), b, extremum))
    if b != b:  # a NaN number: the other operand wins everywhere
        return a.to(extremum._dtype)
    return where(a.isnan(), b, extremum)


def _d_fmax_fmin(ctx, g):
    """fmax/fmin: the whole gradient goes to the element picked (self on ties)."""
    a, b = ctx.self, ctx.other
    take_a = (a >= b) if ctx.decl.name == "fmax" else (a <= b)
    if not isinstance(b, _T):
        return (where(take_a | (b != b), g, 0.0), None)
    take_a = take_a | b.isnan()
    return (where(take_a, g, 0.0), where(take_a, 0.0, g))


def _logaddexp(self, other):
    """log(exp(self) + exp(other)), stably: max + log1p(exp(-|self - other|))."""
    m = self.maximum(other)
    tail = (self - other).abs().neg().exp().log1p()
    return where(self.eq(other), self + math.log(2.0), m + tail)


def _d_logaddexp(ctx, g):
    a, b = ctx.self, ctx.other
    return (
        g * (a - b).neg().exp().add(1).reciprocal(),
        g * (b - a).neg().exp().add(1).reciprocal(),
    )


def _logaddexp2(self, other):
    """log2(2**self + 2**other), stably: max + log1p(2**-|self - other|) / ln 2."""
    m = self.maximum(other)
    tail = (self - other).abs().neg().exp2().log1p().div(math.log(2.0))
    return where(self.eq(other), self + 1.0, m + tail)


def _d_logaddexp2(ctx, g):
    a, b = ctx.self, ctx.other
    return (g * (b - a).exp2().add(1).reciprocal(), g * (a - b).exp2().add(1).reciprocal())


def _angle_scale(factor: float):
    def impl(self):
        x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
        return x * factor

    return impl


def _sgn(self):
    """The sign of each element: -1, 0, 1 for real tensors (as `sign`), ``z / abs(z)`` (0 at 0)
    for complex ones."""
    if self._dtype.is_complex:
        a = self.abs()
        return REGISTRY["where"].op.entry(a.eq(0), 0, self / a)
    return self.sign()


def _xlogy(self, other):
    """self * log(other), 0 where self == 0 (unless other is NaN)."""
    if not isinstance(self, _T):
        self = other.new_full((), self)
    x = self if self._dtype.is_floating_point else self.to(float_result(promote(self, other)))
    r = x * _log_scalar(other)
    zero = self.eq(0)
    if isinstance(other, _T):
        zero = zero & other.isnan().logical_not()
    elif other != other:  # a NaN `other` gives NaN even where self == 0
        return r
    return where(zero, 0.0, r)


def _log_scalar(y):
    if isinstance(y, _T):
        return y.log()
    return math.log(y) if y > 0 else (-math.inf if y == 0 else math.nan)


def _d_xlogy(ctx, g):
    a, b = ctx.self, ctx.other
    na, nb = ctx.needs_input_grad
    ga = gb = None
    if na:
        ga = where(a.eq(0) & (b <= 0), 0.0, g * _log_scalar(b))
    if nb:
        gb = g * a / b
    return (ga, gb)


# ---- clamp, lerp, addcmul, addcdiv ------------------------------------------------------------


def _real_compare(name: str):
    """The meta rule of gt/ge: bool results, complex operands refused."""

    def meta(self, other):
        refuse_complex(name, self, other)
        return binary_spec(name, self, other, "bool")

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_clamp(self, min, max):  # noqa: A002 - PyTorch's argument names
    if min is None and max is None:
        raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
    refuse_complex("clamp", self, min, max)
    shapes = [x._shape for x in (self, min, max) if isinstance(x, _T)]
    shape = broadcast_shapes("clamp", *shapes) if len(shapes) > 1 else self._shape
    d = promote(*[x for x in (self, min, max) if x is not None])
    for v in (min, max):
        if isinstance(v, int) and not isinstance(v, bool) and d.category == dt.int64.category:
            info = dt.iinfo(d)
            # as c10's overflow check: unsigned types also take negatives (they wrap around)
            lo = info.min if d.is_signed else -(info.max + 1) // 2
            if not lo <= v <= info.max:
                raise RuntimeError(
                    f"clamp(): value cannot be converted to type {d.name} without "
                    f"overflow (got {v})"
                )
    return (shape, d, common_device("clamp", self, min, max))


def _clamp(self, min, max):  # noqa: A002
    """min(max(self, min), max): NaN propagates; where min > max the result is max."""
    r = self
    if min is not None:
        r = _bound(r, min, "max")
    if max is not None:
        r = _bound(r, max, "min")
    return r


def _bound(x, v, kind: str):
    """maximum/minimum of `x` and a tensor or number `v` (NaN in `x` propagates)."""
    return x.maximum(v) if kind == "max" else x.minimum(v)


def _d_clamp(ctx, g):
    """Each element's gradient goes to exactly one of self, min, max (as PyTorch)."""
    x, lo, hi = ctx.self, ctx.min, ctx.max
    if lo is None:
        keep = x <= hi
    elif hi is None:
        keep = x >= lo
    else:
        keep = (x >= lo) & (x <= hi)
    g_lo = g_hi = None
    if isinstance(lo, _T):
        to_lo = ~keep if hi is None else (~keep) & (x < lo) & (lo < hi)
        g_lo = where(to_lo, g, 0.0)
    if isinstance(hi, _T):
        to_hi = ~keep if lo is None else (~keep) & ~((x < lo) & (lo < hi))
        g_hi = where(to_hi, g, 0.0)
    return (where(keep, g, 0.0), g_lo, g_hi)


def _meta_clamp_min(self, min):  # noqa: A002
    return _meta_clamp(self, min, None)


def _meta_clamp_max(self, max):  # noqa: A002
    return _meta_clamp(self, None, max)


def _clamp_min(self, min):  # noqa: A002
    """max(self, min)."""
    return _bound(self, min, "max")


def _clamp_max(self, max):  # noqa: A002
    """min(self, max)."""
    return _bound(self, max, "min")


def _d_clamp_min(ctx, g):
    keep = ctx.self >= ctx.min
    return (where(keep, g, 0.0), where(keep, 0.0, g) if isinstance(ctx.min, _T) else None)


def _d_clamp_max(ctx, g):
    keep = ctx.self <= ctx.max
    return (where(keep, g, 0.0), where(keep, 0.0, g) if isinstance(ctx.max, _T) else None)


def _meta_lerp(self, end, weight):
    shapes = [x._shape for x in (self, end, weight) if isinstance(x, _T)]
    d = promote(self, end)
    if not d.is_floating_point:
        raise NotImplementedError(f"lerp(): not implemented for '{d.name}'; expected float tensors")
    return (broadcast_shapes("lerp", *shapes), d, common_device("lerp", self, end, weight))


def _lerp(self, end, weight):
    """self + weight * (end - self), computed from the nearer end for accuracy (as PyTorch)."""
    diff = end - self
    if isinstance(weight, _T):
        return where(weight.abs() < 0.5, self + weight * diff, end - diff * (1 - weight))
    return self + diff * weight if abs(weight) < 0.5 else end - diff * (1 - weight)


def _d_lerp(ctx, g):
    a, b, w = ctx.self, ctx.end, ctx.weight
    return (g * (1 - w), g * w, g * (b - a) if ctx.needs_input_grad[2] else None)


def _meta_addc(name: str):
    def meta(self, tensor1, tensor2, value):
        shapes = [x._shape for x in (self, tensor1, tensor2)]
        d = promote(self, tensor1, tensor2)
        if name == "addcdiv" and not d.is_floating_point:
            raise RuntimeError(
                "addcdiv(): Integer division with addcdiv is no longer "
                "supported; use a float tensor"
            )
        return (broadcast_shapes(name, *shapes), d, common_device(name, self, tensor1, tensor2))

    meta.__name__ = f"meta_{name}"
    return meta


def _addcmul(self, tensor1, tensor2, value):
    """self + value * tensor1 * tensor2."""
    t = tensor1 * value if value != 1 else tensor1
    return self + t * tensor2


def _addcdiv(self, tensor1, tensor2, value):
    """self + value * tensor1 / tensor2."""
    t = tensor1 * value if value != 1 else tensor1
    return self + t / tensor2


# ---- comparisons of whole tensors ----------------------------------------------------------------


def _meta_isclose(self, other, rtol, atol, equal_nan):
    if self._dtype is not other._dtype:
        raise RuntimeError(
            f"isclose(): expected both tensors to have the same dtype, got "
            f"{self._dtype.name} and {other._dtype.name}"
        )
    if rtol < 0 or atol < 0:
        raise RuntimeError(
            f"isclose(): rtol and atol must be non-negative, got rtol={rtol} and atol={atol}"
        )
    return (
        broadcast_shapes("isclose", self._shape, other._shape),
        dt.bool,
        common_device("isclose", self, other),
    )


def _isclose(self, other, rtol, atol, equal_nan):
    """Elementwise ``|self - other| <= atol + rtol * |other|`` (infinities close only to
    themselves; NaN close to NaN only with `equal_nan`)."""
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


def _allclose(self, other, rtol, atol, equal_nan) -> bool:
    """Whether every element is `isclose` (a Python bool)."""
    return bool(_isclose(self, other, rtol, atol, equal_nan).all().item())


def _equal(self, other) -> bool:
    """True when both have the same shape and the same values (a Python bool)."""
    if self._shape != other._shape:
        return False
    return bool(self.eq(other).all().item())


def _declare_all() -> None:
    unary: dict[str, Any] = dict(family="unary", inplace=True, flops=flops_pointwise)
    declare("frac(Tensor self) -> Tensor", _meta_frac, impl=_frac, **unary)
    declare("square(Tensor self) -> Tensor", _meta_square, impl=_square, **unary)
    declare(
        "positive(Tensor(a) self) -> Tensor(a)",
        _meta_positive,
        impl=_positive,
        family="unary",
        out=False,
    )
    declare("exp2(Tensor self) -> Tensor", _float, impl=_exp2, **unary)
    declare("rsqrt(Tensor self) -> Tensor", _float, impl=_rsqrt, **unary)
    declare("reciprocal(Tensor self) -> Tensor", _float, impl=_reciprocal, **unary)
    pred: dict[str, Any] = dict(family="unary", differentiable=False)
    fn: Callable[..., Any]
    for name, fn in (
        ("isnan", _isnan),
        ("isinf", _isinf),
        ("isposinf", _isposinf),
        ("isneginf", _isneginf),
        ("isfinite", _isfinite),
    ):
        declare(f"{name}(Tensor self) -> Tensor", _bool, impl=fn, **pred)
    declare("logical_not(Tensor self) -> Tensor", _bool, impl=_logical_not, inplace=True, **pred)
    declare(
        "nan_to_num(Tensor self, float? nan=0.0, float? posinf=None, float? neginf=None) -> Tensor",
        _meta_nan_to_num,
        impl=_nan_to_num,
        family="unary",
        inplace=True,
    )

    binary: dict[str, Any] = dict(family="binary", inplace=True, flops=flops_pointwise)
    declare(
        "sub(Tensor|Scalar self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor",
        _meta_sub,
        impl=_sub,
        derivative=_d_sub,
        saves=(),
        **binary,
    )
    declare(
        "rsub(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor",
        _meta_rsub,
        impl=_rsub,
        family="binary",
        method=False,
    )
    cmp: dict[str, Any] = dict(family="binary", inplace=True, differentiable=False)
    for name, fn in (("ne", _ne), ("gt", _gt), ("ge", _ge)):
        meta = binary_meta(name, "bool") if name == "ne" else _real_compare(name)
        declare(f"{name}(Tensor self, Tensor|Scalar other) -> Tensor", meta, impl=fn, **cmp)
    for name, fn in (
        ("logical_and", _logical_and),
        ("logical_or", _logical_or),
        ("logical_xor", _logical_xor),
    ):
        declare(
            f"{name}(Tensor self, Tensor|Scalar other) -> Tensor",
            binary_meta(name, "bool"),
            impl=fn,
            **cmp,
        )
    declare(
        "floor_divide(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        _meta_floor_divide,
        impl=_floor_divide,
        differentiable=False,
        family="binary",
        inplace=True,
    )
    for name, fn in (("fmax", _fmax), ("fmin", _fmin)):
        declare(
            f"{name}(Tensor self, Tensor|Scalar other) -> Tensor",
            binary_meta(name, "promote"),
            impl=fn,
            derivative=_d_fmax_fmin,
            **binary,
        )
    declare(
        "logaddexp(Tensor self, Tensor|Scalar other) -> Tensor",
        binary_meta("logaddexp", "float"),
        impl=_logaddexp,
        derivative=_d_logaddexp,
        **binary,
    )
    declare(
        "logaddexp2(Tensor self, Tensor|Scalar other) -> Tensor",
        lambda self, other: binary_spec("logaddexp2", self, other, "float"),
        impl=_logaddexp2,
        derivative=_d_logaddexp2,
        **binary,
    )
    for name, factor in (("deg2rad", math.pi / 180.0), ("rad2deg", 180.0 / math.pi)):
        impl = _angle_scale(factor)
        impl.__name__ = name
        impl.__doc__ = f"Angles converted {'to radians' if factor < 1 else 'to degrees'}."
        declare(
            f"{name}(Tensor self) -> Tensor",
            _float,
            impl=impl,
            family="unary",
            inplace=True,
            flops=flops_pointwise,
        )
    declare(
        "sgn(Tensor self) -> Tensor",
        _same,
        impl=_sgn,
        family="unary",
        inplace=True,
        flops=flops_pointwise,
    )
    declare(
        "xlogy(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        binary_meta("xlogy", "float"),
        impl=_xlogy,
        derivative=_d_xlogy,
        **binary,
    )

    ternary: dict[str, Any] = dict(family="ternary", inplace=True, flops=flops_pointwise)
    declare(
        "clamp(Tensor self, Tensor|Scalar? min=None, Tensor|Scalar? max=None) -> Tensor",
        _meta_clamp,
        impl=_clamp,
        derivative=_d_clamp,
        **ternary,
    )
    declare(
        "clamp_min(Tensor self, Tensor|Scalar min) -> Tensor",
        _meta_clamp_min,
        impl=_clamp_min,
        derivative=_d_clamp_min,
        **ternary,
    )
    declare(
        "clamp_max(Tensor self, Tensor|Scalar max) -> Tensor",
        _meta_clamp_max,
        impl=_clamp_max,
        derivative=_d_clamp_max,
        **ternary,
    )
    declare(
        "lerp(Tensor self, Tensor end, Tensor|Scalar weight) -> Tensor",
        _meta_lerp,
        impl=_lerp,
        derivative=_d_lerp,
        **ternary,
    )
    declare(
        "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
        _meta_addc("addcmul"),
        impl=_addcmul,
        **ternary,
    )
    declare(
        "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
        _meta_addc("addcdiv"),
        impl=_addcdiv,
        **ternary,
    )

    comp: dict[str, Any] = dict(family="comparison", out=False, differentiable=False)
    declare(
        "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
        "bool equal_nan=False) -> Tensor",
        _meta_isclose,
        impl=_isclose,
        **comp,
    )
    declare(
        "allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
        "bool equal_nan=False) -> bool",
        _meta_isclose,
        impl=_allclose,
        **comp,
    )
    declare("equal(Tensor self, Tensor other) -> bool", impl=_equal, **comp)


_declare_all()
