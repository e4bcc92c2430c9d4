"""Unary elementwise kernels: math functions, rounding, predicates, activations.

Math functions are `xp` ufuncs; the activations are composed from ufuncs in float32 (float16
inputs) or the input's float dtype; erf/erfc/erfinv come from cupyx.scipy.special.
"""
from __future__ import annotations

import math

import numpy as np

from .. import array_module as am
from ..registry import kernel
from ._common import BOOL, acc_float, arr, dt, float_result, ufunc_into, unsupported, write, xp


def _ufunc_kernel(name: str, ufname: str, floating: bool, *, no_bool: bool = False,
                  int_identity: bool = False):
    """Kernel applying ufunc `xp.<ufname>` in the compute dtype (float for float-valued ops)."""
    uf = getattr(xp, ufname)

    def k(out, self):
        d = self._dtype
        if no_bool and d is dt.bool:
            raise unsupported(name, d)
        x = arr(self)
        if int_identity and not d.is_floating_point:
            write(out, x)
            return
        c = (float_result(d) if floating else d).numpy
        if x.dtype != c:
            x = x.astype(c)
        ufunc_into(uf, out, c, x)
    k.__name__ = name
    k.__doc__ = f"out = {name}(self)"
    kernel(name)(k)


for _name, _uf in (("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"), ("log", "log"),
                   ("log2", "log2"), ("log10", "log10"), ("log1p", "log1p"), ("sqrt", "sqrt"),
                   ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("asin", "arcsin"),
                   ("acos", "arccos"), ("atan", "arctan"), ("sinh", "sinh"), ("cosh", "cosh"),
                   ("tanh", "tanh"), ("asinh", "arcsinh"), ("acosh", "arccosh"),
                   ("atanh", "arctanh"), ("reciprocal", "reciprocal")):
    _ufunc_kernel(_name, _uf, True)
_ufunc_kernel("abs", "absolute", False, no_bool=True)
_ufunc_kernel("neg", "negative", False)
_ufunc_kernel("square", "square", False)
_ufunc_kernel("floor", "floor", False, int_identity=True, no_bool=True)
_ufunc_kernel("ceil", "ceil", False, int_identity=True, no_bool=True)
_ufunc_kernel("trunc", "trunc", False, int_identity=True, no_bool=True)
_ufunc_kernel("bitwise_not", "invert", False)


@kernel("positive")
def positive(out, self):
    """out = self"""
    if self._dtype is dt.bool:
        raise RuntimeError("positive(): The `+` operator, on a bool tensor is not supported.")
    write(out, arr(self))


@kernel("rsqrt")
def rsqrt(out, self):
    """out = 1 / sqrt(self)"""
    c = float_result(self._dtype).numpy
    write(out, xp.reciprocal(xp.sqrt(arr(self).astype(c))))


@kernel("frac")
def frac(out, self):
    """out = self - trunc(self) (floats only, as in PyTorch)"""
    if not self._dtype.is_floating_point:
        raise unsupported("frac", self._dtype)
    x = arr(self)
    write(out, x - xp.trunc(x))


@kernel("relu")
def relu(out, self):
    """out = max(self, 0), NaN propagating"""
    if self._dtype is dt.bool:
        raise RuntimeError("relu(): Boolean inputs not supported for relu")
    x = arr(self)
    ufunc_into(xp.maximum, out, x.dtype, x, x.dtype.type(0))


@kernel("sign")
def sign(out, self):
    """out = -1, 0 or 1 by the sign of self (0 for NaN, as in PyTorch)"""
    x = arr(self)
    if self._dtype is dt.bool:
        write(out, x)
    elif self._dtype.is_floating_point:
        write(out, xp.where(xp.isnan(x), x.dtype.type(0), xp.sign(x)))
    else:
        ufunc_into(xp.sign, out, x.dtype, x)


@kernel("round")
def round_(out, self, *, decimals=0):
    """out = self rounded half to even (to `decimals` decimal places)"""
    x = arr(self)
    if not self._dtype.is_floating_point:
        if decimals != 0:
            raise unsupported("round", self._dtype, "floating point dtypes when decimals != 0")
        write(out, x)
    elif decimals == 0:
        ufunc_into(xp.rint, out, x.dtype, x)
    else:  # float16 scales in float32, as PyTorch does
        write(out, xp.around(x.astype(acc_float(x.dtype)), decimals))


