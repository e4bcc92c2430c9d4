"""Indexing kernels on the array API: the primitives `_index` (advanced indexing with int64
index tensors), `_index_put_` and `_nonzero`. Every other indexing op (index_select, gather,
scatter, index_add, masked_fill, ...) is a composite of these in `coretorch.ops.indexing`.

Indices are bounds-checked before any write (on a GPU: one device-to-host sync for min/max): a
bad index is an error in the data, so the kernel raises PyTorch's IndexError and leaves the
output untouched instead of faulting on the device.
"""
from __future__ import annotations

from coretorch import dtypes as _dt
from coretorch.ops.declare import alloc

from .array_kit import kit_of

__all__ = ["KERNELS"]


def _index_key(k, a, indices) -> tuple:
    """The array index of `indices` (int64 tensors or None, one per leading dim of `a`);
    negative indices count from the end."""
    key = []
    for d, ix in enumerate(indices):
        if ix is None:
            key.append(slice(None))
            continue
        i = k.arr(ix)
        n = a.shape[d]
        if i.size:
            lo, hi = int(i.min()), int(i.max())
            if lo < -n or hi >= n:
                raise IndexError(f"index {lo if lo < -n else hi} is out of bounds for dimension "
                                 f"{d} with size {n}")
        key.append(i)
    return tuple(key)


def _index(out, self, indices):
    """out = self[indices] (advanced indexing with int64 index tensors)"""
    k = kit_of(out)
    a = k.arr(self)
    k.write(out, a[_index_key(k, a, indices)])


def _index_put_(out, self, indices, values, accumulate):
    """out = self with out[indices] = values (+= with accumulate: repeated indices add up)"""
    k = kit_of(out)
    o = k.arr(out)
    key = _index_key(k, o, indices)
    if out is not self:
        k.write(out, k.arr(self))
    v = k.arr(values)
    if accumulate:
        k.xp.add.at(o, key, v)
    else:
        o[key] = v


def _nonzero(self):
    """The (n, ndim) int64 coordinates of the nonzero elements of self (not structured: the
    output's shape depends on the data)."""
    k = kit_of(self)
    where = k.xp.argwhere(k.arr(self))
    res = alloc(tuple(where.shape), _dt.int64, self._device)
    k.write(res, where)
    return res


KERNELS = {"_index": _index, "_index_put_": _index_put_, "_nonzero": _nonzero}
