"""Elementwise kernels on the array API: every pointwise primitive, for any backend that holds
its tensors as numpy or CuPy arrays (the array module comes from `kit_of(out)`).

Each kernel receives the argument record already checked and normalized by the op's schema and
meta rule, and an `out` of the result's shape and dtype. Arithmetic runs in ``opmath(out)``
(half precision in float32; Python numbers are converted to that dtype, not to out's), and the
result is cast into `out`.
"""

from __future__ import annotations

import numpy as np

from coretorch.tensor.impl import TensorImpl

from .array_kit import kit_of, opmath, scalar_as

__all__ = ["KERNELS"]

_T = TensorImpl
_BOOL = np.dtype(np.bool_)
_I64 = np.dtype(np.int64)


# ---- unary --------------------------------------------------------------------------------------


def _float_ufunc(out, self, name: str) -> None:
    """out = xp.<name>(self) computed in out's float opmath dtype."""
    k = kit_of(out)
    cn = opmath(out._dtype)
    k.into(getattr(k.xp, name), out, cn, k.operand(self, cn))


def _special(out, self, name: str) -> None:
    """out = <special function name>(self) (scipy.special / cupyx.scipy.special)."""
    k = kit_of(out)
    cn = opmath(out._dtype)
    k.write(out, getattr(k.special, name)(k.operand(self, cn)))


def exp(out, self):
    """out = e ** self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "exp")


def expm1(out, self):
    """out = exp(self) - 1, accurate near 0, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "expm1")


def log(out, self):
    """out = natural logarithm of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "log")


def log2(out, self):
    """out = base-2 logarithm of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "log2")


def log10(out, self):
    """out = base-10 logarithm of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "log10")


def log1p(out, self):
    """out = log(1 + self), accurate near 0, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "log1p")


def sqrt(out, self):
    """out = square root of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "sqrt")


def sin(out, self):
    """out = sine of self (radians), computed in out's float opmath dtype."""
    _float_ufunc(out, self, "sin")


def cos(out, self):
    """out = cosine of self (radians), computed in out's float opmath dtype."""
    _float_ufunc(out, self, "cos")


def tan(out, self):
    """out = tangent of self (radians), computed in out's float opmath dtype."""
    _float_ufunc(out, self, "tan")


def asin(out, self):
    """out = arcsine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arcsin")


def acos(out, self):
    """out = arccosine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arccos")


def atan(out, self):
    """out = arctangent of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arctan")


def sinh(out, self):
    """out = hyperbolic sine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "sinh")


def cosh(out, self):
    """out = hyperbolic cosine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "cosh")


def tanh(out, self):
    """out = hyperbolic tangent of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "tanh")


def asinh(out, self):
    """out = inverse hyperbolic sine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arcsinh")


def acosh(out, self):
    """out = inverse hyperbolic cosine of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arccosh")


def atanh(out, self):
    """out = inverse hyperbolic tangent of self, computed in out's float opmath dtype."""
    _float_ufunc(out, self, "arctanh")


def sigmoid(out, self):
    """out = 1 / (1 + exp(-self)), computed in out's float opmath dtype."""
    _special(out, self, "expit")


def erf(out, self):
    """out = the error function of self, computed in out's float opmath dtype."""
    _special(out, self, "erf")


def erfc(out, self):
    """out = 1 - erf(self), accurate for large self, computed in out's float opmath dtype."""
    _special(out, self, "erfc")


def erfinv(out, self):
    """out = the inverse error function of self, computed in out's float opmath dtype."""
    _special(out, self, "erfinv")


def abs(out, self):  # noqa: A001 - the op's name
    """out = |self|"""
    k = kit_of(out)
    k.into(k.xp.absolute, out, out._dtype.numpy, k.arr(self))


def neg(out, self):
    """out = -self"""
    k = kit_of(out)
    k.into(k.xp.negative, out, out._dtype.numpy, k.arr(self))


def _rounding(out, self, name: str) -> None:
    k = kit_of(out)
    x = k.arr(self)
    if not self._dtype.is_floating_point:  # integers are already whole
        k.write(out, x)
    else:
        k.into(getattr(k.xp, name), out, x.dtype, x)


def floor(out, self):
    """out = the largest integer <= self (integer inputs are copied unchanged)."""
    _rounding(out, self, "floor")


def ceil(out, self):
    """out = the smallest integer >= self (integer inputs are copied unchanged)."""
    _rounding(out, self, "ceil")


def trunc(out, self):
    """out = self rounded toward zero (integer inputs are copied unchanged)."""
    _rounding(out, self, "trunc")


