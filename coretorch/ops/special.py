"""Special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma), Bessel functions,
error-function relatives, zeta, incomplete gamma and the orthogonal polynomials, with PyTorch's
derivatives.

Two primitives compute them: ``_unary_special(self, name)`` and ``_binary_special(self, other,
name)`` evaluate the function `name` elementwise (`coretorch.backend_kit.special`: scipy.special
on numpy backends, cupyx.scipy.special on CuPy). Every public op is a composite over them (or over
other ops, as ``special_ndtr`` = erfc and ``sinc``) with its own meta rule and derivative; ops
PyTorch does not differentiate raise "the derivative for 'op' is not implemented" at backward.
The ``torch.special`` namespace is `coretorch.special`.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare
from .meta_rules import float_result
from .pointwise import binary_meta, binary_spec, flops_pointwise
from .sorting import holds_data

__all__ = ["UNARY_SPECIAL", "BINARY_SPECIAL", "POLYNOMIALS", "VALUES_ONLY", "typed_binary_meta"]

_T = Tensor
# outputs that never require grad, as PyTorch's (differentiated as one op that has no derivative)
VALUES_ONLY: dict[str, Any] = dict(kind="composite_explicit", differentiable=False)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_PI = math.log(math.pi)

# the functions the two primitives compute (backend_kit.special maps each to its kernel)
UNARY_SPECIAL = (
    "gammaln",
    "psi",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "erfcx",
    "ndtri",
    "log_ndtr",
    "j0",
    "j1",
    "y0",
    "y1",
    "k0",
    "k1",
    "k0e",
    "k1e",
    "airy_ai",
)
POLYNOMIALS = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
)
BINARY_SPECIAL = ("zeta", "gammainc", "gammaincc", "nextafter", "gcd") + POLYNOMIALS


def _op(name: str):
    return REGISTRY[name].op.entry


def _where(cond, a, b):
    return REGISTRY["where"].op.entry(cond, a, b)


def _unary(x, name: str):
    return REGISTRY["_unary_special"].op.entry(x, name)


def _binary(a, b, name: str):
    return REGISTRY["_binary_special"].op.entry(a, b, name)


def _float_meta(name: str):
    def meta(self):
        return (self._shape, float_result(self._dtype), self._device)

    meta.__name__ = f"meta_{name}"
    return meta


def typed_binary_meta(name: str, kind: str):
    """The meta rule of a binary op computing in the promoted dtype of its operands, which must
    be floating point (`kind` "float") or integer (`kind` "int", bool refused)."""

    def meta(self, other):
        spec = binary_spec(name, self, other, "promote")
        d = spec[1]
        if d.is_floating_point != (kind == "float") or d is dt.bool:
            what = "floating point" if kind == "float" else "integer"
            raise NotImplementedError(
                f"{name}(): not implemented for '{d.name}'; expected {what} tensors"
            )
        return spec

    meta.__name__ = f"meta_{name}"
    return meta


# ---- the primitives -----------------------------------------------------------------------------


def _meta_unary_special(self, name):
    if name not in UNARY_SPECIAL:
        raise ValueError(
            f"_unary_special(): unknown function {name!r}; expected one of "
            f"{', '.join(UNARY_SPECIAL)}"
        )
    return (self._shape, float_result(self._dtype), self._device)


def _meta_binary_special(self, other, name):
    if name not in BINARY_SPECIAL:
        raise ValueError(
            f"_binary_special(): unknown function {name!r}; expected one of "
            f"{', '.join(BINARY_SPECIAL)}"
        )
    return binary_spec(
        "_binary_special", self, other, "promote" if name in ("gcd", "nextafter") else "float"
    )


# ---- the gamma family ---------------------------------------------------------------------------


def _lgamma(self):
    """log |Γ(self)| (+inf at the poles and at -inf, as PyTorch)."""
    return _where(self.eq(-math.inf), math.inf, _unary(self, "gammaln"))


def _d_lgamma(ctx, g):
    return (g * _op("digamma")(ctx.self),)


def _digamma(self):
    """ψ(self) = d/dx log Γ(x): -inf at +0, +inf at -0, NaN at negative integers."""
    return _unary(self, "psi")


def _d_digamma(ctx, g):
    return (g * _op("polygamma")(1, ctx.self),)


def _meta_polygamma(n, self):
    if n < 0:
        raise RuntimeError(f"polygamma(): polygamma(n, x) does not support negative n, got {n}")
    return _float_meta("polygamma")(self)


def _polygamma(n, self):
    """The n-th derivative of digamma: (-1)^(n+1) n! ζ(n+1, self) for n >= 1."""
    if n == 0:
        return _digamma(self)
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    try:
        factorial = float(math.factorial(n))
    except OverflowError:
        factorial = math.inf
    r = _binary(float(n + 1), x, "zeta") * (factorial if n % 2 else -factorial)
    return _where(x.eq(-math.inf), math.nan, r)


def _d_polygamma(ctx, g):
    return (None, g * _op("polygamma")(ctx.n + 1, ctx.self))


def _meta_mvlgamma(self, p):
    if p < 1:
        raise RuntimeError(f"mvlgamma(): p has to be greater than or equal to 1, got {p}")
    return _float_meta("mvlgamma")(self)


def _mvlgamma(self, p):
    """The multivariate log-gamma function of dimension `p`: sum_j lgamma(self - j/2) +
    p (p - 1) / 4 log(pi); every element must exceed (p - 1) / 2."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    if holds_data(x) and x.numel() and not bool(x.gt(0.5 * (p - 1)).all().item()):
        raise RuntimeError("mvlgamma(): All elements must be greater than (p-1)/2")
    offsets = _op("arange")(p, dtype=x._dtype, device=x._device) * 0.5
    return _op("lgamma")(x.unsqueeze(-1) - offsets).sum(-1) + p * (p - 1) / 4 * _LOG_PI


