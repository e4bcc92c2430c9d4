"""Activation functions as composite ops: written once with the primitives, each with the
derivative PyTorch uses (so the gradient at a kink or in a saturated tail is PyTorch's, and
backward reads one saved tensor instead of replaying the decomposition).

`coretorch.nn.functional` and the `nn` activation layers are generated from these schemas, so
each default (softplus's ``threshold=20``) is written once, here.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import declare, op_named
from .meta_rules import broadcast_shapes, common_device, float_result, promote, refuse_complex
from .pointwise import flops_pointwise
from .pointwise_composites import where

__all__ = ["SELU_ALPHA", "SELU_SCALE"]

_T = TensorImpl
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _no_bool(name: str, result: str = "float"):
    """Meta rule of an activation: refuses bool input; the result is float (or the input's)."""

    def meta(self, *params):
        if self._dtype is dt.bool:
            raise RuntimeError(f"{name}(): Boolean inputs not supported for {name}")
        if self._dtype.is_complex:  # one attribute read on the real path
            refuse_complex(name, self)
        d = float_result(self._dtype) if result == "float" else self._dtype
        return (self._shape, d, self._device)

    meta.__name__ = f"meta_{name}"
    return meta


def _relu(self):
    """max(self, 0), NaN propagating."""
    return self.maximum(self.new_zeros(()))


def _d_relu(ctx, g):
    return (_threshold_backward_op(g, ctx.result, 0),)


def _meta_threshold_backward(grad_output, self, threshold):
    op = "threshold_backward"
    if grad_output._dtype is dt.bool or self._dtype is dt.bool:
        raise RuntimeError(f"{op}(): \"threshold_backward\" not implemented for 'Bool'")
    return (
        broadcast_shapes(op, grad_output._shape, self._shape),
        promote(grad_output, self),
        common_device(op, grad_output, self),
    )


def _threshold_backward(grad_output, self, threshold):
    """grad_output where self > threshold, else 0 (NaN in self passes the gradient): the
    gradient of relu and threshold, as PyTorch's."""
    res = where(self <= threshold, 0, grad_output)
    d = promote(grad_output, self)
    return res if res._dtype is d else res.to(d)


def _d_threshold_backward(ctx, g):
    return (_threshold_backward_op(g, ctx.self, ctx.threshold), None)


def _leaky_relu(self, negative_slope):
    """self where self > 0, else negative_slope * self."""
    return where(self > 0, self, self * negative_slope)


def _d_leaky_relu(ctx, g):
    return (where(ctx.self > 0, g, g * ctx.negative_slope),)


def _meta_gelu(self, approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu(): approximate must be 'none' or 'tanh', got '{approximate}'")
    return _no_bool("gelu")(self)


def _gelu(self, approximate):
    """self * Phi(self) (exact, with erf) or its tanh approximation."""
    if approximate == "tanh":
        inner = (self + self * self * self * 0.044715) * _SQRT_2_OVER_PI
        return self * 0.5 * (inner.tanh() + 1)
    return self * 0.5 * ((self * _SQRT1_2).erf() + 1)


def _d_gelu(ctx, g):
    x = ctx.self
    if ctx.approximate == "tanh":
        x2 = x * x
        t = ((x + x2 * x * 0.044715) * _SQRT_2_OVER_PI).tanh()
        d = (t + 1) * 0.5 + x * (1 - t * t) * (x2 * (3 * 0.044715) + 1) * (0.5 * _SQRT_2_OVER_PI)
        return (g * d,)
    cdf = ((x * _SQRT1_2).erf() + 1) * 0.5
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


def _silu(self):
    """self * sigmoid(self)."""
    return self * self.sigmoid()


def _d_silu(ctx, g):
    x = ctx.self
    s = x.sigmoid()
    return (g * s * (1 + x * (1 - s)),)


def _mish(self):
    """self * tanh(softplus(self))."""
    return self * self.softplus().tanh()


def _d_mish(ctx, g):
    x = ctx.self
    t = x.softplus().tanh()
    return (g * (t + x * x.sigmoid() * (1 - t * t)),)


def _hardsigmoid(self):
    """relu6(self + 3) / 6."""
    return (self + 3).clamp(0, 6) / 6


def _d_hardsigmoid(ctx, g):
    x = ctx.self
    return (g * ((x > -3.0) & (x < 3.0)) / 6.0,)


def _hardswish(self):
    """self * relu6(self + 3) / 6."""
    return self * (self + 3).clamp(0, 6) / 6


def _d_hardswish(ctx, g):
    x = ctx.self
    return (where(x < -3.0, 0.0, where(x <= 3.0, g * (x / 3.0 + 0.5), g)),)


def _elu(self, alpha, scale, input_scale):
    """scale * self where self > 0, else alpha * scale * (exp(self * input_scale) - 1)."""
    neg = (self * input_scale).expm1() * (alpha * scale)
    return where(self > 0, self * scale if scale != 1 else self, neg)


def _d_elu(ctx, g):
    x, alpha, scale, s_in = ctx.self, ctx.alpha, ctx.scale, ctx.input_scale
    return (where(x > 0, g * scale, g * (x * s_in).exp() * (alpha * scale * s_in)),)


def _softplus(self, beta, threshold):
    """log(1 + exp(beta * self)) / beta, linear where beta * self > threshold."""
    z = self * beta
    soft = z.exp().log1p()
    return where(z > threshold, self, soft / beta if beta != 1 else soft)


def _d_softplus(ctx, g):
    z = ctx.self * ctx.beta
    return (where(z > ctx.threshold, g, g * z.sigmoid()),)


def _meta_hardtanh(self, min_val, max_val):
    if self._dtype is dt.bool:
        raise RuntimeError("hardtanh(): Boolean inputs not supported for hardtanh")
    if min_val > max_val:
        raise ValueError("hardtanh(): min_val cannot be greater than max_val")
    return (self._shape, self._dtype, self._device)


def _hardtanh(self, min_val, max_val):
    """self clamped to [min_val, max_val], in self's dtype (bounds converted to it)."""
    if not self._dtype.is_floating_point:
        min_val, max_val = int(min_val), int(max_val)
    return self.clamp(min_val, max_val)


def _d_hardtanh(ctx, g):
    x = ctx.self
    return (g * ((x > ctx.min_val) & (x < ctx.max_val)),)


def _relu6(self):
    """min(max(self, 0), 6)."""
    return self.hardtanh(0, 6)


def _selu(self):
    """SELU_SCALE * elu(self, SELU_ALPHA): the self-normalizing ELU."""
    return self.elu(SELU_ALPHA, SELU_SCALE)


def _meta_celu(self, alpha):
    if alpha == 0:
        raise RuntimeError("celu(): ZeroDivisionError: alpha cannot be 0 for CELU")
    return _no_bool("celu")(self)


def _celu(self, alpha):
    """max(0, self) + min(0, alpha * (exp(self / alpha) - 1))."""
    return self.elu(alpha, 1.0, 1.0 / alpha)


def _log_sigmoid(self):
    """log(sigmoid(self)), computed stably as -softplus(-self)."""
    return self.neg().softplus().neg()


def _softsign(self):
    """self / (1 + |self|)."""
    return self / (self.abs() + 1)


def _tanhshrink(self):
    """self - tanh(self)."""
    return self - self.tanh()


def _meta_threshold(self, threshold, value):
    return (self._shape, self._dtype, self._device)


def _threshold(self, threshold, value):
    """self where self > threshold, else value."""
    return where(self > threshold, self, value)


def _meta_shrink(name: str):
    """Meta rule of hardshrink/softshrink: a float input of any shape; softshrink refuses a
    negative lambda (as PyTorch)."""

    def meta(self, lambd):
        if not self._dtype.is_floating_point:
            raise RuntimeError(f"{name}(): expected a floating-point input, got {self._dtype.name}")
        if name == "softshrink" and lambd < 0:
            raise RuntimeError(
                f"{name}(): lambda must be greater or equal to 0, but found to be {float(lambd)}."
            )
        return (self._shape, self._dtype, self._device)

    meta.__name__ = f"meta_{name}"
    return meta


def _hardshrink(self, lambd):
    """self where |self| > lambd, else 0."""
    return where(self.abs() > lambd, self, 0)


def _d_hardshrink(ctx, g):
    return (where(ctx.self.abs() > ctx.lambd, g, 0),)


def _softshrink(self, lambd):
    """self - lambd above lambd, self + lambd below -lambd, 0 between."""
    return where(self > lambd, self - lambd, where(self < -lambd, self + lambd, 0))


def _meta_rrelu(self, lower, upper, training, generator):
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"rrelu(): expected a floating-point input, got {self._dtype.name}")
    if lower > upper:
        raise RuntimeError(
            f"rrelu(): lower bound must be less than or equal to upper bound, "
            f"got lower={float(lower)} and upper={float(upper)}"
        )
    return (self._shape, self._dtype, self._device)


def _rrelu(self, lower, upper, training, generator):
    """Randomized leaky ReLU: in training each non-positive element is multiplied by its own
    slope drawn from U(lower, upper); in evaluation the slope is (lower + upper) / 2."""
    if not training:
        return self.leaky_relu((lower + upper) / 2)
    slope = self.new_empty(self._shape).uniform_(lower, upper, generator=generator)
    return where(self > 0, self, self * slope)


def _meta_glu(self, dim):
    if not self._shape:
        raise RuntimeError("glu(): glu does not support scalars because halving size must be even")
    if self._shape[dim] % 2:
        raise RuntimeError(
            f"glu(): Halving dimension must be even, but dimension {dim} is size {self._shape[dim]}"
        )
    shape = list(self._shape)
    shape[dim] //= 2
    return (tuple(shape), float_result(self._dtype), self._device)


def _glu(self, dim):
    """a * sigmoid(b) where a, b are the two halves of `self` along `dim`."""
    a, b = self.chunk(2, dim)
    return a * b.sigmoid()


def _declare_all() -> None:
    act: dict[str, Any] = dict(family="activation", flops=flops_pointwise)
    declare(
        "relu(Tensor self) -> Tensor",
        _no_bool("relu", "same"),
        impl=_relu,
        derivative=_d_relu,
        saves=(),
        save_result=True,
        inplace=True,
        **act,
    )
    declare(
        "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
        _meta_threshold_backward,
        impl=_threshold_backward,
        derivative=_d_threshold_backward,
        saves=("self",),
        method=False,
        function=False,
        out=False,
        **act,
    )
    declare(
        "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
        _no_bool("leaky_relu"),
        impl=_leaky_relu,
        derivative=_d_leaky_relu,
        saves=("self",),
        inplace=True,
        **act,
    )
    declare(
        "gelu(Tensor self, *, str approximate='none') -> Tensor",
        _meta_gelu,
        impl=_gelu,
        derivative=_d_gelu,
        saves=("self",),
        inplace=True,
        **act,
    )
    for name, fn, d in (
        ("silu", _silu, _d_silu),
        ("mish", _mish, _d_mish),
        ("hardsigmoid", _hardsigmoid, _d_hardsigmoid),
        ("hardswish", _hardswish, _d_hardswish),
    ):
        declare(
            f"{name}(Tensor self) -> Tensor",
            _no_bool(name),
            impl=fn,
            derivative=d,
            saves=("self",),
            inplace=True,
            **act,
        )
    declare(
        "elu(Tensor self, Scalar alpha=1.0, Scalar scale=1.0, Scalar input_scale=1.0) -> Tensor",
        _no_bool("elu"),
        impl=_elu,
        derivative=_d_elu,
        saves=("self",),
        inplace=True,
        **act,
    )
    declare(
        "softplus(Tensor self, Scalar beta=1.0, Scalar threshold=20.0) -> Tensor",
        _no_bool("softplus"),
        impl=_softplus,
        derivative=_d_softplus,
        saves=("self",),
        **act,
    )
    declare(
        "hardtanh(Tensor self, Scalar min_val=-1.0, Scalar max_val=1.0) -> Tensor",
        _meta_hardtanh,
        impl=_hardtanh,
        derivative=_d_hardtanh,
        saves=("self",),
        inplace=True,
        **act,
    )
    declare(
        "relu6(Tensor self) -> Tensor", _no_bool("relu6", "same"), impl=_relu6, inplace=True, **act
    )
    declare("selu(Tensor self) -> Tensor", _no_bool("selu"), impl=_selu, inplace=True, **act)
    declare(
        "celu(Tensor self, Scalar alpha=1.0) -> Tensor", _meta_celu, impl=_celu, inplace=True, **act
    )
    declare(
        "log_sigmoid(Tensor self) -> Tensor",
        _no_bool("log_sigmoid"),
        impl=_log_sigmoid,
        method=False,
        **act,
    )
    declare(
        "softsign(Tensor self) -> Tensor",
        _no_bool("softsign"),
        impl=_softsign,
        method=False,
        function=False,
        **act,
    )
    declare(
        "tanhshrink(Tensor self) -> Tensor",
        _no_bool("tanhshrink"),
        impl=_tanhshrink,
        method=False,
        function=False,
        **act,
    )
    declare(
        "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
        _meta_threshold,
        impl=_threshold,
        inplace=True,
        method=False,
        **act,
    )
    declare("glu(Tensor self, Dim dim=-1) -> Tensor", _meta_glu, impl=_glu, method=False, **act)
    declare(
        "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
        _meta_shrink("hardshrink"),
        impl=_hardshrink,
        derivative=_d_hardshrink,
        saves=("self",),
        **act,
    )
    declare(
        "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
        _meta_shrink("softshrink"),
        impl=_softshrink,
        method=False,
        function=False,
        **act,
    )
    declare(
        "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
        "bool training=False, Generator? generator=None) -> Tensor",
        _meta_rrelu,
        impl=_rrelu,
        inplace=True,
        method=False,
        **act,
    )


_declare_all()
_threshold_backward_op = op_named("threshold_backward")  # relu's derivative calls it
