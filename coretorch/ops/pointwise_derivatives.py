"""Derivative formulas of the elementwise ops (declared in `pointwise.py` with ``**grad_of(name)``).

Convention (see `coretorch.ops.declare`): ``fn(ctx, grad) -> tuple`` with one entry per
positional argument; gradients may keep the broadcast shape (autograd reduces them). Formulas
are written with coretorch ops only, so they run on every backend and differentiate again.
"""
from __future__ import annotations

import math
from typing import Callable

from .derivative_utils import is_tensor, op, saves

__all__ = ["grad_of", "DERIVATIVES"]

# name -> (formula, save_result)
DERIVATIVES: dict[str, tuple[Callable, bool]] = {}


def grad_of(name: str) -> dict:
    """``declare(..., **grad_of(name))``: the derivative and save_result flag of op `name`."""
    fn, save_result = DERIVATIVES.get(name, (None, False))
    return {"derivative": fn, "save_result": save_result}


def _d(name: str, *, result: bool = False, saved: tuple | None = None):
    def register(fn: Callable) -> Callable:
        if saved is not None:
            saves(*saved)(fn)
        fn.__name__ = f"{name}_backward"
        DERIVATIVES[name] = (fn, result)
        return fn
    return register


def _where(cond, a, b):
    return op("where")(cond, a, b)


def _zeros(g):
    return op("zeros_like")(g)


# ---- unary ------------------------------------------------------------------------------------

def _unary(name: str, fn: Callable, *, result: bool = False, uses_self: bool = True) -> None:
    def formula(ctx, g):
        return (fn(g, ctx.args[0], ctx.result),)
    _d(name, result=result, saved=(0,) if uses_self else ())(formula)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0

for _name in ("sign", "floor", "ceil", "trunc", "round"):
    _unary(_name, lambda g, x, r: _zeros(g), uses_self=False)
_unary("abs", lambda g, x, r: g * x.sign())
_unary("neg", lambda g, x, r: g.neg(), uses_self=False)
_unary("frac", lambda g, x, r: g, uses_self=False)
_unary("positive", lambda g, x, r: g, uses_self=False)
_unary("relu", lambda g, x, r: g * (r > 0), result=True, uses_self=False)
_unary("square", lambda g, x, r: g * x * 2)
_unary("exp", lambda g, x, r: g * r, result=True, uses_self=False)
_unary("exp2", lambda g, x, r: g * r * _LN2, result=True, uses_self=False)
_unary("expm1", lambda g, x, r: g * (r + 1), result=True, uses_self=False)
_unary("log", lambda g, x, r: g / x)
_unary("log2", lambda g, x, r: g / (x * _LN2))
_unary("log10", lambda g, x, r: g / (x * _LN10))
_unary("log1p", lambda g, x, r: g / (x + 1))
_unary("sqrt", lambda g, x, r: g / (r * 2), result=True, uses_self=False)
_unary("rsqrt", lambda g, x, r: g * r * r * r * -0.5, result=True, uses_self=False)
_unary("sin", lambda g, x, r: g * x.cos())
_unary("cos", lambda g, x, r: g * x.sin().neg())
_unary("tan", lambda g, x, r: g * (r * r + 1), result=True, uses_self=False)
_unary("asin", lambda g, x, r: g * (1 - x * x).rsqrt())
_unary("acos", lambda g, x, r: g.neg() * (1 - x * x).rsqrt())
_unary("atan", lambda g, x, r: g / (x * x + 1))
_unary("sinh", lambda g, x, r: g * x.cosh())
_unary("cosh", lambda g, x, r: g * x.sinh())
_unary("tanh", lambda g, x, r: g * (1 - r * r), result=True, uses_self=False)
_unary("asinh", lambda g, x, r: g * (x * x + 1).rsqrt())
_unary("acosh", lambda g, x, r: g * (x * x - 1).rsqrt())
_unary("atanh", lambda g, x, r: g / (1 - x * x))
_unary("sigmoid", lambda g, x, r: g * r * (1 - r), result=True, uses_self=False)
_unary("erf", lambda g, x, r: g * (x * x).neg().exp() * _TWO_OVER_SQRT_PI)
_unary("erfc", lambda g, x, r: g * (x * x).neg().exp() * -_TWO_OVER_SQRT_PI)
_unary("erfinv", lambda g, x, r: g * (r * r).exp() * _SQRT_PI_OVER_2, result=True,
       uses_self=False)
