"""Elementwise primitives: unary math, binary arithmetic, comparison and bitwise ops, `where`.

Every op here is a structured primitive: the meta rule broadcasts and promotes once; backends
only compute into `out`, whose dtype is always the result dtype (the core computes into a
temporary when an ``out=`` or in-place target has another dtype). Arithmetic on half precision
runs in float32 (`coretorch.backend_kit.opmath`). Comparisons also receive the dtype their
operands are compared in (``precomputed=("common",)``). Everything else elementwise (activations,
`clamp`, `lerp`, predicates such as `isnan`, ...) is a composite: see `pointwise_composites.py`
and `activations.py`. FLOPs: one per output element.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import dtypes as dt
from ..tensor.tensor import Tensor
from .declare import declare
from .derivative_utils import holomorphic
from .meta_rules import broadcast_shapes, common_device, float_result, promote, refuse_complex

__all__ = ["flops_pointwise", "binary_spec", "binary_meta", "UNARY_FLOAT", "UNARY_SAME"]

_T = Tensor


def flops_pointwise(result, *args) -> int:
    """One FLOP per output element."""
    return result.numel()


def _where(cond, a, b):
    from .declare import REGISTRY

    return REGISTRY["where"].op.entry(cond, a, b)


# ---- unary ------------------------------------------------------------------------------------

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0

# float-valued unary primitives: name -> (derivative of the result given grad g, input x and
# result r; what it reads: "self" or "result")
UNARY_FLOAT: dict[str, tuple[Callable, str]] = {
    "exp": (lambda g, x, r: g * r, "result"),
    "expm1": (lambda g, x, r: g * (r + 1), "result"),
    "log": (lambda g, x, r: g / x, "self"),
    "log2": (lambda g, x, r: g / (x * _LN2), "self"),
    "log10": (lambda g, x, r: g / (x * _LN10), "self"),
    "log1p": (lambda g, x, r: g / (x + 1), "self"),
    "sqrt": (lambda g, x, r: g / (r * 2), "result"),
    "sin": (lambda g, x, r: g * x.cos(), "self"),
    "cos": (lambda g, x, r: g * x.sin().neg(), "self"),
    "tan": (lambda g, x, r: g * (r * r + 1), "result"),
    "asin": (lambda g, x, r: g * (1 - x * x).rsqrt(), "self"),
    "acos": (lambda g, x, r: g.neg() * (1 - x * x).rsqrt(), "self"),
    "atan": (lambda g, x, r: g / (x * x + 1), "self"),
    "sinh": (lambda g, x, r: g * x.cosh(), "self"),
    "cosh": (lambda g, x, r: g * x.sinh(), "self"),
    "tanh": (lambda g, x, r: g * (1 - r * r), "result"),
    "asinh": (lambda g, x, r: g * (x * x + 1).rsqrt(), "self"),
    "acosh": (lambda g, x, r: g * (x * x - 1).rsqrt(), "self"),
    "atanh": (lambda g, x, r: g / (1 - x * x), "self"),
    "sigmoid": (lambda g, x, r: g * r * (1 - r), "result"),
    "erf": (lambda g, x, r: g * (x * x).neg().exp() * _TWO_OVER_SQRT_PI, "self"),
    "erfc": (lambda g, x, r: g * (x * x).neg().exp() * -_TWO_OVER_SQRT_PI, "self"),
    "erfinv": (lambda g, x, r: g * (r * r).exp() * _SQRT_PI_OVER_2, "result"),
}

# what each unary primitive computes, elementwise (the docstrings of ``coretorch.exp``,
# ``Tensor.exp`` ...)
_UNARY_DOCS = {
    "exp": "The exponential of `input`, e ** x, elementwise.",
    "expm1": "exp(x) - 1 of each element of `input` (accurate for small x).",
    "log": "The natural logarithm of each element of `input`.",
    "log2": "The base-2 logarithm of each element of `input`.",
    "log10": "The base-10 logarithm of each element of `input`.",
    "log1p": "log(1 + x) of each element of `input` (accurate for small x).",
    "sqrt": "The square root of each element of `input` (NaN for negative values).",
    "sin": "The sine of each element of `input` (in radians).",
    "cos": "The cosine of each element of `input` (in radians).",
    "tan": "The tangent of each element of `input` (in radians).",
    "asin": "The arcsine of each element of `input` (NaN outside [-1, 1]).",
    "acos": "The arccosine of each element of `input` (NaN outside [-1, 1]).",
    "atan": "The arctangent of each element of `input`, in (-pi/2, pi/2).",
    "sinh": "The hyperbolic sine of each element of `input`.",
    "cosh": "The hyperbolic cosine of each element of `input`.",
    "tanh": "The hyperbolic tangent of each element of `input`.",
    "asinh": "The inverse hyperbolic sine of each element of `input`.",
    "acosh": "The inverse hyperbolic cosine of each element of `input` (NaN below 1).",
    "atanh": "The inverse hyperbolic tangent of each element of `input` (NaN outside [-1, 1]).",
    "sigmoid": "The logistic sigmoid 1 / (1 + exp(-x)) of each element of `input`.",
    "erf": "The Gauss error function of each element of `input`.",
    "erfc": "The complementary error function 1 - erf(x) of each element of `input`.",
    "erfinv": "The inverse error function of each element of `input` (defined on (-1, 1)).",
    "abs": "The absolute value of each element of `input` (bool inputs are refused).",
    "neg": "-x for each element of `input` (bool inputs are refused: use logical_not).",
    "sign": "The sign (-1, 0 or 1) of each element of `input`, in its dtype.",
    "floor": "The largest integer not above each element of `input` (integers unchanged).",
    "ceil": "The smallest integer not below each element of `input` (integers unchanged).",
    "trunc": "Each element of `input` rounded toward zero (integers unchanged).",
}

# unary primitives keeping the input dtype; bool inputs are refused with PyTorch's messages
_NOT_FOR_BOOL = {
    **{
        n: (NotImplementedError, f"{n}(): not implemented for 'Bool'")
        for n in ("floor", "ceil", "trunc", "abs")
    },
    "neg": (
        RuntimeError,
        "neg(): Negation, the `-` operator, on a bool tensor is not supported. "
        "If you are trying to invert a mask, use the `~` or `logical_not()` "
        "operator instead.",
    ),
}
UNARY_SAME: dict[str, Callable | None] = {
    # complex: g * sgn(x) with a real g (the holomorphic wrapper never sees a complex g here)
    "abs": lambda g, x, r: g * (x.sgn() if x._dtype.is_complex else x.sign()),
    "neg": lambda g, x, r: g.neg(),
    "sign": None,
    "floor": None,
    "ceil": None,
    "trunc": None,  # zero gradient
}


# elementwise ops PyTorch refuses for complex tensors (an ordering or a real line is needed)
_REAL_ONLY = frozenset(
    {
        "erf",
        "erfc",
        "erfinv",
        "sign",
        "floor",
        "ceil",
        "trunc",
        "lt",
        "le",
        "maximum",
        "minimum",
        "atan2",
        "hypot",
        "remainder",
        "fmod",
    }
)


def _unary_meta(name: str, result: str) -> Callable:
    """The meta rule of unary op `name` whose result dtype is "float" (a float dtype), "same"
    (the input's) or "int" (integer or bool inputs only)."""
    if result == "float" and name in _REAL_ONLY:

        def meta(self):
            if self._dtype.is_complex:
                refuse_complex(name, self)
            return (self._shape, float_result(self._dtype), self._device)
    elif result == "float":

        def meta(self):
            return (self._shape, float_result(self._dtype), self._device)
    elif result == "int":

        def meta(self):
            if self._dtype.is_floating_point or self._dtype.is_complex:
                raise TypeError(
                    f"{name}(): expected an integer or bool tensor, got {self._dtype.name}"
                )
            return (self._shape, self._dtype, self._device)
    else:
        bool_error = _NOT_FOR_BOOL.get(name)

        real = name == "abs"  # abs of a complex tensor is its real-valued magnitude
        real_only = name in _REAL_ONLY

        def meta(self):
            if self._dtype is dt.bool and bool_error is not None:
                raise bool_error[0](bool_error[1])
            if real_only:
                if self._dtype.is_complex:
                    refuse_complex(name, self)
            return (self._shape, self._dtype.to_real() if real else self._dtype, self._device)

    meta.__name__ = f"meta_{name}"
    return meta


def _unary_derivative(name: str, fn: Callable | None) -> Callable:
    if fn is None:

        def formula(ctx, g):
            return (g.new_zeros(g._shape),)
    else:

        def formula(ctx, g):
            return (fn(g, ctx.self, ctx.result),)

    formula.__name__ = f"{name}_backward"
    return holomorphic(formula)


def _meta_round(self, decimals):
    if decimals != 0 and not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"round(): decimals != 0 is only supported for floating point "
            f"dtypes, got {self._dtype.name}"
        )
    return (self._shape, self._dtype, self._device)


