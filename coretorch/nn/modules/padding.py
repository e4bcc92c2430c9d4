"""Padding layers: Reflection/Replication/Circular/Constant/ZeroPad 1d, 2d and 3d (the padding
is (left, right[, top, bottom[, front, back]]); an int pads every side)."""

from __future__ import annotations

from .. import functional as F
from ._layer import subclass
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _sides(name: str, padding, n: int) -> tuple:
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n or not all(isinstance(p, int) for p in padding):
        raise ValueError(
            f"{name}: padding must be an int or a tuple of {2 * n} ints, got {padding}"
        )
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


_DIMS = {1: "the last dim", 2: "the last two dims", 3: "the last three dims"}
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    subclass(
        f"ReflectionPad{n}d",
        _PadNd,
        f"Pad {_DIMS[n]} with their reflection (the edge is not repeated).",
        __name__,
        _n=n,
        _mode="reflect",
    )
    for n in (1, 2, 3)
)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    subclass(
        f"ReplicationPad{n}d",
        _PadNd,
        f"Pad {_DIMS[n]} by repeating their edge values.",
        __name__,
        _n=n,
        _mode="replicate",
    )
    for n in (1, 2, 3)
)
CircularPad1d, CircularPad2d, CircularPad3d = (
    subclass(
        f"CircularPad{n}d",
        _PadNd,
        f"Pad {_DIMS[n]} circularly (wrapping around).",
        __name__,
        _n=n,
        _mode="circular",
    )
    for n in (1, 2, 3)
)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


ConstantPad1d, ConstantPad2d, ConstantPad3d = (
    subclass(
        f"ConstantPad{n}d",
        _ConstantPadNd,
        f"Pad {_DIMS[n]} with `value`" + (" (negative padding crops)." if n == 1 else "."),
        __name__,
        _n=n,
    )
    for n in (1, 2, 3)
)


class _ZeroPad(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


ZeroPad1d, ZeroPad2d, ZeroPad3d = (
    subclass(f"ZeroPad{n}d", (_ZeroPad, const), f"Pad {_DIMS[n]} with zeros.", __name__)
    for n, const in ((1, ConstantPad1d), (2, ConstantPad2d), (3, ConstantPad3d))
)
