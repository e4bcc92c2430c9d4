"""Elementwise kernels the cpu backend runs faster than the backend kit's array-API ones.

Everything else elementwise comes from `coretorch.backend_kit.pointwise` (numpy ufuncs). Here:
the per-op-overhead path of small same-dtype arithmetic (one ufunc call, nothing else),
multi-threaded numba loops for large contiguous float operands, numba loops for what numpy lacks
(erf, erfinv, sigmoid, gelu, silu, integer powers), and fused kernels for composites that
training loops call often (relu, lerp/addcmul/addcdiv: the optimizers' inner loops; sub).
"""

from __future__ import annotations

import numpy as np

from coretorch.backend_kit import pointwise as kit
from coretorch.backend_kit.array_kit import opmath
from coretorch.tensor.impl import TensorImpl

from ..elementwise import JIT_FLOAT, PARALLEL_MIN, as_numpy, jit_apply, loops, par_flats
from ..registry import kernel

_T = TensorImpl


def _same_dtype(out, a, b) -> bool:
    d = out._dtype
    return isinstance(a, _T) and isinstance(b, _T) and a._dtype is d and b._dtype is d


def _small_same_dtype(ufunc, out, a, b) -> bool:
    """The per-op-overhead path: `ufunc` of two tensors of out's dtype into a small `out`, with
    the numpy views read from the tensors' caches (each `as_numpy` call costs ~0.8k
    instructions); False when this is not that case."""
    d = out._dtype
    if isinstance(a, _T) and isinstance(b, _T) and a._dtype is d and b._dtype is d:
        o = out._cache
        if o is None:
            o = as_numpy(out)
        if o.size < PARALLEL_MIN:
            x, y = a._cache, b._cache
            ufunc(as_numpy(a) if x is None else x, as_numpy(b) if y is None else y, out=o)
            return True
    return False


def _add(out, self, other, alpha, sign: int) -> bool:
    """Fast add/sub of same-dtype operands; False when the kit's general kernel must run."""
    if alpha != 1 or not isinstance(self, _T) or self._dtype is not out._dtype:
        return False
    o = as_numpy(out)
    if isinstance(other, _T):
        if other._dtype is not out._dtype:
            return False
        flats = par_flats(out, self, other)
        if flats is None:
            (np.add if sign > 0 else np.subtract)(as_numpy(self), as_numpy(other), out=o)
        else:
            loops().add_par(flats[0], flats[1], flats[0].dtype.type(sign), flats[2])
        return True
    if not out._dtype.is_floating_point:
        return False
    flats = par_flats(out, self, other if sign > 0 else -other)
    if flats is None:
        return False
    loops().add_scalar_par(*flats)
    return True


def _ufunc_or_parallel(ufunc, loop: str, out, self, other) -> None:
    """Same-dtype tensors: numpy's `ufunc`, or the multi-threaded numba `loop` for large
    contiguous float operands."""
    flats = par_flats(out, self, other)
    if flats is None:
        ufunc(as_numpy(self), as_numpy(other), out=as_numpy(out))
    else:
        getattr(loops(), loop)(*flats)


@kernel("add")
def add(out, self, other, alpha):
    """out = self + alpha * other"""
    if alpha == 1 and _small_same_dtype(np.add, out, self, other):
        return
    if not _add(out, self, other, alpha, 1):
        kit.add(out, self, other, alpha)


@kernel("sub")
def sub(out, self, other, alpha):
    """out = self - alpha * other (bool operands were refused by the meta rule)"""
    if alpha == 1 and _small_same_dtype(np.subtract, out, self, other):
        return
    if not _add(out, self, other, alpha, -1):
        kit.add(out, self, other, -alpha)


@kernel("mul")
def mul(out, self, other):
    """out = self * other"""
    if _small_same_dtype(np.multiply, out, self, other):
        return
    if _same_dtype(out, self, other):
        _ufunc_or_parallel(np.multiply, "mul_par", out, self, other)
        return
    if (
        isinstance(self, _T)
        and not isinstance(other, _T)
        and self._dtype is out._dtype
        and out._dtype.is_floating_point
    ):
        flats = par_flats(out, self, other)
        if flats is not None:
            loops().mul_scalar_par(*flats)
            return
    kit.mul(out, self, other)


@kernel("div")
def div(out, self, other, rounding_mode):
    """out = self / other, optionally rounded ('trunc', 'floor') as in PyTorch"""
    if rounding_mode is None and _small_same_dtype(np.true_divide, out, self, other):
        return
    if rounding_mode is None and _same_dtype(out, self, other):
        _ufunc_or_parallel(np.true_divide, "div_par", out, self, other)
        return
    kit.div(out, self, other, rounding_mode)


# float ** small integer: a multiplication loop (numpy's float pow takes a ~100x slower path for
# negative bases); larger integral exponents and other powers of negative bases go through
# |x| ** y with the sign or NaN fixed after (numpy is fast on non-negative bases only)
_SMALL_POWER = 8