def _meta_signbit(self):
    return (self._shape, dt.bool, self._device)


def _zero_grad(ctx, g):
    return (g.new_zeros(g._shape),)


# ---- binary -----------------------------------------------------------------------------------


def binary_spec(name: str, a, b, result: str) -> tuple:
    """(shape, dtype, device) of a binary op; `result` is "promote" (the common dtype), "float"
    (float of the common dtype), "bool" or "int" (integer or bool operands only). One of a, b
    may be a Python number."""
    if isinstance(a, _T):
        if isinstance(b, _T):
            shape = a._shape if a._shape == b._shape else broadcast_shapes(name, a._shape, b._shape)
            d = a._dtype if a._dtype is b._dtype else promote(a, b)
            dev = a._device if a._device is b._device else common_device(name, a, b)
        else:
            shape, dev, d = a._shape, a._device, promote(a, b)
    elif isinstance(b, _T):
        shape, dev, d = b._shape, b._device, promote(a, b)
    else:
        raise TypeError(
            f"{name}(): expected at least one tensor argument, got "
            f"{type(a).__name__} and {type(b).__name__}"
        )
    if result == "float":
        d = float_result(d)
    elif result == "bool":
        d = dt.bool
    elif result == "int" and (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name}(): expected integer or bool tensors, got {d.name}")
    return (shape, d, dev)