def round(out, self, decimals):  # noqa: A001
    """out = self rounded half to even (to `decimals` decimal places)"""
    k = kit_of(out)
    x = k.arr(self)
    if not self._dtype.is_floating_point:
        k.write(out, x)
    elif decimals == 0:
        k.into(k.xp.rint, out, x.dtype, x)
    else:  # half precision scales in float32, as PyTorch does
        k.write(out, k.xp.around(x.astype(opmath(x.dtype)), decimals))


def sign(out, self):
    """out = -1, 0 or 1 by the sign of self (0 for NaN, as PyTorch)"""
    k = kit_of(out)
    x = k.arr(self)
    if self._dtype.is_floating_point:
        k.write(out, k.xp.where(k.xp.isnan(x), x.dtype.type(0), k.xp.sign(x)))
    elif self._dtype.name == "bool":
        k.write(out, x)
    else:
        k.into(k.xp.sign, out, x.dtype, x)


def signbit(out, self):
    """out = the sign bit of self (True for -0.0)"""
    k = kit_of(out)
    x = k.arr(self)
    if self._dtype.is_floating_point:
        k.into(k.xp.signbit, out, _BOOL, x)
    else:
        k.write(out, x < 0 if self._dtype.is_signed else False)


def bitwise_not(out, self):
    """out = ~self (logical not for bool)"""
    k = kit_of(out)
    k.into(k.xp.invert, out, out._dtype.numpy, k.arr(self))


# ---- binary -------------------------------------------------------------------------------------


def _binary(out, a, b, name: str, cn: np.dtype) -> None:
    """out = xp.<name>(a, b) with both operands in `cn`."""
    k = kit_of(out)
    k.into(getattr(k.xp, name), out, cn, k.operand(a, cn), k.operand(b, cn))


def add(out, self, other, alpha):
    """out = self + alpha * other"""
    k = kit_of(out)
    cn = opmath(out._dtype)
    b = k.operand(other, cn)
    if alpha != 1:
        b = (
            k.xp.multiply(b, scalar_as(alpha, cn), dtype=cn)
            if out._dtype.name != "bool"
            else k.xp.logical_and(b, bool(alpha))
        )
    if out._dtype.name == "bool":
        k.into(k.xp.logical_or, out, _BOOL, k.operand(self, cn), b)
    else:
        k.into(k.xp.add, out, cn, k.operand(self, cn), b)


def mul(out, self, other):
    """out = self * other (logical and for bool)"""
    if out._dtype.name == "bool":
        _binary(out, self, other, "logical_and", _BOOL)
    else:
        _binary(out, self, other, "multiply", opmath(out._dtype))


def _trunc_int_div(xp, a, b, cn):
    q = xp.floor_divide(a, b, dtype=cn)
    inexact = xp.remainder(a, b, dtype=cn) != 0
    neg = xp.logical_xor(xp.asarray(a) < 0, xp.asarray(b) < 0)
    return q + xp.logical_and(inexact, neg).astype(cn)


def div(out, self, other, rounding_mode):
    """out = self / other, optionally rounded ('trunc', 'floor') as in PyTorch"""
    k = kit_of(out)
    xp = k.xp
    cn = opmath(out._dtype)
    if rounding_mode is None:
        _binary(out, self, other, "true_divide", cn)
        return
    if out._dtype.name == "bool":
        cn = np.dtype(np.uint8)
    a, b = k.operand(self, cn), k.operand(other, cn)
    if out._dtype.is_floating_point:
        if rounding_mode == "floor":
            k.into(xp.floor_divide, out, cn, a, b)
        else:
            k.write(out, xp.trunc(xp.true_divide(a, b, dtype=cn)))
        return
    k.check_nonzero_divisor("div", other)
    if rounding_mode == "floor":
        k.into(xp.floor_divide, out, cn, a, b)
    else:
        k.write(out, _trunc_int_div(xp, a, b, cn))


def _int_pow(xp, base, e):
    """Integer power by squaring with PyTorch's negative-exponent rule (1 ** -n == 1,
    (-1) ** -n == +-1, anything else ** -n == 0)."""
    base, e = xp.broadcast_arrays(xp.asarray(base).astype(_I64), xp.asarray(e).astype(_I64))
    neg = e < 0
    r = xp.ones(base.shape, _I64)
    b = base.copy()
    k = xp.where(neg, 0, e)
    while bool((k > 0).any()):
        odd = (k & 1) == 1
        r = xp.where(odd, r * b, r)
        b = b * b
        k = k >> 1
    neg_val = xp.where(base == 1, 1, xp.where(base == -1, xp.where(e % 2 == 0, 1, -1), 0))
    return xp.where(neg, neg_val, r)


