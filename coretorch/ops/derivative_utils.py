"""Helpers for writing derivative formulas (see the convention in `coretorch.ops.declare`).

``@saves(0)`` tells autograd which positional arguments the formula reads the values of, so only
those are checked for in-place modification at backward time (default: every tensor argument).
"""
from __future__ import annotations

from typing import Callable

from ..tensor.impl import TensorImpl

__all__ = ["saves", "is_tensor", "op"]


def saves(*indices: int) -> Callable[[Callable], Callable]:
    """Declare the positional arguments whose values the formula reads (``@saves()``: none)."""
    def mark(fn: Callable) -> Callable:
        fn.saved_args = tuple(indices)  # type: ignore[attr-defined]  # a function attribute
        return fn
    return mark


def is_tensor(x) -> bool:
    """True when `x` is a tensor."""
    return isinstance(x, TensorImpl)


def op(name: str):
    """The operator `name` (looked up when a formula runs, so declaration order never matters)."""
    from .declare import REGISTRY
    return REGISTRY[name].op