def binary_meta(name: str, result: str) -> Callable:
    """The meta rule ``meta_<name>(self, other)`` of a binary op: `binary_spec` with `result`
    (refusing complex tensors for the ops of `_REAL_ONLY`)."""
    if name in _REAL_ONLY:

        def meta(self, other):
            refuse_complex(name, self, other)
            return binary_spec(name, self, other, result)
    else:

        def meta(self, other):
            return binary_spec(name, self, other, result)

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_compare(name: str) -> Callable:
    """Comparisons give bool results and pass on the dtype the operands are compared in."""
    real_only = name in _REAL_ONLY

    def meta(self, other):
        if real_only:
            refuse_complex(name, self, other)
        spec = binary_spec(name, self, other, "bool")
        return spec, (promote(self, other),)

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_add(self, other, alpha):
    if alpha == 1 and isinstance(self, _T) and isinstance(other, _T):
        # the per-op-overhead case (same shape, dtype and device; a float): nothing to check
        d, shape = self._dtype, self._shape
        if (
            d is other._dtype
            and d.is_floating_point
            and shape == other._shape
            and self._device is other._device
        ):
            return (shape, d, self._device)
    spec = binary_spec("add", self, other, "promote")
    if spec[1] is dt.bool and not isinstance(alpha, bool) and alpha != 1:
        raise RuntimeError("add(): Boolean alpha only supported for Boolean results.")
    if not (spec[1].is_floating_point or spec[1].is_complex):
        if isinstance(alpha, float):
            raise RuntimeError(
                "add(): For integral input tensors, argument alpha must not be "
                "a floating point number."
            )
        if not dt.INT64_MIN <= alpha <= dt.INT64_MAX:
            raise dt.overflow_error(dt.int64, alpha, "add")
    return spec


