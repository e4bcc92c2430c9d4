"""Indexing composites written with `index_put`, `index_select` and `gather`: take,
take_along_dim, put, index_copy, index_fill, select_scatter, slice_scatter, masked_scatter and
argwhere. Each writes functionally (a new tensor), so gradients come from the ops it calls."""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..device import get_device_type
from ..tensor.impl import TensorImpl, shape_numel, wrap_dim
from .declare import IMPLICIT, declare, op_named as _op
from .indexing import _check_in_range, _check_vector_index, _long
from .meta_rules import broadcast_shapes, common_device

_T = TensorImpl


def _spec(self, shape) -> tuple:
    return (tuple(shape), self._dtype, self._device)


def _index_dtype(op: str, index) -> None:
    if index._dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {index._dtype.name}")


def _along(self, dim: int, index, values):
    """`self` with ``self.select(dim, index[i]) = values.select(dim, i)`` (one index_put with
    `dim` moved first)."""
    x = self.movedim(dim, 0) if self._shape else self.reshape(1)
    v = values.movedim(dim, 0) if values._shape else values.reshape(1)
    out = x.index_put([_long(index).reshape(-1)], v)
    return out.movedim(0, dim) if self._shape else out.reshape(())


# ---- take, take_along_dim, put -------------------------------------------------------------


def _meta_take(self, index):
    _index_dtype("take", index)
    return (index._shape, self._dtype, common_device("take", self, index))


def _take(self, index):
    """The elements of the flattened `self` at `index` (negative indices count from the end);
    the result has `index`'s shape."""
    n = shape_numel(self._shape)
    idx = _long(index).reshape(-1)
    idx = _op("where")(idx.lt(0), idx + n, idx)
    _check_in_range(
        "take", idx, n, 0, IndexError, f"take(): index out of range in self (numel {n})"
    )
    return self.reshape(-1).index_select(0, idx).reshape(index._shape)


def _meta_take_along_dim(self, indices, dim):
    _index_dtype("take_along_dim", indices)
    if dim is None:
        return ((shape_numel(indices._shape),), self._dtype, self._device)
    if len(indices._shape) != len(self._shape):
        raise RuntimeError(
            f"take_along_dim(): input and indices should have the same number "
            f"of dimensions, but got {len(self._shape)} dimensions for input, and "
            f"{len(indices._shape)} dimensions for indices"
        )
    d = wrap_dim("take_along_dim", dim, len(self._shape))
    shape = list(
        broadcast_shapes("take_along_dim", _without(self._shape, d), _without(indices._shape, d))
    )
    shape[d] = indices._shape[d]
    return _spec(self, shape)


def _without(shape: tuple, d: int) -> tuple:
    """`shape` with dim `d` set to 1 (the dims that broadcast in take_along_dim)."""
    return shape[:d] + (1,) + shape[d + 1 :]


def _take_along_dim(self, indices, dim):
    """``gather`` along `dim` with `self` and `indices` broadcast in the other dims; with no
    dim, along the flattened tensors."""
    if dim is None:
        return self.reshape(-1).gather(0, indices.reshape(-1))
    d = wrap_dim("take_along_dim", dim, len(self._shape))
    shape = _meta_take_along_dim(self, indices, dim)[0]
    x_shape = list(shape)
    x_shape[d] = self._shape[d]
    indices = _op("where")(indices.lt(0), indices + self._shape[d], indices)  # -1: the last
    return self.expand(x_shape).gather(d, indices.expand(shape))


def _meta_put(self, index, source, accumulate):
    _index_dtype("put", index)
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"put(): self ({self._dtype.name}) and source "
            f"({source._dtype.name}) must have the same scalar type"
        )
    if shape_numel(index._shape) != shape_numel(source._shape):
        raise RuntimeError(
            f"put(): Expected source and index to have the same number of "
            f"elements, but got source.numel() = {shape_numel(source._shape)}, "
            f"index.numel() = {shape_numel(index._shape)}"
        )
    return (self._shape, self._dtype, common_device("put", self, index, source))