# ---- Bessel and error-function relatives ---------------------------------------------------------


def _scipy_unary(name: str, fn: str):
    def impl(self):
        return _unary(self, fn)

    impl.__name__ = f"_{name}"
    impl.__doc__ = f"``{name}``: the special function {fn} of each element of `input`."
    return impl


def _d_i0(ctx, g):
    return (g * _op("special_i1")(ctx.self),)


def _d_i0e(ctx, g):
    x = ctx.self
    return (g * (_op("special_i1e")(x) - x.sign() * ctx.result),)


def _tiny_safe(x):
    """(|x| > eps, x with eps where it is not): the Bessel-i1 derivatives' guard at 0."""
    eps = dt.finfo(x._dtype).eps
    big = x.abs().gt(eps)
    return big, _where(big, x, eps)


def _d_i1(ctx, g):
    big, safe = _tiny_safe(ctx.self)
    return (g * _where(big, _op("i0")(safe) - ctx.result / safe, 0.5),)


def _d_i1e(ctx, g):
    big, safe = _tiny_safe(ctx.self)
    gx = _op("special_i0e")(safe) - ctx.result * (safe.sign() + safe.reciprocal())
    return (g * _where(big, gx, 0.5),)


def _d_erfcx(ctx, g):
    return (g * (ctx.self * ctx.result * 2.0 - 2.0 / math.sqrt(math.pi)),)


def _d_ndtri(ctx, g):
    r = ctx.result
    return (g * (r * r * 0.5).exp() * _SQRT_2PI,)


def _d_log_ndtr(ctx, g):
    x = ctx.self
    return (g * (ctx.result + x * x * 0.5).neg().exp() / _SQRT_2PI,)


def _ndtr(self):
    """The standard normal cdf: erfc(-self / sqrt(2)) / 2."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    return x.mul(-math.sqrt(0.5)).erfc().mul(0.5)


def _spherical_bessel_j0(self):
    """sin(self) / self, by its Taylor series for |self| < 0.5 and 0 at ±inf (as PyTorch)."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    x2 = x * x
    series = 1.0 / 6227020800.0
    for c in (-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0):
        series = x2 * series + c
    small = x.abs().lt(0.5)
    r = _where(small, series, x.sin() / _where(small, 1.0, x))
    return _where(x.isinf(), 0.0, r)


def _sinc(self):
    """sin(pi self) / (pi self), 1 at 0."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    px = x * math.pi
    zero = x.eq(0)
    return _where(zero, 1.0, px.sin() / _where(zero, 1.0, px))


def _d_sinc(ctx, g):
    x = ctx.self
    px = x * math.pi
    d = (px * px.cos() - px.sin()) / (px * x)
    return (g * _where(x.eq(0), 0.0, d),)


def _meta_logit(self, eps):
    return _float_meta("logit")(self)


def _logit(self, eps):
    """log(self / (1 - self)), with self clamped to [eps, 1 - eps] when eps is given."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


def _d_logit(ctx, g):
    """PyTorch's: g / (x (1 - x)); NaN outside [0, 1] (0 outside [eps, 1 - eps] with eps);
    g * inf at 0 and 1. The masked places divide by a safe value, so that twice-differentiating
    gives no 0 * inf."""
    x, eps = ctx.self, ctx.eps
    lo, hi = (0, 1) if eps is None else (eps, 1 - eps)
    outside = x.lt(lo) | x.gt(hi)
    denom = _where(outside, 1.0, x * (1 - x))
    if eps is None:  # at 0 and 1 (either sign of zero): divide by +0
        denom = _where(x.eq(0) | x.eq(1), 0.0, denom)
    return (_where(outside, math.nan if eps is None else 0.0, g / denom),)