def _float_pow(out, self, exponent) -> bool:
    """Float pow without the negative-base cliff; False when the kit's kernel is as fast."""
    cdt = JIT_FLOAT.get(out._dtype)
    if cdt is None:
        return False
    if (
        isinstance(self, _T)
        and isinstance(exponent, (int, float))
        and float(exponent).is_integer()
        and abs(exponent) <= _SMALL_POWER
    ):
        jit_apply("pow_int_scalar", out, (self,), cdt, (exponent,))
        return True
    x = np.asarray(as_numpy(self) if isinstance(self, _T) else self)
    if x.dtype.kind not in "fiub" or not (x < 0).any():
        return False
    y = as_numpy(exponent) if isinstance(exponent, _T) else exponent
    r = np.power(np.abs(x.astype(cdt, copy=False)), np.asarray(y, dtype=cdt))
    base = self if isinstance(self, _T) else x
    if isinstance(exponent, _T):
        jit_apply("pow_sign_fix", out, (base, exponent, r), cdt)
    else:
        jit_apply("pow_sign_fix_scalar", out, (base, r), cdt, (exponent,))
    return True


@kernel("pow")
def pow_(out, self, exponent):
    """out = self ** exponent; integer powers in a numba loop (PyTorch's rules: 2 ** -1 == 0,
    (-1) ** -3 == -1); float powers without numpy's slow path for negative bases"""
    if out._dtype.is_floating_point:
        if not _float_pow(out, self, exponent):
            kit.pow(out, self, exponent)
        return
    if out._dtype.name == "bool" or out._dtype.is_complex:
        kit.pow(out, self, exponent)
        return
    i64 = np.dtype(np.int64)
    jit_apply(
        "int_pow",
        out,
        tuple(x if isinstance(x, _T) else np.asarray(x, i64) for x in (self, exponent)),
        i64,
    )


def _jit_unary(name: str, loop: str, params: tuple = ()):
    def k(out, self):
        jit_apply(loop, out, (self,), JIT_FLOAT[out._dtype], params)

    k.__name__ = k.__qualname__ = name
    k.__doc__ = f"out = {name}(self) (numba loop)"
    kernel(name)(k)


for _name in ("sigmoid", "erf", "erfc", "erfinv", "silu"):
    _jit_unary(_name, _name)


@kernel("gelu")
def gelu(out, self, approximate):
    """out = self * Phi(self) (exact, with erf) or its tanh approximation (numba loop)"""
    jit_apply(
        "gelu_tanh" if approximate == "tanh" else "gelu_erf", out, (self,), JIT_FLOAT[out._dtype]
    )


@kernel("relu")
def relu(out, self):
    """out = max(self, 0), NaN propagating (a numba loop for floats: numpy's NaN-propagating
    maximum takes 3-4x as long on float32)"""
    if out._dtype.is_floating_point:
        jit_apply("relu", out, (self,), JIT_FLOAT[out._dtype])
        return
    x = as_numpy(self)
    np.maximum(x, x.dtype.type(0), out=as_numpy(out), casting="unsafe")


@kernel("threshold_backward")
def threshold_backward(out, grad_output, self, threshold):
    """out = 0 where self <= threshold, else grad_output (a numba loop for floats: relu's
    backward as a mask and a float-by-bool product took 3x as long)"""
    if out._dtype.is_floating_point:
        jit_apply(
            "threshold_backward", out, (grad_output, self), JIT_FLOAT[out._dtype], (threshold,)
        )
        return
    np.copyto(
        as_numpy(out),
        np.where(as_numpy(self) <= threshold, 0, as_numpy(grad_output)),
        casting="unsafe",
    )


@kernel("lerp")
def lerp(out, self, end, weight):
    """out = self + weight * (end - self) from the nearer end (fused numba loop)"""
    if isinstance(weight, _T):
        jit_apply("lerp", out, (self, end, weight), JIT_FLOAT[out._dtype])
    else:
        jit_apply("lerp_scalar", out, (self, end), JIT_FLOAT[out._dtype], (weight,))


def _addc(name: str, out, self, t1, t2, value) -> None:
    if out._dtype.is_floating_point:
        jit_apply(name, out, (self, t1, t2), JIT_FLOAT[out._dtype], (value,))
        return
    c = opmath(out._dtype)
    prod = np.multiply(as_numpy(t1), as_numpy(t2), dtype=c)
    np.copyto(
        as_numpy(out),
        np.add(as_numpy(self), np.multiply(prod, c.type(value), dtype=c), dtype=c),
        casting="unsafe",
    )


@kernel("addcmul")
def addcmul(out, self, tensor1, tensor2, value):
    """out = self + value * tensor1 * tensor2 (fused numba loop for floats)"""
    _addc("addcmul", out, self, tensor1, tensor2, value)


@kernel("addcdiv")
def addcdiv(out, self, tensor1, tensor2, value):
    """out = self + value * tensor1 / tensor2 (fused numba loop)"""
    _addc("addcdiv", out, self, tensor1, tensor2, value)