_unary("reciprocal", lambda g, x, r: g * r * r * -1.0, result=True, uses_self=False)
_unary("nan_to_num", lambda g, x, r: g * x.isfinite())


def _silu(g, x, r):
    s = x.sigmoid()
    return g * s * (1 + x * (1 - s))


def _mish(g, x, r):
    t = x.softplus().tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


def _hardsigmoid(g, x, r):
    return g * ((x > -3.0) & (x < 3.0)) / 6.0


def _hardswish(g, x, r):
    return _where(x < -3.0, 0.0, _where(x <= 3.0, g * (x / 3.0 + 0.5), g))


_unary("silu", _silu)
_unary("mish", _mish)
_unary("hardsigmoid", _hardsigmoid)
_unary("hardswish", _hardswish)


@_d("leaky_relu", saved=(0,))
def _leaky_relu(ctx, g):
    x = ctx.args[0]
    slope = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("negative_slope", 0.01)
    return (_where(x > 0, g, g * slope),)


_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@_d("gelu", saved=(0,))
def _gelu(ctx, g):
    x = ctx.args[0]
    approximate = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("approximate", "none")
    if approximate == "tanh":
        x2 = x * x
        t = ((x + x2 * x * 0.044715) * _SQRT_2_OVER_PI).tanh()
        d = (t + 1) * 0.5 + x * (1 - t * t) * (x2 * (3 * 0.044715) + 1) * (0.5 * _SQRT_2_OVER_PI)
        return (g * d,)
    cdf = ((x * _SQRT1_2).erf() + 1) * 0.5
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


@_d("softplus", saved=(0,))
def _softplus(ctx, g):
    x, a, kw = ctx.args[0], ctx.args, ctx.kwargs
    beta = a[1] if len(a) > 1 else kw.get("beta", 1.0)
    threshold = a[2] if len(a) > 2 else kw.get("threshold", 20.0)
    z = x * beta
    return (_where(z > threshold, g, g * z.sigmoid()),)


@_d("elu", saved=(0,))
def _elu(ctx, g):
    x = ctx.args[0]
    alpha = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("alpha", 1.0)
    return (_where(x > 0, g, g * x.exp() * alpha),)


@_d("hardtanh", saved=(0,))
def _hardtanh(ctx, g):
    x, a, kw = ctx.args[0], ctx.args, ctx.kwargs
    lo = a[1] if len(a) > 1 else kw.get("min_val", -1.0)
    hi = a[2] if len(a) > 2 else kw.get("max_val", 1.0)
    return (g * ((x > lo) & (x < hi)),)


# ---- binary -----------------------------------------------------------------------------------

@_d("add", saved=())
def _add(ctx, g):
    if not ctx.needs_input_grad[1]:
        return (g,)
    alpha = ctx.kwargs.get("alpha", 1)
    return (g, g if alpha == 1 else g * alpha)


@_d("sub", saved=())
def _sub(ctx, g):
    if not ctx.needs_input_grad[1]:
        return (g,)
    alpha = ctx.kwargs.get("alpha", 1)
    return (g, g.neg() if alpha == 1 else g * -alpha)


@_d("mul")
def _mul(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g * b if na else None, g * a if nb else None)


@_d("div")
def _div(ctx, g):
    a, b = ctx.args
    if ctx.kwargs.get("rounding_mode") is not None:
        return (_zeros(g) if is_tensor(a) else None, _zeros(g) if is_tensor(b) else None)
    na, nb = ctx.needs_input_grad
    return (g / b if na else None, g.neg() * a / (b * b) if nb else None)


@_d("pow", result=True)
def _pow(ctx, g):
    a, e = ctx.args
    na, ne = ctx.needs_input_grad
    ga = gb = None
    if na:
        if not is_tensor(e) and e == 0:
            ga = _zeros(g)
        else:
            ga = g * e * a.pow(e - 1)
    if ne:
        r = ctx.result
        if is_tensor(a):
            gb = _where((a == 0) & (e >= 0), 0.0, g * r * a.log())
        elif a > 0:
            gb = g * r * math.log(a)
        else:  # log of a non-positive base: 0 where 0 ** e is flat, else undefined
            gb = _where((e >= 0) & (a == 0), 0.0, g * r * float("nan"))
    return (ga, gb)


