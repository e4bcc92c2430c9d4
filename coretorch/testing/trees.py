"""Walking nested op arguments and results (tensors inside lists, tuples and dicts)."""

from __future__ import annotations

from typing import Any, Callable

from ..tensor.impl import TensorImpl

__all__ = ["is_tensor", "map_tensors", "tensors_in", "geometry"]


def is_tensor(x: Any) -> bool:
    """True when `x` is a tensor."""
    return isinstance(x, TensorImpl)


def map_tensors(x: Any, fn: Callable) -> Any:
    """`x` with every tensor inside it replaced by ``fn(tensor)`` (same container types)."""
    if is_tensor(x):
        return fn(x)
    if isinstance(x, list):
        return [map_tensors(y, fn) for y in x]
    if isinstance(x, tuple):
        return tuple(map_tensors(y, fn) for y in x)
    if isinstance(x, dict):
        return {k: map_tensors(v, fn) for k, v in x.items()}
    return x


def tensors_in(x: Any) -> list:
    """Every tensor inside `x`, depth first."""
    if is_tensor(x):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in tensors_in(y)]
    if isinstance(x, dict):
        return [t for y in x.values() for t in tensors_in(y)]
    return []


def geometry(x: Any):
    """(shape, dtype name, strides) of each tensor in `x`, nested as `x` is; other values by
    type name (what a shape-only device must reproduce)."""
    if is_tensor(x):
        return (tuple(x._shape), x._dtype.name, tuple(x._stride))
    if isinstance(x, (tuple, list)):
        return tuple(geometry(y) for y in x)
    return type(x).__name__