def _entr(self):
    """-self log(self) for self > 0; 0 at 0; -inf below 0 (NaN stays NaN)."""
    x = self if self._dtype.is_floating_point else self.to(float_result(self._dtype))
    pos = x.gt(0)
    r = _where(
        pos, x.neg() * _where(pos, x, 1.0).log(), _where(x.eq(0), 0.0, -math.inf).to(x._dtype)
    )
    return _where(x.isnan(), x, r)


def _d_entr(ctx, g):
    return (g * (ctx.self.log() + 1).neg(),)


def _xlog1py(self, other):
    """self * log1p(other), 0 where self == 0 (unless other is NaN)."""
    if not isinstance(self, _T):
        self = other.new_full((), self)
    spec = binary_spec("special_xlog1py", self, other, "float")
    x = self if self._dtype is spec[1] else self.to(spec[1])
    y = (
        other.log1p()
        if isinstance(other, _T)
        else math.log1p(other)
        if other > -1
        else (-math.inf if other == -1 else math.nan)
    )
    r = x * y
    zero = self.eq(0)
    if isinstance(other, _T):
        zero = zero & other.isnan().logical_not()
    elif other != other:
        return r
    return _where(zero, 0.0, r)


def _d_xlog1py(ctx, g):
    a, b = ctx.self, ctx.other
    na, nb = ctx.needs_input_grad
    ga = (
        _where(a.eq(0) & (b <= -1), 0.0, g * (b.log1p() if isinstance(b, _T) else math.log1p(b)))
        if na
        else None
    )
    return (ga, g * a / (b + 1) if nb else None)


# ---- zeta and the incomplete gamma functions ----------------------------------------------------


def _zeta(self, other):
    """The Hurwitz zeta function ζ(self, other) = sum_k (k + other)^-self."""
    return _binary(self, other, "zeta")


def _d_zeta(ctx, g):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError(
            "the derivative for 'special_zeta' with respect to the first "
            "argument (self) is not implemented."
        )
    x = ctx.self
    return (None, g * -x * _binary(x + 1.0 if isinstance(x, _T) else x + 1.0, ctx.other, "zeta"))


def _gammainc(self, other):
    """The regularized lower incomplete gamma function P(self, other)."""
    return _binary(self, other, "gammainc")


def _gammaincc(self, other):
    """The regularized upper incomplete gamma function Q(self, other) = 1 - P(self, other)."""
    return _binary(self, other, "gammaincc")


def _d_gammainc(ctx, g):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError(
            f"the derivative for '{ctx.decl.name}' with respect to the "
            f"first argument (self) is not implemented."
        )
    a, x = ctx.self, ctx.other
    lg = _op("lgamma")(a) if isinstance(a, _T) else math.lgamma(a)
    density = ((a - 1) * x.log() - x - lg).exp()
    return (None, g * density if ctx.decl.name == "special_gammainc" else g * density.neg())


def _polynomial(name: str):
    def impl(self, n):
        return _binary(self, n, name)

    impl.__name__ = f"_{name}"
    impl.__doc__ = (
        f"The {name.replace('_', ' ')} of degree `n` (truncated to an integer; 0 for "
        f"n < 0) at self."
    )
    return impl


# ---- declarations -----------------------------------------------------------------------------


