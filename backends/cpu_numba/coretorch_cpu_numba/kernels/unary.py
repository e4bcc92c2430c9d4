"""Unary elementwise kernels: math functions, rounding, predicates, activations.

numpy ufuncs for what numpy computes exactly (SIMD exp/log/sin... beat a scalar numba loop);
numba loops for what numpy lacks (erf, erfinv, sigmoid and the activations), computing in
float32 for float16 inputs.
"""
from __future__ import annotations

import numpy as np

from coretorch import dtypes as dt
from coretorch.ops.meta_rules import float_result

from ..elementwise import JIT_FLOAT, as_numpy, jit_apply, unsupported, write
from ..registry import kernel


def _ufunc_kernel(name: str, uf, floating: bool, *, no_bool: bool = False,
                  floats_only: bool = False, int_identity: bool = False,
                  bool_as_int64: bool = False):
    """Kernel applying numpy ufunc `uf` in the compute dtype (float for float-valued ops)."""
    def k(out, self):
        d = self._dtype
        if (no_bool and d is dt.bool) or (floats_only and not d.is_floating_point):
            raise unsupported(name, d)
        if int_identity and not d.is_floating_point:
            write(out, as_numpy(self))
            return
        if d is out._dtype:
            uf(as_numpy(self), out=as_numpy(out), casting="unsafe")
            return
        c = (float_result(d) if floating else
             dt.int64 if bool_as_int64 and d is dt.bool else d).numpy
        uf(as_numpy(self), out=as_numpy(out), signature=(c, c), casting="unsafe")
    k.__name__ = name
    k.__doc__ = f"out = {name}(self)"
    kernel(name)(k)


for _name, _uf in (("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log),
                   ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p),
                   ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan),
                   ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan),
                   ("sinh", np.sinh), ("cosh", np.cosh), ("tanh", np.tanh),
                   ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                   ("reciprocal", np.reciprocal)):
    _ufunc_kernel(_name, _uf, True)
_ufunc_kernel("abs", np.abs, False, no_bool=True)
_ufunc_kernel("neg", np.negative, False)
_ufunc_kernel("square", np.square, False, bool_as_int64=True)  # torch: square(bool) is int64
_ufunc_kernel("floor", np.floor, False, int_identity=True, no_bool=True)
_ufunc_kernel("ceil", np.ceil, False, int_identity=True, no_bool=True)
_ufunc_kernel("trunc", np.trunc, False, int_identity=True, no_bool=True)
_ufunc_kernel("bitwise_not", np.invert, False)


@kernel("positive")
def positive(out, self):
    """out = self"""
    if self._dtype is dt.bool:
        raise RuntimeError("positive(): The `+` operator, on a bool tensor is not supported.")
    write(out, as_numpy(self))


@kernel("rsqrt")
def rsqrt(out, self):
    """out = 1 / sqrt(self)"""
    c = float_result(self._dtype).numpy
    write(out, np.reciprocal(np.sqrt(as_numpy(self), dtype=c)))


@kernel("frac")
def frac(out, self):
    """out = self - trunc(self) (floats only, as in PyTorch)"""
    if not self._dtype.is_floating_point:
        raise unsupported("frac", self._dtype)
    x = as_numpy(self)
    write(out, x - np.trunc(x))


@kernel("relu")
def relu(out, self):
    """out = max(self, 0), NaN propagating"""
    if self._dtype is dt.bool:
        raise RuntimeError("relu(): Boolean inputs not supported for relu")
    x = as_numpy(self)
    np.maximum(x, x.dtype.type(0), out=as_numpy(out), casting="unsafe")


@kernel("sign")
def sign(out, self):
    """out = -1, 0 or 1 by the sign of self (0 for NaN, as in PyTorch)"""
    x = as_numpy(self)
    if self._dtype is dt.bool:
        write(out, x)
    elif self._dtype.is_floating_point:
        write(out, np.where(np.isnan(x), x.dtype.type(0), np.sign(x)))
    else:
        np.sign(x, out=as_numpy(out), casting="unsafe")


