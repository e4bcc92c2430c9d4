"""numba loops of the elementwise kernels (module level, so ``cache=True`` reuses them across
processes). Every loop runs over contiguous 1-D arrays of one compute dtype and writes the last
argument; `elementwise.jit_apply` prepares the operands. ``error_model="numpy"`` keeps IEEE
results (x/0 = inf) instead of raising as Python would.

The ``*_par`` loops are the multi-threaded versions, used above `elementwise.PARALLEL_MIN`
elements only: a parallel launch costs microseconds, and the first one in a process starts
numba's thread pool.
"""

from __future__ import annotations

import math

from numba import njit, prange

_jit = njit(cache=True, error_model="numpy")
_pjit = njit(cache=True, error_model="numpy", parallel=True)

_SQRT1_2 = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654
_TWO_OVER_SQRT_PI = 1.1283791670955126


# ---- activations ------------------------------------------------------------------------------


@_jit
def relu(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = 0.0 if v < 0.0 else v  # noqa: FURB136 - NaN is not < 0: it propagates


@_jit
def threshold_backward(g, x, threshold, out):
    for i in range(x.shape[0]):
        out[i] = 0.0 if x[i] <= threshold else g[i]  # NaN in x passes g


@_jit
def sigmoid(x, out):
    for i in range(x.shape[0]):
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))


@_jit
def silu(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v / (1.0 + math.exp(-v))


@_jit
def mish(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v * math.tanh(math.log1p(math.exp(v)))


@_jit
def _hardsigmoid1(v):
    """relu6(v + 3) / 6 of one value (NaN stays NaN)."""
    v = v + 3.0
    v = 0.0 if v < 0.0 else v
    v = 6.0 if v > 6.0 else v
    return v / 6.0


@_jit
def hardsigmoid(x, out):
    for i in range(x.shape[0]):
        out[i] = _hardsigmoid1(x[i])


@_jit
def hardswish(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * _hardsigmoid1(x[i])


@_jit
def gelu_erf(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.erf(v * _SQRT1_2))


@_jit
def gelu_tanh(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.tanh(_SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)))


@_jit
def softplus(x, beta, threshold, out):
    for i in range(x.shape[0]):
        bx = x[i] * beta
        out[i] = x[i] if bx > threshold else math.log1p(math.exp(bx)) / beta


@_jit
def elu(x, alpha, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v if v > 0 else alpha * math.expm1(v)


@_jit
def leaky_relu(x, slope, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v if v > 0 else v * slope


# ---- special functions ------------------------------------------------------------------------


@_jit
def erf(x, out):
    for i in range(x.shape[0]):
        out[i] = math.erf(x[i])


@_jit
def erfc(x, out):
    for i in range(x.shape[0]):
        out[i] = math.erfc(x[i])


@njit(cache=True, error_model="numpy", inline="always")
def _erfinv1(y):
    if y != y or y < -1.0 or y > 1.0:
        return math.nan
    if y == 1.0:
        return math.inf
    if y == -1.0:
        return -math.inf
    # Giles (2010) single-precision approximation, then two Newton steps on erf(x) = y
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    r = p * y
    for _ in range(2):
        r -= (math.erf(r) - y) / (_TWO_OVER_SQRT_PI * math.exp(-r * r))
    return r


@_jit
def erfinv(x, out):
    for i in range(x.shape[0]):
        out[i] = _erfinv1(float(x[i]))


# ---- fused ternaries --------------------------------------------------------------------------


@_jit
def lerp(a, b, w, out):
    for i in range(a.shape[0]):
        d = b[i] - a[i]
        wi = w[i]
        out[i] = a[i] + wi * d if abs(wi) < 0.5 else b[i] - d * (1.0 - wi)


@_jit
def lerp_scalar(a, b, w, out):
    small = abs(w) < 0.5
    for i in range(a.shape[0]):
        d = b[i] - a[i]
        out[i] = a[i] + w * d if small else b[i] - d * (1 - w)


@_jit
def addcmul(a, t1, t2, value, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + value * t1[i] * t2[i]


@_jit
def addcdiv(a, t1, t2, value, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + value * t1[i] / t2[i]


# ---- integer power with PyTorch's negative-exponent rule --------------------------------------


@_jit
def _pow_sign(x, y, r):
    """x ** y from r = |x| ** y: odd integral powers keep x's sign (-0.0 too), a finite negative
    x to a finite non-integral power is NaN, a NaN power is NaN unless x is +1 (C's pow; |x|
    hides -1), everything else (inf) is r."""
    if math.isnan(y):
        return r if x == 1.0 else math.nan
    # every float of magnitude 2**53 or more is an even integer; below it numba's math.floor
    # (which returns int64, wrapping beyond its range) is exact
    if math.isfinite(y) and abs(y) < 9007199254740992.0:
        if y == math.floor(y):
            if math.copysign(1.0, x) < 0 and math.floor(y / 2.0) * 2.0 != y:  # odd
                return -r
        elif x < 0 and math.isfinite(x):
            return math.nan
    return r


@_jit
def pow_sign_fix(x, y, r, out):
    for i in range(x.shape[0]):
        out[i] = _pow_sign(x[i], y[i], r[i])


@_jit
def pow_sign_fix_scalar(x, r, y, out):
    for i in range(x.shape[0]):
        out[i] = _pow_sign(x[i], y, r[i])


@_jit
def pow_int_scalar(a, n, out):
    """out = a ** n for an integral n (given as a float): llvm's powi, repeated multiplication"""
    k = int(n)
    m = -k if k < 0 else k
    one = a.dtype.type(1) if a.shape[0] else 1.0
    for i in range(a.shape[0]):
        p = a[i] ** m
        out[i] = one / p if k < 0 else p  # 1/0 is inf here (error_model="numpy")


@_jit
def int_pow1(base, e):
    """base ** e of two integers (int64), with PyTorch's rule for negative e."""
    if e < 0:
        if base == 1:
            return 1
        if base == -1:
            return 1 if e % 2 == 0 else -1
        return 0
    r = 1
    while e:
        if e & 1:
            r *= base
        base *= base
        e >>= 1
    return r


@_jit
def int_pow(a, b, out):
    for i in range(a.shape[0]):
        out[i] = int_pow1(a[i], b[i])


# ---- multi-threaded arithmetic (large contiguous float operands) ------------------------------


@_pjit
def add_par(a, b, alpha, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] + alpha * b[i]


@_pjit
def add_scalar_par(a, s, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] + s


@_pjit
def mul_par(a, b, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] * b[i]


@_pjit
def mul_scalar_par(a, s, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] * s


@_pjit
def div_par(a, b, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] / b[i]


@_pjit
def div_scalar_par(a, s, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] / s