def _minmax(name: str, pick_self: str) -> None:
    @_d(name)
    def formula(ctx, g):
        a, b = ctx.args
        half = g * 0.5
        wins_a = (a > b) if pick_self == "gt" else (a < b)
        wins_b = (a < b) if pick_self == "gt" else (a > b)
        tie = a == b
        return (_where(wins_a, g, _where(tie, half, 0.0)),
                _where(wins_b, g, _where(tie, half, 0.0)))


_minmax("maximum", "gt")
_minmax("minimum", "lt")


def _fminmax(name: str, cmp: str) -> None:
    @_d(name)
    def formula(ctx, g):
        a, b = ctx.args
        take_a = (a >= b) if cmp == "ge" else (a <= b)
        if is_tensor(b):
            take_a = take_a | b.isnan()
        elif b != b:  # a NaN scalar: fmax/fmin return `a`
            take_a = a == a
        return (_where(take_a, g, 0.0), _where(take_a, 0.0, g))


_fminmax("fmax", "ge")
_fminmax("fmin", "le")


@_d("remainder")
def _remainder(ctx, g):
    a, b = ctx.args
    gb = g.neg() * op("div")(a, b, rounding_mode="floor") if ctx.needs_input_grad[1] else None
    return (g, gb)


@_d("fmod")
def _fmod(ctx, g):
    a, b = ctx.args
    gb = g.neg() * op("div")(a, b, rounding_mode="trunc") if ctx.needs_input_grad[1] else None
    return (g, gb)


@_d("atan2")
def _atan2(ctx, g):
    a, b = ctx.args
    denom = a * a + b * b
    return (g * b / denom, g.neg() * a / denom)


@_d("hypot", result=True)
def _hypot(ctx, g):
    a, b = ctx.args
    r = ctx.result
    return (g * a / r, g * b / r)


@_d("logaddexp")
def _logaddexp(ctx, g):
    a, b = ctx.args
    return (g / ((b - a).exp() + 1), g / ((a - b).exp() + 1))


@_d("xlogy")
def _xlogy(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    if na:
        log_b = b.log() if is_tensor(b) else (math.log(b) if b > 0 else float("nan"))
        ga = _where((a == 0) & (b <= 0), 0.0, g * log_b)
    else:
        ga = None
    gb = g * a / b if nb else None
    return (ga, gb)


# ---- ternary ----------------------------------------------------------------------------------

@_d("where", saved=(0,))
def _where_backward(ctx, g):
    cond = ctx.args[0]
    _, na, nb = ctx.needs_input_grad
    return (None, _where(cond, g, 0.0) if na else None, _where(cond, 0.0, g) if nb else None)


@_d("clamp")
def _clamp(ctx, g):
    a = ctx.args
    x = a[0]
    lo = a[1] if len(a) > 1 else ctx.kwargs.get("min")
    hi = a[2] if len(a) > 2 else ctx.kwargs.get("max")
    # every element's gradient goes to exactly one of self, min, max
    if lo is None:
        keep = x <= hi
    elif hi is None:
        keep = x >= lo
    else:
        keep = (x >= lo) & (x <= hi)
    g_self = _where(keep, g, 0.0)
    g_lo = g_hi = None
    if lo is not None and is_tensor(lo):
        to_lo = ~keep if hi is None else (~keep) & (x < lo) & (lo < hi)
        g_lo = _where(to_lo, g, 0.0)
    if hi is not None and is_tensor(hi):
        to_hi = ~keep if lo is None else (~keep) & ~((x < lo) & (lo < hi))
        g_hi = _where(to_hi, g, 0.0)
    return (g_self, g_lo, g_hi)


@_d("lerp")
def _lerp(ctx, g):
    a, b, w = ctx.args
    nw = ctx.needs_input_grad[2]
    return (g * (1 - w), g * w, g * (b - a) if nw else None)


@_d("addcmul")
def _addcmul(ctx, g):
    _, t1, t2 = ctx.args
    v = ctx.kwargs.get("value", 1)
    _, n1, n2 = ctx.needs_input_grad
    return (g, g * t2 * v if n1 else None, g * t1 * v if n2 else None)


@_d("addcdiv")
def _addcdiv(ctx, g):
    _, t1, t2 = ctx.args
    v = ctx.kwargs.get("value", 1)
    _, n1, n2 = ctx.needs_input_grad
    return (g, g * v / t2 if n1 else None, g.neg() * v * t1 / (t2 * t2) if n2 else None)