@kernel("round")
def round_(out, self, *, decimals=0):
    """out = self rounded half to even (to `decimals` decimal places)"""
    x = as_numpy(self)
    if not self._dtype.is_floating_point:
        if decimals != 0:
            raise unsupported("round", self._dtype, "floating point dtypes when decimals != 0")
        write(out, x)
    elif decimals == 0:
        np.rint(x, out=as_numpy(out), casting="unsafe")
    else:  # float16 scales in float32, as PyTorch does
        write(out, np.round(x.astype(np.float32) if x.dtype == np.float16 else x, decimals))


@kernel("nan_to_num")
def nan_to_num(out, self, nan=0.0, posinf=None, neginf=None):
    """out = self with NaN, +inf and -inf replaced (defaults: 0, the dtype's max and min)"""
    x = as_numpy(self)
    if not self._dtype.is_floating_point:
        write(out, x)
        return
    write(out, np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf))


# ---- predicates (bool results) ----------------------------------------------------------------

@kernel("logical_not")
def logical_not(out, self):
    """out = self == 0"""
    np.logical_not(as_numpy(self), out=as_numpy(out), casting="unsafe")


def _float_predicate(name: str, uf, int_value: bool):
    def k(out, self):
        if self._dtype.is_floating_point:
            uf(as_numpy(self), out=as_numpy(out))
        else:
            as_numpy(out).fill(int_value)
    k.__name__ = name
    k.__doc__ = f"out = {name}(self) ({int_value} everywhere for integer and bool tensors)"
    kernel(name)(k)


_float_predicate("isnan", np.isnan, False)
_float_predicate("isinf", np.isinf, False)
_float_predicate("isfinite", np.isfinite, True)
_float_predicate("isposinf", np.isposinf, False)
_float_predicate("isneginf", np.isneginf, False)


@kernel("signbit")
def signbit(out, self):
    """out = the sign bit of self (True for -0.0)"""
    x = as_numpy(self)
    if self._dtype.is_floating_point:
        np.signbit(x, out=as_numpy(out), casting="unsafe")
    elif self._dtype.is_signed:
        np.less(x, 0, out=as_numpy(out), casting="unsafe")
    else:
        as_numpy(out).fill(False)


# ---- numba-computed functions and activations -------------------------------------------------

def _jit_kernel(name: str, loop: str, params: tuple = ()):
    """Kernel running numba loop `loop` in float32/float64; `params` name the op's scalar
    arguments (with PyTorch's defaults) passed to the loop in the compute dtype."""
    names = [p for p, _ in params]
    defaults = dict(params)

    def k(out, self, *args, **kwargs):
        values = dict(defaults)
        values.update(zip(names, args))
        values.update(kwargs)
        jit_apply(loop, out, (self,), JIT_FLOAT[float_result(self._dtype)],
                  tuple(values[n] for n in names))
    k.__name__ = name
    k.__doc__ = f"out = {name}(self) (numba loop)"
    kernel(name)(k)


for _name in ("sigmoid", "silu", "mish", "hardsigmoid", "hardswish", "erf", "erfc", "erfinv"):
    _jit_kernel(_name, _name)
_jit_kernel("softplus", "softplus", (("beta", 1.0), ("threshold", 20.0)))
_jit_kernel("elu", "elu", (("alpha", 1.0),))
_jit_kernel("leaky_relu", "leaky_relu", (("negative_slope", 0.01),))


@kernel("gelu")
def gelu(out, self, approximate="none"):
    """out = x * Phi(x) (exact, with erf) or its tanh approximation"""
    jit_apply("gelu_tanh" if approximate == "tanh" else "gelu_erf", out, (self,),
              JIT_FLOAT[float_result(self._dtype)])


@kernel("hardtanh")
def hardtanh(out, self, min_val=-1.0, max_val=1.0):
    """out = clamp(self, min_val, max_val) in self's dtype"""
    np.clip(as_numpy(self), min_val, max_val, out=as_numpy(out), casting="unsafe")
