"""The operands of a strided fused loop: each tensor as (1-D buffer, element strides over the
iteration shape, element offset), with broadcast dimensions at stride 0 and dimensions merged
where every operand allows (TensorIterator's coalescing), so the inner loop runs as long as
possible."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from coretorch.compile.fusion import broadcast_strides, reads_ahead

from .elementwise import as_numpy

__all__ = ["Layouts", "operand_layouts"]


class Layouts(NamedTuple):
    """`shape` (int64 array, at least 1-D), the number of rows (all but the last dimension), the
    flat ``(buffer, strides, offset)`` triples of the inputs and of the outputs, and the
    ``(copy, source view)`` pairs to refresh before every call (inputs that overlap an output)."""

    shape: np.ndarray
    nrows: int
    inputs: tuple
    outputs: tuple
    refresh: tuple


def _buffer(t) -> np.ndarray:
    """The tensor's whole storage as a 1-D array of its dtype."""
    d = t._dtype.numpy
    data = t._storage.data
    usable = len(data) - len(data) % d.itemsize
    return (data if usable == len(data) else data[:usable]).view(d)


def _contiguous(shape: tuple) -> list:
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return st[::-1]


def _coalesce(shape: tuple, strides: list) -> tuple:
    """Drop size-1 dimensions and merge neighbours that every operand walks as one."""
    keep = [d for d, n in enumerate(shape) if n != 1]
    dims = [shape[d] for d in keep]
    sts = [[s[d] for d in keep] for s in strides]
    d = len(dims) - 1
    while d > 0:
        if all(s[d - 1] == s[d] * dims[d] for s in sts):
            dims[d - 1] *= dims[d]
            del dims[d]
            for s in sts:
                s[d - 1] = s[d]
                del s[d]
        d -= 1
    if not dims:
        return [1], [[0] for _ in strides]
    return dims, sts


def operand_layouts(outs, ins, shape: tuple) -> Layouts:
    """The strided-loop operands of `outs` and `ins` over `shape`. An input sharing memory with
    an output other than element for element is read through a copy (the loop would read what
    it already wrote), refreshed before each call."""
    entries = []  # (buffer, strides, offset)
    refresh = []
    for t in ins:
        if reads_ahead(t, outs, shape):  # read through a copy, taken anew before each call
            src = np.broadcast_to(as_numpy(t), shape)
            copy = np.empty(shape, t._dtype.numpy)
            refresh.append((copy, src))
            entries.append((copy.reshape(-1), _contiguous(shape), 0))
        else:
            entries.append((_buffer(t), broadcast_strides(t, shape), t._offset))
    for o in outs:
        entries.append((_buffer(o), broadcast_strides(o, shape), o._offset))
    dims, sts = _coalesce(shape, [e[1] for e in entries])
    flat = []
    for (buf, _, off), st in zip(entries, sts):
        flat += [buf, np.array(st, np.int64), off]
    nrows = 1
    for n in dims[:-1]:
        nrows *= n
    k = 3 * len(ins)
    return Layouts(
        np.array(dims, np.int64), nrows, tuple(flat[:k]), tuple(flat[k:]), tuple(refresh)
    )
