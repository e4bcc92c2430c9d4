"""Indexing kernels on the array API: index_select, gather, scatter/scatter_add, index_add,
masked_fill, nonzero, advanced indexing (`_index`) and `_index_put_`.

Indices are checked before any write (on a GPU: one device-to-host sync for min/max), so a bad
index raises PyTorch's error and leaves the output untouched instead of faulting on the device.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from coretorch import dtypes as _dt
from coretorch.ops.declare import alloc
from coretorch.ops.meta_rules import wrap_dim
from coretorch.tensor.impl import TensorImpl as _T

from .array_kit import ArrayKit

__all__ = ["indexing_kernels"]


def indexing_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """The indexing kernels over `kit`'s array module, by op name."""
    xp, arr, scalar, write = kit.xp, kit.arr, kit.scalar, kit.write

    def _index_array(op: str, index):
        i = arr(index)
        if i.dtype.kind not in "iu":
            raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index._dtype.name}")
        return i if i.dtype == np.int64 else i.astype(np.int64)

    def _check_range(op: str, idx, size: int, dim: int, err=RuntimeError,
                     message: str | None = None) -> None:
        """Every index in [0, size) (negative indices are errors for these ops, as in PyTorch)."""
        if idx.size == 0:
            return
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise err(message or f"{op}(): index {bad} is out of bounds for dimension {dim} with "
                                 f"size {size}")

    def index_select(out, self, dim, index):
        """out = self taken at `index` along `dim`"""
        a = arr(self)
        d = wrap_dim("index_select", dim, a.ndim)
        idx = _index_array("index_select", index).reshape(-1)
        a1 = a.reshape(1) if a.ndim == 0 else a
        _check_range("index_select", idx, a1.shape[d], d, IndexError, "index out of range in self")
        res = xp.take(a1, idx, axis=d)
        write(out, res.reshape(arr(out).shape))

    def _along_dim_coords(idx, d: int) -> tuple:
        """Coordinates addressing `t[..., idx[i..], ...]` along dim `d` for each index."""
        coords = []
        for i, n in enumerate(idx.shape):
            if i == d:
                coords.append(idx)
            else:
                shape = [1] * idx.ndim
                shape[i] = n
                coords.append(xp.arange(n).reshape(shape))
        return tuple(coords)

    def _match_ndim(a, idx):
        """0-d operands of gather/scatter act as 1-element tensors of the other's rank."""
        a = a.reshape(1) if a.ndim == 0 else a
        return a, (idx.reshape((1,) * a.ndim) if idx.ndim == 0 else idx)

    def gather(out, self, dim, index):
        """out[i][j] = self[index[i][j]][j] (along `dim`)"""
        o = arr(out)
        if o.size == 0:
            return
        a, idx = _match_ndim(arr(self), _index_array("gather", index))
        d = wrap_dim("gather", dim, a.ndim)
        _check_range("gather", idx, a.shape[d], d)
        write(out, a[_along_dim_coords(idx, d)].reshape(o.shape))

    def _scatter_setup(op: str, out, self, dim, index, src):
        """Copy self into out (unless in place); return (target view, coords, values), or None when
        the index is empty. Shapes were checked by the meta rule."""
        o = arr(out)
        t, idx = _match_ndim(o, _index_array(op, index))
        if idx.size:
            d = wrap_dim(op, dim, t.ndim)
            _check_range(op, idx, t.shape[d], d)
        if out is not self:
            write(out, arr(self))
        if idx.size == 0:
            return None
        if isinstance(src, _T):
            s = arr(src)
            s = s.reshape((1,) * t.ndim) if s.ndim == 0 else s
            vals = s[tuple(slice(0, n) for n in idx.shape)]
        else:
            vals = src
        return t, _along_dim_coords(idx, d), vals

    def scatter(out, self, dim, index, src):
        """out = self with src written at `index` along `dim`"""
        setup = _scatter_setup("scatter", out, self, dim, index, src)
        if setup is not None:
            t, coords, vals = setup
            t[coords] = vals

    def scatter_add(out, self, dim, index, src):
        """out = self with src added at `index` along `dim` (repeated indices accumulate)"""
        setup = _scatter_setup("scatter_add", out, self, dim, index, src)
        if setup is not None:
            t, coords, vals = setup
            xp.add.at(t, coords, vals.astype(t.dtype) if hasattr(vals, "astype") else vals)

    def index_add(out, self, dim, index, source, *, alpha=1):
        """out = self with alpha * source added at `index` along `dim`"""
        o = arr(out)
        t = o.reshape(1) if o.ndim == 0 else o
        d = wrap_dim("index_add", dim, t.ndim)
        idx = _index_array("index_add", index).reshape(-1)
        _check_range("index_add", idx, t.shape[d], d, IndexError, "index out of range in self")
        if out is not self:
            write(out, arr(self))
        s = arr(source)
        s = s.reshape(1) if s.ndim == 0 else s
        if alpha != 1:
            s = s * alpha
        xp.add.at(xp.moveaxis(t, d, 0), idx, xp.moveaxis(s, d, 0).astype(t.dtype))

    def masked_fill(out, self, mask, value):
        """out = self with `value` where mask is True"""
        o = arr(out)
        m = arr(mask)
        if m.dtype != np.bool_:
            raise RuntimeError(f"masked_fill(): expected mask to have dtype bool, got "
                               f"{mask._dtype.name}")
        if out is not self:
            write(out, xp.broadcast_to(arr(self), o.shape))
        v = scalar(value)
        xp.copyto(o, xp.asarray(v).astype(o.dtype), where=xp.broadcast_to(m, o.shape))

    def _nonzero(self):
        # not structured: the output's shape depends on the data
        """The (n, ndim) int64 coordinates of the nonzero elements of self."""
        a = arr(self)
        where = xp.argwhere(a)
        res = alloc(tuple(where.shape), _dt.int64, self._device)
        write(res, where)
        return res

    def _index_tuple(op: str, a, indices) -> tuple:
        """Index for `indices` (int tensors or None, one per leading dim), bounds-checked with
        PyTorch's message; negative indices count from the end."""
        if len(indices) > a.ndim:
            raise IndexError(f"{op}(): too many indices for tensor of dimension {a.ndim} (got "
                             f"{len(indices)})")
        key = []
        for d, ix in enumerate(indices):
            if ix is None:
                key.append(slice(None))
                continue
            i = arr(ix)
            if i.dtype == np.bool_:
                raise IndexError(f"{op}(): boolean masks must be converted to indices first (use "
                                 f"index, which accepts them)")
            if i.dtype.kind not in "iu":
                raise IndexError(f"{op}(): tensors used as indices must be long, int, byte or bool "
                                 f"tensors, got {ix._dtype.name}")
            n = a.shape[d]
            if i.size:
                lo, hi = int(i.min()), int(i.max())
                if lo < -n or hi >= n:
                    raise IndexError(f"index {lo if lo < -n else hi} is out of bounds for "
                                     f"dimension {d} with size {n}")
            key.append(i)
        return tuple(key)

    def _index(out, self, indices):
        """out = self[indices] (advanced indexing with int tensors)"""
        a = arr(self)
        write(out, a[_index_tuple("index", a, indices)])

    def _index_put_(out, self, indices, values, accumulate=False):
        """self[indices] = values (or += with accumulate, repeated indices adding up)"""
        a = arr(self)
        key = _index_tuple("index_put_", a, indices)
        v = arr(values)
        if accumulate:
            xp.add.at(a, key, xp.asarray(v).astype(a.dtype))
        else:
            a[key] = v

    return {"index_select": index_select, "gather": gather, "scatter": scatter,
            "scatter_add": scatter_add, "index_add": index_add, "masked_fill": masked_fill,
            "_nonzero": _nonzero, "_index": _index, "_index_put_": _index_put_}
