"""Elementwise ops: unary math, binary arithmetic and comparison, where, clamp, activations.

All are structured primitives: the meta rule below broadcasts and promotes once; backends only
compute into `out`. FLOPs: one per output element (`flops_pointwise`).
"""
from __future__ import annotations

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import declare
from .meta_rules import broadcast_shapes, common_device, float_result, promote
from .pointwise_derivatives import grad_of

_T = TensorImpl

# unary ops by result dtype: "same" keeps the input dtype, "float" gives a float dtype
UNARY_SAME = ("abs", "neg", "sign", "floor", "ceil", "trunc", "frac", "relu", "square",
              "positive")
UNARY_FLOAT = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
               "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
               "atanh", "sigmoid", "erf", "erfc", "erfinv", "reciprocal", "silu", "mish",
               "hardsigmoid", "hardswish")
UNARY_BOOL = ("logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit")
UNARY_INT = ("bitwise_not",)
_INPLACE_UNARY_EXCLUDE = set(UNARY_BOOL) - {"logical_not"}

# binary ops by result: "promote" (common dtype), "float" (float of the common dtype), "bool"
BINARY_PROMOTE = ("mul", "maximum", "minimum", "remainder", "fmod", "floor_divide", "fmax",
                  "fmin")
BINARY_FLOAT = ("atan2", "hypot", "logaddexp", "xlogy")
BINARY_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
BINARY_LOGICAL = ("logical_and", "logical_or", "logical_xor")
BINARY_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                  "bitwise_right_shift")


def flops_pointwise(result, *args, **kwargs) -> int:
    """One FLOP per output element."""
    return result.numel()


def _need_tensor(op: str, x) -> None:
    if not isinstance(x, _T):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


# "same"-dtype unary ops that reject a bool input: (exception type, message)
_UNARY_BOOL_ERRORS = {
    **{n: (NotImplementedError, f"{n}(): not implemented for 'Bool'")
       for n in ("floor", "ceil", "trunc", "frac")},
    "positive": (RuntimeError, "positive(): The `+` operator, on a bool tensor is not supported."),
    "neg": (RuntimeError, "neg(): Negation, the `-` operator, on a bool tensor is not supported. "
                          "If you are trying to invert a mask, use the `~` or `logical_not()` "
                          "operator instead."),
}


def _unary_meta(name: str, result: str):
    """The meta rule of unary op `name` whose result dtype is `result` ("same", "float", "bool"
    or "int"); the rule is picked here, once, not on every call."""
    if result == "float":
        def meta(self):
            _need_tensor(name, self)
            return (self._shape, float_result(self._dtype), self._device)
    elif result == "bool":
        def meta(self):
            _need_tensor(name, self)
            return (self._shape, dt.bool, self._device)
    elif result == "int":
        def meta(self):
            _need_tensor(name, self)
            d = self._dtype
            if d.is_floating_point:
                raise TypeError(f"{name}(): expected an integer or bool tensor, got {d.name}")
            return (self._shape, d, self._device)
    else:
        bool_error = _UNARY_BOOL_ERRORS.get(name)
        bool_result = dt.int64 if name == "square" else dt.bool

        def meta(self):
            _need_tensor(name, self)
            d = self._dtype
            if d is dt.bool:
                if bool_error is not None:
                    raise bool_error[0](bool_error[1])
                d = bool_result
            return (self._shape, d, self._device)
    meta.__name__ = f"meta_{name}"
    return meta


