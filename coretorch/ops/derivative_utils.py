"""Helpers for writing derivative formulas (see the convention in `coretorch.ops.declare`).

``@saves(0)`` tells autograd which positional arguments the formula reads the values of, so only
those are checked for in-place modification at backward time (default: every tensor argument).
"""

from __future__ import annotations

from typing import Callable

from ..tensor.impl import TensorImpl

__all__ = ["saves", "is_tensor", "op", "holomorphic", "conj_of"]


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


def conj_of(x):
    """The complex conjugate of a complex tensor or number; anything else as it is."""
    if isinstance(x, TensorImpl):
        return op("conj")(x) if x._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def holomorphic(formula: Callable) -> Callable:
    """A derivative formula of a one-output op written for real tensors (``g * f'(x)``, linear
    in the gradient), made right for complex ones too: PyTorch's gradient of a holomorphic
    function is ``g * conj(f'(x))``, which is ``conj(formula(conj(g)))``. A real gradient runs
    `formula` as is (one attribute read more on that path)."""

    def wrapped(ctx, g):
        if g is None or not g._dtype.is_complex:
            return formula(ctx, g)
        return tuple(conj_of(r) for r in formula(ctx, conj_of(g)))

    wrapped.__name__ = wrapped.__qualname__ = getattr(formula, "__name__", "derivative")
    wrapped.__doc__ = formula.__doc__
    for attr in ("saved_args",):
        if hasattr(formula, attr):
            setattr(wrapped, attr, getattr(formula, attr))
    return wrapped
