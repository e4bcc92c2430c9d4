"""`coretorch.Size`, the tuple subclass `Tensor.shape` returns."""
from __future__ import annotations


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``coretorch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"coretorch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r