def _put(self, index, source, accumulate):
    """`self` with the flattened elements at `index` set to (or, with `accumulate`,
    increased by) `source`."""
    n = shape_numel(self._shape)
    idx = _long(index).reshape(-1)
    idx = _op("where")(idx.lt(0), idx + n, idx)
    _check_in_range("put", idx, n, 0, IndexError, f"put(): index out of range (numel {n})")
    flat = self.reshape(-1).index_put([idx], source.reshape(-1), accumulate)
    return flat.reshape(self._shape)


# ---- index_copy, index_fill -----------------------------------------------------------------


def _meta_index_copy(self, dim, index, source):
    _check_vector_index("index_copy", index)
    n = shape_numel(index._shape)
    want = self._shape[:dim] + (n,) + self._shape[dim + 1 :] if self._shape else (n,)
    if tuple(source._shape or (1,)) != tuple(want) and not (n == 1 and not source._shape):
        raise RuntimeError(
            f"index_copy(): Source/destination tensor must have same slice "
            f"shapes. Destination slice shape: {list(self._shape)} at dimension "
            f"{dim} and source slice shape: {list(source._shape)}"
        )
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"index_copy(): self and source expected to have the same dtype, "
            f"but got (self) {self._dtype.name} and (source) "
            f"{source._dtype.name}"
        )
    return (self._shape, self._dtype, common_device("index_copy", self, index, source))


def _index_copy(self, dim, index, source):
    """`self` with the slices at `index` along `dim` replaced by the slices of `source`."""
    size = self._shape[dim] if self._shape else 1
    _check_in_range(
        "index_copy",
        _long(index),
        size,
        dim,
        IndexError,
        f"index_copy(): index out of range for dimension {dim} with size {size}",
    )
    return _along(self, dim, index, source.reshape(source._shape or (1,)))


def _meta_index_fill(self, dim, index, value):
    _check_vector_index("index_fill", index)
    if isinstance(value, _T) and value._shape:
        raise RuntimeError(
            f"index_fill_(): Expected a 0-dimensional value tensor, but got "
            f"tensor with {len(value._shape)} dimension(s)."
        )
    return (self._shape, self._dtype, common_device("index_fill", self, index))


def _index_fill(self, dim, index, value):
    """`self` with the slices at `index` along `dim` set to `value`."""
    size = self._shape[dim] if self._shape else 1
    _check_in_range(
        "index_fill",
        _long(index),
        size,
        dim,
        IndexError,
        f"index_fill(): index out of range for dimension {dim} with size {size}",
    )
    if not isinstance(value, _T):
        value = _op("full")((), value, dtype=self._dtype, device=self._device)
    # a mask along `dim`, so a repeated index fills (and differentiates) its slice once
    hit = _op("zeros")((size,), dtype=dt.bool, device=self._device)
    hit = hit.index_put(
        [_long(index).reshape(-1)], _op("ones")((), dtype=dt.bool, device=self._device)
    )
    shape = [1] * len(self._shape)
    if shape:
        shape[dim] = size
    return _op("where")(hit.reshape(shape), value.to(self._dtype), self)


# ---- select_scatter, slice_scatter ----------------------------------------------------------


def _slice_positions(size: int, start, end, step: int) -> range:
    start = 0 if start is None else start
    end = size if end is None else end
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, start), size)
    return range(start, end, step)


def _meta_slice_scatter(self, src, dim, start, end, step):
    if step <= 0:
        raise RuntimeError(f"slice_scatter(): slice step must be positive, got {step}")
    n = len(_slice_positions(self._shape[dim], start, end, step))
    want = self._shape[:dim] + (n,) + self._shape[dim + 1 :]
    if src._shape != want:
        raise RuntimeError(
            f"slice_scatter(): expected src to have a size equal to the slice of "
            f"self. src size = {list(src._shape)}, slice size = {list(want)}"
        )
    return (self._shape, self._dtype, common_device("slice_scatter", self, src))


