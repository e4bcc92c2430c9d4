"""`coretorch.Size`, the tuple subclass `Tensor.shape` returns."""
from __future__ import annotations

from .impl import shape_numel


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``coretorch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"coretorch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        return shape_numel(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r