def _binary_spec(name: str, a, b, result: str):
    """(shape, dtype, device) of a binary op; a or b may be a Python scalar (not both)."""
    if a.__class__ is b.__class__ or (isinstance(a, _T) and isinstance(b, _T)):
        if not isinstance(a, _T):
            raise TypeError(f"{name}(): expected at least one tensor argument, got "
                            f"{type(a).__name__} and {type(b).__name__}")
        shape = a._shape if a._shape == b._shape else broadcast_shapes(name, a._shape, b._shape)
        d = a._dtype if a._dtype is b._dtype else promote(a, b)
        dev = a._device if a._device is b._device else common_device(name, a, b)
    elif isinstance(a, _T):
        shape, dev = a._shape, a._device
        d = promote(a, b)
    elif isinstance(b, _T):
        shape, dev = b._shape, b._device
        d = promote(a, b)
    else:
        raise TypeError(f"{name}(): expected a Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if result == "float":
        d = float_result(d)
    elif result == "bool":
        d = dt.bool
    elif result == "int" and d.is_floating_point:
        raise RuntimeError(f"{name}(): expected integer or bool tensors, got {d.name}")
    return (shape, d, dev)


def _binary_meta(name: str, result: str):
    def meta(self, other):
        return _binary_spec(name, self, other, result)
    meta.__name__ = f"meta_{name}"
    return meta


def _meta_add(self, other, *, alpha=1):
    spec = _binary_spec("add", self, other, "promote")
    if spec[1] is dt.bool and not isinstance(alpha, bool) and alpha != 1:
        raise RuntimeError("add(): Boolean alpha only supported for Boolean results.")
    if not spec[1].is_floating_point and isinstance(alpha, float):
        raise RuntimeError("add(): For integral input tensors, argument alpha must not be a "
                           "floating point number.")
    return spec


def _meta_sub(self, other, *, alpha=1):
    spec = _binary_spec("sub", self, other, "promote")
    if any(x is True or x is False or (isinstance(x, _T) and x._dtype is dt.bool)
           for x in (self, other)):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return spec


def _meta_div(self, other, *, rounding_mode=None):
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(f"div(): expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    return _binary_spec("div", self, other, "float" if rounding_mode is None else "promote")


def _meta_pow(self, exponent):
    spec = _binary_spec("pow", self, exponent, "promote")
    if spec[1] is dt.bool and isinstance(exponent, _T):  # bool ** True is allowed, as in torch
        raise NotImplementedError("pow(): not implemented for 'Bool'")
    if (spec[1].category == dt.int64.category and not isinstance(exponent, _T)
            and exponent < 0):
        raise RuntimeError("pow(): Integers to negative integer powers are not allowed.")
    return spec


def _meta_where(condition, self, other):
    if not isinstance(condition, _T):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not "
                        f"{type(condition).__name__}")
    if condition._dtype is not dt.bool:
        raise RuntimeError(f"where(): expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition._dtype.name}")
    shapes = [x._shape for x in (condition, self, other) if isinstance(x, _T)]
    shape = broadcast_shapes("where", *shapes)
    return (shape, promote(self, other), common_device("where", condition, self, other))


def _meta_clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
    _need_tensor("clamp", self)
    if min is None and max is None:
        raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
    shapes = [x._shape for x in (self, min, max) if isinstance(x, _T)]
    shape = broadcast_shapes("clamp", *shapes) if len(shapes) > 1 else self._shape
    return (shape, promote(self, min, max), common_device("clamp", self, min, max))


def _meta_leaky_relu(self, negative_slope=0.01):
    _need_tensor("leaky_relu", self)
    return (self._shape, float_result(self._dtype), self._device)


def _meta_gelu(self, approximate="none"):
    _need_tensor("gelu", self)
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu(): approximate must be 'none' or 'tanh', got '{approximate}'")
    return (self._shape, float_result(self._dtype), self._device)


def _meta_softplus(self, beta=1.0, threshold=20.0):
    _need_tensor("softplus", self)
    return (self._shape, float_result(self._dtype), self._device)


def _meta_elu(self, alpha=1.0):
    _need_tensor("elu", self)
    return (self._shape, float_result(self._dtype), self._device)


def _meta_hardtanh(self, min_val=-1.0, max_val=1.0):
    _need_tensor("hardtanh", self)
    return (self._shape, self._dtype, self._device)


def _meta_round(self, *, decimals=0):
    _need_tensor("round", self)
    return (self._shape, self._dtype, self._device)


def _meta_nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    _need_tensor("nan_to_num", self)
    return (self._shape, self._dtype, self._device)


def _meta_lerp(self, end, weight):
    shapes = [x._shape for x in (self, end, weight) if isinstance(x, _T)]
    d = promote(self, end)
    if not d.is_floating_point:
        raise NotImplementedError(f"lerp(): not implemented for '{d.name}'; expected float "
                                  f"tensors")
    return (broadcast_shapes("lerp", *shapes), d, common_device("lerp", self, end, weight))


def _meta_addcmul(self, tensor1, tensor2, *, value=1):
    shapes = [x._shape for x in (self, tensor1, tensor2)]
    return (broadcast_shapes("addcmul", *shapes), promote(self, tensor1, tensor2),
            common_device("addcmul", self, tensor1, tensor2))


def _meta_addcdiv(self, tensor1, tensor2, *, value=1):
    shapes = [x._shape for x in (self, tensor1, tensor2)]
    d = promote(self, tensor1, tensor2)
    if not d.is_floating_point:
        raise RuntimeError("addcdiv(): Integer division with addcdiv is no longer supported; "
                           "use a float tensor")
    return (broadcast_shapes("addcdiv", *shapes), d,
            common_device("addcdiv", self, tensor1, tensor2))


def _declare_all() -> None:
    for name in UNARY_SAME:
        declare(name, _unary_meta(name, "same"), family="unary", inplace=True,
                flops=flops_pointwise, **grad_of(name))
    for name in UNARY_FLOAT:
        declare(name, _unary_meta(name, "float"), family="unary", inplace=True,
                flops=flops_pointwise, **grad_of(name))
    for name in UNARY_BOOL:
        declare(name, _unary_meta(name, "bool"), family="unary", differentiable=False,
                inplace=name not in _INPLACE_UNARY_EXCLUDE)
    for name in UNARY_INT:
        declare(name, _unary_meta(name, "int"), family="unary", inplace=True,
                differentiable=False)
    declare("round", _meta_round, family="unary", inplace=True, flops=flops_pointwise,
            **grad_of("round"))
    declare("nan_to_num", _meta_nan_to_num, family="unary", inplace=True,
            **grad_of("nan_to_num"))
    declare("leaky_relu", _meta_leaky_relu, family="unary", inplace=True, flops=flops_pointwise,
            **grad_of("leaky_relu"))
    declare("gelu", _meta_gelu, family="unary", inplace=True, flops=flops_pointwise,
            **grad_of("gelu"))
    declare("softplus", _meta_softplus, family="unary", flops=flops_pointwise,
            **grad_of("softplus"))
    declare("elu", _meta_elu, family="unary", inplace=True, flops=flops_pointwise,
            **grad_of("elu"))
    declare("hardtanh", _meta_hardtanh, family="unary", inplace=True, flops=flops_pointwise,
            **grad_of("hardtanh"))

    declare("add", _meta_add, family="binary", inplace=True, flops=flops_pointwise,
            **grad_of("add"))
    declare("sub", _meta_sub, family="binary", inplace=True, flops=flops_pointwise,
            **grad_of("sub"))
    declare("div", _meta_div, family="binary", inplace=True, flops=flops_pointwise,
            **grad_of("div"))
    declare("pow", _meta_pow, family="binary", inplace=True, flops=flops_pointwise,
            **grad_of("pow"))
    for name in BINARY_PROMOTE:
        declare(name, _binary_meta(name, "promote"), family="binary", inplace=True,
                flops=flops_pointwise,
                differentiable=name not in ("floor_divide",), **grad_of(name))
    for name in BINARY_FLOAT:
        declare(name, _binary_meta(name, "float"), family="binary", inplace=True,
                flops=flops_pointwise, **grad_of(name))
    for name in BINARY_COMPARE + BINARY_LOGICAL:
        declare(name, _binary_meta(name, "bool"), family="binary", inplace=True,
                differentiable=False, flops=flops_pointwise)
    for name in BINARY_BITWISE:
        declare(name, _binary_meta(name, "int"), family="binary", inplace=True,
                differentiable=False)
    declare("where", _meta_where, family="ternary", method=False, flops=flops_pointwise,
            **grad_of("where"))
    declare("clamp", _meta_clamp, family="ternary", inplace=True, flops=flops_pointwise,
            **grad_of("clamp"))
    declare("lerp", _meta_lerp, family="ternary", inplace=True, flops=flops_pointwise,
            **grad_of("lerp"))
    declare("addcmul", _meta_addcmul, family="ternary", inplace=True, flops=flops_pointwise,
            **grad_of("addcmul"))
    declare("addcdiv", _meta_addcdiv, family="ternary", inplace=True, flops=flops_pointwise,
            **grad_of("addcdiv"))


_declare_all()