def _declare_all() -> None:
    prim: dict[str, Any] = dict(differentiable=False, flops=flops_pointwise, method=False)
    declare(
        "_unary_special(Tensor self, str name) -> Tensor",
        _meta_unary_special,
        family="unary",
        doc="The scipy.special-style function `name` of each element of `input` (the "
        "primitive behind the unary special functions).",
        **prim,
    )
    declare(
        "_binary_special(Tensor|Scalar self, Tensor|Scalar other, str name) -> Tensor",
        _meta_binary_special,
        family="binary",
        doc="The two-argument special function `name` of `input` and `other`, broadcast "
        "(the primitive behind gcd, nextafter, zeta, ...).",
        **prim,
    )

    un: dict[str, Any] = dict(family="unary", flops=flops_pointwise)
    declare(
        "lgamma(Tensor self) -> Tensor",
        _float_meta("lgamma"),
        impl=_lgamma,
        derivative=_d_lgamma,
        saves=("self",),
        inplace=True,
        **un,
    )
    declare(
        "digamma(Tensor self) -> Tensor",
        _float_meta("digamma"),
        impl=_digamma,
        derivative=_d_digamma,
        saves=("self",),
        inplace=True,
        **un,
    )
    declare(
        "polygamma(int n, Tensor self) -> Tensor",
        _meta_polygamma,
        impl=_polygamma,
        derivative=_d_polygamma,
        saves=("self",),
        method=False,
        **un,
    )
    declare(
        "mvlgamma(Tensor self, int p) -> Tensor", _meta_mvlgamma, impl=_mvlgamma, inplace=True, **un
    )
    declare(
        "i0(Tensor self) -> Tensor",
        _float_meta("i0"),
        impl=_scipy_unary("i0", "i0"),
        derivative=_d_i0,
        saves=("self",),
        inplace=True,
        **un,
    )
    declare(
        "sinc(Tensor self) -> Tensor",
        _float_meta("sinc"),
        impl=_sinc,
        derivative=_d_sinc,
        saves=("self",),
        inplace=True,
        **un,
    )
    declare(
        "logit(Tensor self, float? eps=None) -> Tensor",
        _meta_logit,
        impl=_logit,
        derivative=_d_logit,
        saves=("self",),
        inplace=True,
        **un,
    )

    sp: dict[str, Any] = dict(method=False, function=False, **un)
    with_result: dict[str, Any] = dict(saves=("self",), save_result=True)
    for name, fn, deriv, saves in (
        ("special_i0e", "i0e", _d_i0e, with_result),
        ("special_i1", "i1", _d_i1, with_result),
        ("special_i1e", "i1e", _d_i1e, with_result),
        ("special_erfcx", "erfcx", _d_erfcx, with_result),
        ("special_ndtri", "ndtri", _d_ndtri, {"saves": (), "save_result": True}),
        ("special_log_ndtr", "log_ndtr", _d_log_ndtr, with_result),
    ):
        declare(
            f"{name}(Tensor self) -> Tensor",
            _float_meta(name),
            impl=_scipy_unary(name, fn),
            derivative=deriv,
            **saves,
            **sp,
        )
    # values only: PyTorch's results do not require grad
    for name, fn in (
        ("special_bessel_j0", "j0"),
        ("special_bessel_j1", "j1"),
        ("special_bessel_y0", "y0"),
        ("special_bessel_y1", "y1"),
        ("special_modified_bessel_i0", "i0"),
        ("special_modified_bessel_i1", "i1"),
        ("special_modified_bessel_k0", "k0"),
        ("special_modified_bessel_k1", "k1"),
        ("special_scaled_modified_bessel_k0", "k0e"),
        ("special_scaled_modified_bessel_k1", "k1e"),
        ("special_airy_ai", "airy_ai"),
    ):
        declare(
            f"{name}(Tensor self) -> Tensor",
            _float_meta(name),
            impl=_scipy_unary(name, fn),
            **VALUES_ONLY,
            **sp,
        )
    declare(
        "special_spherical_bessel_j0(Tensor self) -> Tensor",
        _float_meta("special_spherical_bessel_j0"),
        impl=_spherical_bessel_j0,
        **VALUES_ONLY,
        **sp,
    )
    declare("special_ndtr(Tensor self) -> Tensor", _float_meta("special_ndtr"), impl=_ndtr, **sp)
    declare(
        "special_entr(Tensor self) -> Tensor",
        _float_meta("special_entr"),
        impl=_entr,
        derivative=_d_entr,
        saves=("self",),
        **sp,
    )

    bi: dict[str, Any] = dict(family="binary", flops=flops_pointwise, method=False, function=False)
    declare(
        "special_xlog1py(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        binary_meta("special_xlog1py", "float"),
        impl=_xlog1py,
        derivative=_d_xlog1py,
        **bi,
    )
    declare(
        "special_zeta(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        binary_meta("special_zeta", "float"),
        impl=_zeta,
        derivative=_d_zeta,
        **bi,
    )
    for name, impl in (("special_gammainc", _gammainc), ("special_gammaincc", _gammaincc)):
        declare(
            f"{name}(Tensor self, Tensor other) -> Tensor",
            typed_binary_meta(name, "float"),
            impl=impl,
            derivative=_d_gammainc,
            **bi,
        )
    for name in POLYNOMIALS:
        declare(
            f"special_{name}(Tensor|Scalar self, Tensor|Scalar n) -> Tensor",
            lambda self, n, _n=f"special_{name}": binary_spec(_n, self, n, "float"),
            impl=_polynomial(name),
            **VALUES_ONLY,
            **bi,
        )


def _polygamma_method(self, n: int) -> Tensor:
    """``t.polygamma(n)``: `coretorch.polygamma` (n, t)."""
    return _op("polygamma")(n, self)


def _polygamma_inplace(self, n: int) -> Tensor:
    """``t.polygamma_(n)``: t written with polygamma(n, t)."""
    return self.copy_(_op("polygamma")(n, self))


_declare_all()
# methods set on the class at import, as the op methods are
Tensor.polygamma = _polygamma_method  # type: ignore[method-assign]
Tensor.polygamma_ = _polygamma_inplace  # type: ignore[method-assign]
