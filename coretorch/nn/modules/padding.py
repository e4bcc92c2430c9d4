"""Padding layers: Reflection/Replication/Circular/Constant/ZeroPad 1d, 2d and 3d (the padding
is (left, right[, top, bottom[, front, back]]); an int pads every side)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _sides(name: str, padding, n: int) -> tuple:
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n or not all(isinstance(p, int) for p in padding):
        raise ValueError(f"{name}: padding must be an int or a tuple of {2 * n} ints, got "
                         f"{padding}")
    return padding


class _PadNd(Module):
    _n = 0
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(type(self).__name__, padding, self._n)

    def _check_input_dim(self, input) -> None:
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _pad_layer(name: str, n: int, mode: str, doc: str) -> type:
    return type(name, (_PadNd,), {"_n": n, "_mode": mode, "__doc__": doc,
                                  "__module__": __name__})


_DIMS = {1: "the last dim", 2: "the last two dims", 3: "the last three dims"}
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _pad_layer(f"ReflectionPad{n}d", n, "reflect",
               f"Pad {_DIMS[n]} with their reflection (the edge is not repeated).")
    for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _pad_layer(f"ReplicationPad{n}d", n, "replicate",
               f"Pad {_DIMS[n]} by repeating their edge values.") for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (
    _pad_layer(f"CircularPad{n}d", n, "circular",
               f"Pad {_DIMS[n]} circularly (wrapping around).") for n in (1, 2, 3))


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with `value` (negative padding crops)."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with `value`."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with `value`."""
    _n = 3


class _ZeroPad:
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pad the last two dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pad the last three dims with zeros."""
