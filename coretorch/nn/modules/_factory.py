"""Allocation of a layer's parameters from its ``device=``/``dtype=`` factory kwargs, and the
default initializations that several layers share."""

from __future__ import annotations

import math

from ...ops import aten
from .. import init
from ..parameter import Parameter

__all__ = ["new_param", "register_bias", "register_affine", "reset_affine", "reset_fan_in_uniform"]


def new_param(shape: tuple, device=None, dtype=None) -> Parameter:
    """An uninitialized Parameter (the layer's reset_parameters fills it)."""
    return Parameter(aten.empty(tuple(shape), device=device, dtype=dtype))


def register_bias(module, shape: tuple, bias: bool, device=None, dtype=None) -> None:
    """Give `module` an uninitialized ``bias`` Parameter of `shape`, or register it as None."""
    if bias:
        module.bias = new_param(shape, device, dtype)
    else:
        module.register_parameter("bias", None)


def register_affine(
    module, shape: tuple, affine: bool, bias: bool, device=None, dtype=None
) -> None:
    """The ``weight``/``bias`` of a normalization layer: Parameters of `shape` when `affine`
    (bias only when `bias`), else both registered as None."""
    if affine:
        module.weight = new_param(shape, device, dtype)
        register_bias(module, shape, bias, device, dtype)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_affine(module) -> None:
    """A normalization layer's affine starts as the identity: weight 1, bias 0."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def reset_fan_in_uniform(weight, bias) -> None:
    """PyTorch's default Linear/Conv init: kaiming_uniform_(a=√5) on the weight, then
    U(-1/√fan_in, 1/√fan_in) on the bias (zero when fan_in is 0)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)