def _meta_div(self, other, rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(
            f"div(): expected rounding_mode to be one of None, 'trunc', or 'floor' "
            f"but found '{rounding_mode}'"
        )
    return binary_spec("div", self, other, "float" if rounding_mode is None else "promote")


def _meta_pow(self, exponent):
    spec = binary_spec("pow", self, exponent, "promote")
    if spec[1] is dt.bool and isinstance(exponent, _T):  # bool ** True is allowed, as in torch
        raise NotImplementedError("pow(): not implemented for 'Bool'")
    if spec[1].category == dt.int64.category and not isinstance(exponent, _T) and exponent < 0:
        raise RuntimeError("pow(): Integers to negative integer powers are not allowed.")
    return spec


def _meta_no_bool(name: str, result: str = "promote") -> Callable:
    def meta(self, other):
        refuse_complex(name, self, other)
        spec = binary_spec(name, self, other, result)
        if spec[1] is dt.bool:
            raise NotImplementedError(f"{name}(): not implemented for 'Bool'")
        return spec

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_where(condition, self, other):
    if condition._dtype is not dt.bool:
        raise RuntimeError(
            f"where(): expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {condition._dtype.name}"
        )
    shapes = [x._shape for x in (condition, self, other) if isinstance(x, _T)]
    shape = broadcast_shapes("where", *shapes)
    return (shape, promote(self, other), common_device("where", condition, self, other))


# ---- derivatives of the binary ops ---------------------------------------------------------


def _d_add(ctx, g):
    if not ctx.needs_input_grad[1]:
        return (g,)
    alpha = ctx.alpha
    return (g, g if alpha == 1 else g * alpha)


def _d_mul(ctx, g):
    na, nb = ctx.needs_input_grad
    return (g * ctx.other if na else None, g * ctx.self if nb else None)


def _d_div(ctx, g):
    a, b = ctx.self, ctx.other
    if ctx.rounding_mode is not None:
        return (
            g.new_zeros(g._shape) if isinstance(a, _T) else None,
            g.new_zeros(g._shape) if isinstance(b, _T) else None,
        )
    na, nb = ctx.needs_input_grad[:2]
    return (g / b if na else None, g.neg() * a / (b * b) if nb else None)


def _d_pow(ctx, g):
    a, e = ctx.self, ctx.exponent
    na, ne = ctx.needs_input_grad
    ga = gb = None
    if na:
        if not isinstance(e, _T) and e == 0:
            ga = g.new_zeros(g._shape)
        else:
            ga = g * e * a.pow(e - 1)
    if ne:
        r = ctx.result
        if isinstance(a, _T):
            gb = _where((a == 0) & (e >= 0), 0.0, g * r * a.log())
        elif a > 0:
            gb = g * r * math.log(a)
        else:  # log of a non-positive base: 0 where 0 ** e is flat, else undefined
            gb = _where((e >= 0) & (a == 0), 0.0, g * r * float("nan"))
    return (ga, gb)


def _d_extremum(ctx, g):
    """maximum/minimum: the gradient goes to the winner, split evenly on ties (as PyTorch)."""
    a, b = ctx.self, ctx.other
    wins_a = a > b if ctx.decl.name == "maximum" else a < b
    tie = a == b
    ga = _where(wins_a, g, _where(tie, g * 0.5, 0.0))
    return (ga, g - ga if isinstance(b, _T) else None)


def _d_remainder(ctx, g):
    gb = (
        g.neg() * ctx.self.div(ctx.other, rounding_mode="floor")
        if ctx.needs_input_grad[1]
        else None
    )
    return (g, gb)


def _d_fmod(ctx, g):
    gb = (
        g.neg() * ctx.self.div(ctx.other, rounding_mode="trunc")
        if ctx.needs_input_grad[1]
        else None
    )
    return (g, gb)


def _d_atan2(ctx, g):
    a, b = ctx.self, ctx.other
    denom = a * a + b * b
    # at (0, 0) PyTorch's subgradient is 0 (0 / 0 would be NaN)
    denom = _where(denom == 0, 1.0, denom)
    return (g * b / denom, g.neg() * a / denom)


def _d_hypot(ctx, g):
    a, b, r = ctx.self, ctx.other, ctx.result
    r = _where(r == 0, 1.0, r)
    return (g * a / r, g * b / r)


def _d_where(ctx, g):
    _, na, nb = ctx.needs_input_grad
    cond = ctx.condition
    return (None, _where(cond, g, 0.0) if na else None, _where(cond, 0.0, g) if nb else None)


def _declare_all() -> None:
    unary: dict[str, Any] = dict(family="unary", inplace=True, flops=flops_pointwise)
    for name, (fn, reads) in UNARY_FLOAT.items():
        declare(
            f"{name}(Tensor self) -> Tensor",
            _unary_meta(name, "float"),
            derivative=_unary_derivative(name, fn),
            saves=("self",) if reads == "self" else (),
            save_result=reads == "result",
            doc=_UNARY_DOCS[name],
            **unary,
        )
    for name, d_fn in UNARY_SAME.items():
        declare(
            f"{name}(Tensor self) -> Tensor",
            _unary_meta(name, "same"),
            derivative=_unary_derivative(name, d_fn),
            saves=("self",) if d_fn else (),
            doc=_UNARY_DOCS[name],
            **unary,
        )
    declare(
        "bitwise_not(Tensor self) -> Tensor",
        _unary_meta("bitwise_not", "int"),
        family="unary",
        inplace=True,
        differentiable=False,
        doc="The bitwise NOT of each element of integer or bool `input` (logical NOT for bool).",
    )
    declare(
        "round(Tensor self, *, int decimals=0) -> Tensor",
        _meta_round,
        derivative=_zero_grad,
        saves=(),
        doc="Each element of `input` rounded to `decimals` decimal places, halves to even.",
        **unary,
    )
    declare(
        "signbit(Tensor self) -> Tensor",
        _meta_signbit,
        family="unary",
        differentiable=False,
        doc="True where the sign bit of an element of `input` is set (-0.0 included).",
    )

    binary: dict[str, Any] = dict(family="binary", inplace=True, flops=flops_pointwise)
    declare(
        "add(Tensor|Scalar self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor",
        _meta_add,
        derivative=_d_add,
        saves=(),
        doc="input + alpha * other, broadcast.",
        **binary,
    )
    declare(
        "mul(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        binary_meta("mul", "promote"),
        derivative=holomorphic(_d_mul),
        doc="input * other, broadcast.",
        **binary,
    )
    declare(
        "div(Tensor|Scalar self, Tensor|Scalar other, *, str? rounding_mode=None) -> Tensor",
        _meta_div,
        derivative=holomorphic(_d_div),
        doc="input / other, broadcast, in a float dtype; `rounding_mode` 'trunc' or 'floor' "
        "rounds the quotient (keeping integer dtypes).",
        **binary,
    )
    declare(
        "pow(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor",
        _meta_pow,
        derivative=holomorphic(_d_pow),
        save_result=True,
        doc="input ** exponent, broadcast (either may be a Python number).",
        **binary,
    )
    for name in ("maximum", "minimum"):
        declare(
            f"{name}(Tensor self, Tensor|Scalar other) -> Tensor",
            binary_meta(name, "promote"),
            derivative=_d_extremum,
            doc=f"The elementwise {name[:3]}imum of `input` and `other` (NaN propagates).",
            **binary,
        )
    declare(
        "remainder(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        _meta_no_bool("remainder"),
        derivative=_d_remainder,
        doc="Python's modulus of input by other: the result has the sign of `other`.",
        **binary,
    )
    declare(
        "fmod(Tensor self, Tensor|Scalar other) -> Tensor",
        _meta_no_bool("fmod"),
        derivative=_d_fmod,
        doc="C's fmod of input by other: the result has the sign of `input`.",
        **binary,
    )
    declare(
        "atan2(Tensor self, Tensor|Scalar other) -> Tensor",
        binary_meta("atan2", "float"),
        derivative=_d_atan2,
        doc="The angle of the point (other, input): atan(input / other) in the right quadrant.",
        **binary,
    )
    declare(
        "hypot(Tensor self, Tensor|Scalar other) -> Tensor",
        binary_meta("hypot", "float"),
        derivative=_d_hypot,
        save_result=True,
        doc="sqrt(input ** 2 + other ** 2), elementwise, without overflow.",
        **binary,
    )
    for name, relation in (
        ("eq", "input == other"),
        ("lt", "input < other"),
        ("le", "input <= other"),
    ):
        declare(
            f"{name}(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
            _meta_compare(name),
            precomputed=("common",),
            differentiable=False,
            doc=f"{relation}, elementwise and broadcast, as a bool tensor.",
            **binary,
        )
    for name, what in (
        ("bitwise_and", "bitwise AND (logical for bool)"),
        ("bitwise_or", "bitwise OR (logical for bool)"),
        ("bitwise_xor", "bitwise XOR (logical for bool)"),
        ("bitwise_left_shift", "left shift input << other"),
        ("bitwise_right_shift", "arithmetic right shift input >> other"),
    ):
        declare(
            f"{name}(Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
            binary_meta(name, "int"),
            family="binary",
            inplace=True,
            differentiable=False,
            doc=f"The {what} of integer or bool `input` and `other`, elementwise.",
        )
    declare(
        "where(Tensor condition, Tensor|Scalar self, Tensor|Scalar other) -> Tensor",
        _meta_where,
        family="ternary",
        method=False,
        flops=flops_pointwise,
        derivative=_d_where,
        saves=("condition",),
        doc="Elements of `input` where `condition` is True, else of `other` (broadcast).",
    )


_declare_all()
