"""Elementwise arithmetic composites: gcd, lcm, nextafter, copysign, heaviside, ldexp, frexp,
float_power, true_divide.

gcd and nextafter are computed by the ``_binary_special`` primitive (``xp.gcd``,
``xp.nextafter``); the rest are written with other ops. Each has PyTorch's dtype rules in its
meta rule.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare
from .pointwise import binary_meta, binary_spec, flops_pointwise
from .special import VALUES_ONLY, typed_binary_meta

__all__: list[str] = []

_T = Tensor


def _where(cond, a, b):
    return REGISTRY["where"].op.entry(cond, a, b)


def _binary(a, b, name: str):
    return REGISTRY["_binary_special"].op.entry(a, b, name)


def _gcd(self, other):
    """The greatest common divisor of |self| and |other| (gcd(0, 0) = 0)."""
    return _binary(self, other, "gcd")


def _lcm(self, other):
    """The least common multiple of |self| and |other| (0 if either is 0)."""
    g = _gcd(self, other)
    zero = g.eq(0)
    return _where(zero, 0, (self // _where(zero, 1, g) * other).abs())


def _nextafter(self, other):
    """The next representable value after self towards other."""
    return _binary(self, other, "nextafter")


def _d_nextafter(ctx, g):
    """As PyTorch: the gradient passes to self where it moved (self != other), none to other."""
    moved = ctx.self.ne(ctx.other)
    return (_where(moved, g, 0.0), g.new_zeros(g._shape) if ctx.needs_input_grad[1] else None)


def _copysign(self, other):
    """|self| with the sign (bit) of other."""
    spec = binary_spec("copysign", self, other, "float")
    a = self if self._dtype is spec[1] else self.to(spec[1])
    a = a.abs()
    neg = other.signbit() if isinstance(other, _T) else math.copysign(1.0, other) < 0
    if isinstance(neg, bool):
        return a.neg() if neg else a
    return _where(neg, a.neg(), a)


def _meta_heaviside(self, values):
    if self._dtype is not values._dtype:
        raise RuntimeError(
            f"heaviside(): expected input and values of one dtype (PyTorch refuses tensors "
            f"with different dtypes here too), got {self._dtype.name} and {values._dtype.name}"
        )
    return binary_spec("heaviside", self, values, "promote")


def _heaviside(self, values):
    """0 where self < 0, `values` where self == 0, 1 where self > 0."""
    return _where(self.eq(0), values, self.gt(0).to(self._dtype))


def _ldexp(self, other):
    """self * 2 ** other (in the float result type of self and other: powers of two are exact
    in every float dtype, so a 16-bit self is not widened to float32 by the factor)."""
    d = binary_spec("ldexp", self, other, "float")[1]
    return self * REGISTRY["pow"].op.entry(2.0, other).to(d)


def _meta_frexp(self):
    if not self._dtype.is_floating_point:
        raise RuntimeError(
            f"frexp(): torch.frexp() only supports floating-point dtypes, got {self._dtype.name}"
        )
    return [(self._shape, self._dtype, self._device), (self._shape, dt.int32, self._device)]


def _frexp(self):
    """(mantissa, exponent) with self = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1
    (mantissa 0 and exponent 0 for 0; non-finite values keep themselves with exponent 0)."""
    x = self.to(dt.opmath_dtype(self._dtype))
    a = x.abs()
    finite = x.isfinite() & x.ne(0)
    safe = _where(finite, a, 1.0)
    e = safe.log2().floor() + 1
    # 2 ** -e in two halves: one power of two alone would overflow for subnormals
    half = (e * 0.5).floor()
    m = safe * REGISTRY["pow"].op.entry(2.0, half.neg()) * REGISTRY["pow"].op.entry(2.0, half - e)
    # log2 may round across a power of two: bring the mantissa back into [0.5, 1)
    up, down = m.ge(1), m.lt(0.5)
    m = _where(up, m * 0.5, _where(down, m * 2, m))
    e = _where(up, e + 1, _where(down, e - 1, e))
    mantissa = _where(finite, m * x.sign(), x).to(self._dtype)
    exponent = _where(finite, e, 0.0).to(dt.int32)
    return REGISTRY["frexp"].returns(mantissa, exponent)


def _d_frexp(ctx, g_mantissa, g_exponent=None):
    return (g_mantissa / REGISTRY["pow"].op.entry(2.0, ctx.result[1].to(g_mantissa._dtype)),)


def _meta_float_power(self, exponent):
    spec = binary_spec("float_power", self, exponent, "promote")
    return (spec[0], dt.float64, spec[2])


def _float_power(self, exponent):
    """self ** exponent computed in float64."""

    def f64(x):
        return x.to(dt.float64) if isinstance(x, _T) else float(x)

    base = f64(self)
    if not isinstance(base, _T):
        base = exponent.new_full((), base, dtype=dt.float64)
    return base.pow(f64(exponent))


def _meta_float_power_(self, exponent):
    if self._dtype is not dt.float64:
        raise RuntimeError(
            f"float_power_(): the base given to float_power_ has dtype "
            f"{self._dtype.name} but the operation's result requires dtype float64"
        )
    return _meta_float_power(self, exponent)


def _float_power_(self, exponent):
    """self written with self ** exponent (self must be float64)."""
    # the power reads a copy: its gradient needs the base as it was before the write
    return self.copy_(_float_power(self.clone(), exponent))


def _true_divide(self, other):
    """self / other (``div`` without rounding)."""
    return REGISTRY["div"].op.entry(self, other)


def _declare_all() -> None:
    bi: dict[str, Any] = dict(family="binary", flops=flops_pointwise)
    declare(
        "gcd(Tensor self, Tensor other) -> Tensor",
        typed_binary_meta("gcd", "int"),
        impl=_gcd,
        inplace=True,
        **VALUES_ONLY,
        **bi,
    )
    declare(
        "lcm(Tensor self, Tensor other) -> Tensor",
        typed_binary_meta("lcm", "int"),
        impl=_lcm,
        inplace=True,
        **VALUES_ONLY,
        **bi,
    )
    declare(
        "nextafter(Tensor self, Tensor other) -> Tensor",
        typed_binary_meta("nextafter", "float"),
        impl=_nextafter,
        derivative=_d_nextafter,
        inplace=True,
        **bi,
    )
    declare(
        "copysign(Tensor self, Tensor|Scalar other) -> Tensor",
        binary_meta("copysign", "float"),
        impl=_copysign,
        inplace=True,
        **bi,
    )
    declare(
        "heaviside(Tensor self, Tensor values) -> Tensor",
        _meta_heaviside,
        impl=_heaviside,
        kind="composite_explicit",
        inplace=True,
        **bi,
    )
    declare(
        "ldexp(Tensor self, Tensor other) -> Tensor",
        binary_meta("ldexp", "float"),
        impl=_ldexp,
        inplace=True,
        **bi,
    )
    declare(
        "frexp(Tensor self) -> (Tensor mantissa, Tensor exponent)",
        _meta_frexp,
        impl=_frexp,
        derivative=_d_frexp,
        saves=(),
        save_result=True,
        family="unary",
    )
    declare(
        "float_power(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor",
        _meta_float_power,
        impl=_float_power,
        **bi,
    )
    declare(
        "float_power_(Tensor(a!) self, Tensor|Scalar exponent) -> Tensor(a!)",
        _meta_float_power_,
        impl=_float_power_,
        family="binary",
    )
    declare(
        "true_divide(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        binary_meta("true_divide", "float"),
        impl=_true_divide,
        inplace=True,
        **bi,
    )


_declare_all()
