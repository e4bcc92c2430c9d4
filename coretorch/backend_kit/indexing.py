"""Indexing kernels on the array API: the primitives `_index` (advanced indexing with int64
index tensors), `_index_put_` and `_nonzero`. Every other indexing op (index_select, gather,
scatter, index_add, masked_fill, ...) is a composite of these in `coretorch.ops.indexing`; the
kit also has direct kernels for `gather` and `scatter_add`, the forward and backward of
cross-entropy's pick of the target class, which a training step runs every time (one array
operation instead of building index coordinates).

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
                raise IndexError(
                    f"index {lo if lo < -n else hi} is out of bounds for dimension "
                    f"{d} with size {n}"
                )
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


def _along_dim(k, index, dim: int) -> tuple:
    """The array index of `t[i_0, ..., index[i], ..., i_k]` for every position i of `index`
    (bounds-checked: an index out of [0, size) is an error in the data)."""
    idx = k.arr(index)
    coords = []
    for d, n in enumerate(idx.shape):
        if d == dim:
            coords.append(idx)
        else:
            shape = [1] * idx.ndim
            shape[d] = n
            coords.append(k.xp.arange(n).reshape(shape))
    return tuple(coords)


def _checked(op: str, idx, size: int, dim: int) -> None:
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= size:
            raise RuntimeError(
                f"{op}(): index {lo if lo < 0 else hi} is out of bounds for "
                f"dimension {dim} with size {size}"
            )


def gather(out, self, dim, index, sparse_grad):
    """out[i][j] = self[index[i][j]][j] (along `dim`; 0-d operands act as 1-element vectors)"""
    k = kit_of(out)
    o = k.arr(out)
    if o.size == 0:
        return
    a = k.arr(self)
    a = a.reshape(1) if a.ndim == 0 else a
    key = _along_dim(k, index if index._shape else index.reshape(1), dim)
    _checked("gather", key[dim], a.shape[dim], dim)
    k.write(out, a[key].reshape(o.shape))


def scatter_add(out, self, dim, index, src):
    """out = self with src added at `index` along `dim` (repeated indices accumulate)"""
    k = kit_of(out)
    o = k.arr(out)
    if out is not self:
        k.write(out, k.arr(self))
    if not index.numel():
        return
    t = o.reshape(1) if o.ndim == 0 else o
    key = _along_dim(k, index if index._shape else index.reshape(1), dim)
    _checked("scatter_add", key[dim], t.shape[dim], dim)
    s = k.arr(src)
    s = s.reshape((1,) * t.ndim) if s.ndim == 0 else s
    k.xp.add.at(t, key, s[tuple(slice(0, n) for n in key[dim].shape)])


KERNELS = {
    "_index": _index,
    "_index_put_": _index_put_,
    "_nonzero": _nonzero,
    "gather": gather,
    "scatter_add": scatter_add,
}