@kernel("nan_to_num")
def nan_to_num(out, self, nan=0.0, posinf=None, neginf=None):
    """out = self with NaN, +inf and -inf replaced (defaults: 0, the dtype's max and min)"""
    x = arr(self)
    if not self._dtype.is_floating_point:
        write(out, x)
        return
    fi = np.finfo(x.dtype)
    hi = fi.max if posinf is None else posinf
    lo = fi.min if neginf is None else neginf
    r = xp.where(xp.isnan(x), x.dtype.type(nan), x)
    r = xp.where(r == np.inf, x.dtype.type(hi), r)
    write(out, xp.where(r == -np.inf, x.dtype.type(lo), r))


# ---- predicates (bool results) ----------------------------------------------------------------

@kernel("logical_not")
def logical_not(out, self):
    """out = self == 0"""
    ufunc_into(xp.logical_not, out, BOOL, arr(self))


def _float_predicate(name: str, fn, int_value: bool):
    def k(out, self):
        if self._dtype.is_floating_point:
            write(out, fn(arr(self)))
        else:
            write(out, int_value)
    k.__name__ = name
    k.__doc__ = f"out = {name}(self) ({int_value} everywhere for integer and bool tensors)"
    kernel(name)(k)


_float_predicate("isnan", xp.isnan, False)
_float_predicate("isinf", xp.isinf, False)
_float_predicate("isfinite", xp.isfinite, True)
_float_predicate("isposinf", lambda x: x == np.inf, False)
_float_predicate("isneginf", lambda x: x == -np.inf, False)


@kernel("signbit")
def signbit(out, self):
    """out = the sign bit of self (True for -0.0)"""
    x = arr(self)
    if self._dtype.is_floating_point:
        ufunc_into(xp.signbit, out, BOOL, x)
    elif self._dtype.is_signed:
        write(out, x < 0)
    else:
        write(out, False)


# ---- activations and special functions, composed in the float compute dtype ------------------

def _fx(self):
    """(x in its float compute dtype, that dtype)."""
    x = arr(self)
    c = acc_float(float_result(self._dtype))
    return (x if x.dtype == c else x.astype(c)), c


def _clip6(v):
    return xp.minimum(xp.maximum(v, 0), 6)  # NaN propagates, as in the reference loops


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

_FORMULAS = {
    "sigmoid": lambda x, c: c.type(1) / (c.type(1) + xp.exp(-x)),
    "silu": lambda x, c: x / (c.type(1) + xp.exp(-x)),
    "mish": lambda x, c: x * xp.tanh(xp.log1p(xp.exp(x))),
    "hardsigmoid": lambda x, c: _clip6(x + c.type(3)) / c.type(6),
    "hardswish": lambda x, c: x * _clip6(x + c.type(3)) / c.type(6),
    "erf": lambda x, c: am.special().erf(x),
    "erfc": lambda x, c: am.special().erfc(x),
    "erfinv": lambda x, c: am.special().erfinv(x),
}


def _formula_kernel(name: str):
    f = _FORMULAS[name]

    def k(out, self):
        x, c = _fx(self)
        write(out, f(x, c))
    k.__name__ = name
    k.__doc__ = f"out = {name}(self)"
    kernel(name)(k)


for _name in _FORMULAS:
    _formula_kernel(_name)


@kernel("gelu")
def gelu(out, self, approximate="none"):
    """out = x * Phi(x) (exact, with erf) or its tanh approximation"""
    x, c = _fx(self)
    half = c.type(0.5)
    if approximate == "tanh":
        inner = c.type(_SQRT_2_OVER_PI) * (x + c.type(0.044715) * x * x * x)
        write(out, half * x * (c.type(1) + xp.tanh(inner)))
    else:
        write(out, half * x * (c.type(1) + am.special().erf(x * c.type(_SQRT1_2))))


@kernel("softplus")
def softplus(out, self, beta=1.0, threshold=20.0):
    """out = log(1 + exp(beta * x)) / beta, or x where beta * x > threshold"""
    x, c = _fx(self)
    bx = x * c.type(beta)
    write(out, xp.where(bx > c.type(threshold), x, xp.log1p(xp.exp(bx)) / c.type(beta)))


@kernel("elu")
def elu(out, self, alpha=1.0):
    """out = x if x > 0 else alpha * (exp(x) - 1)"""
    x, c = _fx(self)
    write(out, xp.where(x > 0, x, c.type(alpha) * xp.expm1(x)))


@kernel("leaky_relu")
def leaky_relu(out, self, negative_slope=0.01):
    """out = x if x > 0 else negative_slope * x"""
    x, c = _fx(self)
    write(out, xp.where(x > 0, x, x * c.type(negative_slope)))


@kernel("hardtanh")
def hardtanh(out, self, min_val=-1.0, max_val=1.0):
    """out = clamp(self, min_val, max_val) in self's dtype"""
    x = arr(self)
    write(out, xp.clip(x, min_val, max_val))
