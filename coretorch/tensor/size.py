"""`coretorch.Size`, the tuple subclass `Tensor.shape` returns."""

from __future__ import annotations

from .impl import shape_numel


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``coretorch.Size([2, 3])``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        if any(v.__class__ is not int for v in items):
            # a 0-d integer tensor or numpy integer becomes an int here, never a tensor in a Size
            items = tuple(_index(v, i) for i, v in enumerate(items))
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return f"coretorch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        """The number of elements of a tensor of this size."""
        return shape_numel(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r


def _index(value, i: int) -> int:
    if not hasattr(value, "__index__"):
        raise TypeError(f"Size() takes an iterable of 'int' (item {i} is '{type(value).__name__}')")
    try:
        return value.__index__()
    except TypeError:
        raise TypeError(
            f"Size() takes an iterable of 'int' (item {i} is '{type(value).__name__}')"
        ) from None