def _slice_scatter(self, src, dim, start, end, step):
    """`self` with ``self[..., start:end:step, ...]`` (along `dim`) replaced by `src`."""
    pos = _slice_positions(self._shape[dim], start, end, step)
    index = _op("arange")(pos.start, pos.stop, pos.step, device=self._device)
    return _along(self, dim, index, src.to(self._dtype))


def _meta_select_scatter(self, src, dim, index):
    size = self._shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select_scatter(): index {index} out of range for tensor of size "
            f"{list(self._shape)} at dimension {dim}"
        )
    want = self._shape[:dim] + self._shape[dim + 1 :]
    if src._shape != want:
        raise RuntimeError(
            f"select_scatter(): expected src to have a size equal to the slice "
            f"of self. src size = {list(src._shape)}, slice size = {list(want)}"
        )
    return (self._shape, self._dtype, common_device("select_scatter", self, src))


def _select_scatter(self, src, dim, index):
    """`self` with ``self.select(dim, index)`` replaced by `src`."""
    index %= self._shape[dim]
    return _slice_scatter(self, src.unsqueeze(dim), dim, index, index + 1, 1)


# ---- masked_scatter, argwhere ---------------------------------------------------------------


def _meta_masked_scatter(self, mask, source):
    if mask._dtype is not dt.bool:
        raise RuntimeError(
            f"masked_scatter(): expected BoolTensor for mask, got {mask._dtype.name}"
        )
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"masked_scatter(): expected self and source to have same dtypes but "
            f"got {self._dtype.name} and {source._dtype.name}"
        )
    shape = broadcast_shapes("masked_scatter", self._shape, mask._shape)
    return (shape, self._dtype, common_device("masked_scatter", self, mask, source))


def _masked_scatter(self, mask, source):
    """`self` with the positions where `mask` is True filled, in row-major order, with the
    leading elements of `source`."""
    shape = broadcast_shapes("masked_scatter", self._shape, mask._shape)
    self = self.expand(shape)  # the functional form broadcasts self and mask together
    if not get_device_type(self._device).has_data:
        return self.clone()  # which positions are written depends on the mask's values
    where = mask.expand(shape).reshape(-1).nonzero().reshape(-1)
    n = where._shape[0]
    if n > shape_numel(source._shape):
        raise RuntimeError(
            f"masked_scatter(): Number of elements of source < number of ones "
            f"in mask ({shape_numel(source._shape)} < {n})"
        )
    values = source.reshape(-1).narrow(0, 0, n)
    return self.reshape(-1).index_put([where], values).reshape(shape)


def _argwhere(self):
    """The indices of the non-zero elements, one row per element (``nonzero(self)``)."""
    return self.nonzero()


def _declare_all() -> None:
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="indexing", out=False)
    declare("take(Tensor self, Tensor index) -> Tensor", _meta_take, impl=_take, **comp)
    declare(
        "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
        _meta_take_along_dim,
        impl=_take_along_dim,
        **comp,
    )
    declare(
        "put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
        _meta_put,
        impl=_put,
        inplace=True,
        **comp,
    )
    declare(
        "index_copy(Tensor self, Dim dim, Tensor index, Tensor source) -> Tensor",
        _meta_index_copy,
        impl=_index_copy,
        inplace=True,
        **comp,
    )
    declare(
        "index_fill(Tensor self, Dim dim, Tensor index, Tensor|Scalar value) -> Tensor",
        _meta_index_fill,
        impl=_index_fill,
        inplace=True,
        **comp,
    )
    declare(
        "slice_scatter(Tensor self, Tensor src, Dim dim=0, int? start=None, int? end=None, "
        "int step=1) -> Tensor",
        _meta_slice_scatter,
        impl=_slice_scatter,
        **comp,
    )
    declare(
        "select_scatter(Tensor self, Tensor src, Dim dim, int index) -> Tensor",
        _meta_select_scatter,
        impl=_select_scatter,
        **comp,
    )
    declare(
        "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
        _meta_masked_scatter,
        impl=_masked_scatter,
        inplace=True,
        **comp,
    )
    declare("argwhere(Tensor self) -> Tensor", impl=_argwhere, differentiable=False, **comp)


_declare_all()