def pow(out, self, exponent):  # noqa: A001
    """out = self ** exponent (integer powers follow PyTorch: 2 ** -1 == 0, (-1) ** -3 == -1)"""
    k = kit_of(out)
    if out._dtype.name == "bool":  # only bool ** Python bool reaches here
        k.write(out, k.arr(self) if exponent else True)  # x ** True == x, x ** False == 1
        return
    cn = opmath(out._dtype)
    if out._dtype.is_floating_point or out._dtype.is_complex:
        _binary(out, self, exponent, "power", cn)
        return
    k.write(out, _int_pow(k.xp, k.operand(self, cn), k.operand(exponent, cn)))


def maximum(out, self, other):
    """out = the elementwise larger of self and other (NaN propagates)."""
    _binary(out, self, other, "maximum", opmath(out._dtype))


def minimum(out, self, other):
    """out = the elementwise smaller of self and other (NaN propagates)."""
    _binary(out, self, other, "minimum", opmath(out._dtype))


def atan2(out, self, other):
    """out = arctangent of self / other, using both signs to pick the quadrant."""
    _binary(out, self, other, "arctan2", opmath(out._dtype))


def hypot(out, self, other):
    """out = sqrt(self ** 2 + other ** 2) without intermediate overflow."""
    _binary(out, self, other, "hypot", opmath(out._dtype))


def _int_divisor_op(out, self, other, name: str, ufunc: str) -> None:
    if not out._dtype.is_floating_point:
        kit_of(out).check_nonzero_divisor(name, other)
    _binary(out, self, other, ufunc, opmath(out._dtype))


def remainder(out, self, other):
    """out = self mod other with the sign of other (Python's %).

    Raises:
        RuntimeError: for integer dtypes when other has a zero element (a ZeroDivisionError
            message, as PyTorch)."""
    _int_divisor_op(out, self, other, "remainder", "remainder")


def fmod(out, self, other):
    """out = self mod other with the sign of self (C's fmod).

    Raises:
        RuntimeError: for integer dtypes when other has a zero element (a ZeroDivisionError
            message, as PyTorch)."""
    _int_divisor_op(out, self, other, "fmod", "fmod")


def eq(out, self, other, common):
    """out = self == other, both compared in the promoted dtype `common`."""
    _binary(out, self, other, "equal", common.numpy)


def lt(out, self, other, common):
    """out = self < other, both compared in the promoted dtype `common`."""
    _binary(out, self, other, "less", common.numpy)


def le(out, self, other, common):
    """out = self <= other, both compared in the promoted dtype `common`."""
    _binary(out, self, other, "less_equal", common.numpy)


def bitwise_and(out, self, other):
    """out = self & other (logical and for bool)."""
    _binary(out, self, other, "bitwise_and", out._dtype.numpy)


def bitwise_or(out, self, other):
    """out = self | other (logical or for bool)."""
    _binary(out, self, other, "bitwise_or", out._dtype.numpy)


def bitwise_xor(out, self, other):
    """out = self ^ other (logical xor for bool)."""
    _binary(out, self, other, "bitwise_xor", out._dtype.numpy)


def _shift(out, self, other, left: bool) -> None:
    """PyTorch defines shifts by a negative amount or by the bit width or more (C does not)."""
    k = kit_of(out)
    xp = k.xp
    cn = out._dtype.numpy
    if cn == _BOOL:
        raise k.unsupported("lshift" if left else "rshift", out._dtype)
    a, b = xp.asarray(k.operand(self, cn)), xp.asarray(k.operand(other, cn))
    bits = cn.itemsize * 8
    outside = xp.logical_or(b < 0, b >= bits)
    s = xp.clip(b, 0, bits - 1).astype(cn)
    if left:
        r = xp.where(outside, cn.type(0), xp.left_shift(a, s))
    else:
        fill = xp.right_shift(a, cn.type(bits - 1)) if cn.kind == "i" else cn.type(0)
        r = xp.where(outside, fill, xp.right_shift(a, s))
    k.write(out, r)


def bitwise_left_shift(out, self, other):
    """out = self << other (0 when shifting by a negative amount or by the bit width or more)"""
    _shift(out, self, other, True)


def bitwise_right_shift(out, self, other):
    """out = self >> other (arithmetic; sign fill when shifting by the bit width or more)"""
    _shift(out, self, other, False)


def where(out, condition, self, other):
    """out = self where condition else other"""
    k = kit_of(out)
    cn = out._dtype.numpy
    k.write(out, k.xp.where(k.arr(condition), k.operand(self, cn), k.operand(other, cn)))


KERNELS = {
    name: fn
    for name, fn in list(globals().items())
    if callable(fn)
    and not name.startswith("_")
    and getattr(fn, "__module__", "") == __name__
    and name not in ("kit_of", "opmath", "scalar_as")
}
