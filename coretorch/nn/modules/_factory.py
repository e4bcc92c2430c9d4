"""Allocation of a layer's parameters from its ``device=``/``dtype=`` factory kwargs."""
from __future__ import annotations

from ...ops import aten
from ..parameter import Parameter

__all__ = ["new_param", "new_buffer"]


def new_param(shape: tuple, device=None, dtype=None) -> Parameter:
    """An uninitialized Parameter (the layer's reset_parameters fills it)."""
    return Parameter(aten.empty(tuple(shape), device=device, dtype=dtype))


def new_buffer(shape: tuple, fill: float, device=None, dtype=None):
    return aten.full(tuple(shape), fill, device=device, dtype=dtype)
