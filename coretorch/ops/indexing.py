"""Indexing ops. Primitives: advanced indexing `_index`, indexed assignment `_index_put_` and
`_nonzero`. Everything else is written with them: index_select, gather (`_index` at index
coordinates), scatter, scatter_add, index_add (`_index_put_`, accumulating for the adds),
masked_fill (`where`), nonzero, index / index_put (masks and other index dtypes turned into
int64 indices) and masked_select.

Index lists follow PyTorch's ``aten::index`` convention: ``indices[i]`` is None (take the whole
dim) or an integer tensor for one dim; a k-dim bool mask covers k consecutive dims. The
primitives only take int64 index tensors (or None); `index`/`index_put` convert the others.
Indices out of range are errors in the data, checked where the data is read (the primitives'
kernels; the composites that refuse negative indices, as PyTorch's do, on devices with data).
gather and scatter_add have their own derivatives, so a backend's direct kernel for them (the
backend kit has one: cross-entropy runs them every training step) serves autograd too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as dt
from ..device import get_device_type
from ..dispatch.keys import DispatchKey
from ..tensor.impl import shape_numel
from ..tensor.tensor import Tensor
from .declare import EXPLICIT, IMPLICIT, declare, op_named as _op
from .meta_rules import broadcast_shapes, broadcasts_to, common_device

_T = Tensor
_INDEX_DTYPES = (dt.int32, dt.int64)
_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}  # scatter(reduce=) as scatter_reduce

__all__ = ["index_result_shape"]


def _dim_size(t, d: int) -> int:
    return t._shape[d] if t._shape else 1


def _rank1(t):
    """0-d operands of the dim-wise indexing ops act as 1-element vectors."""
    return t if t._shape else t.reshape(1)


def _long(index):
    return index if index._dtype is dt.int64 else index.to(dt.int64)


def _check_in_range(
    op: str, index, size: int, dim: int, exc: type = RuntimeError, message: str | None = None
) -> None:
    """Every index in [0, size): an error in the data, so checked only where there is data
    (one host read of the index, as the kernels' own bounds checks do)."""
    if not index.numel():
        return
    entry = get_device_type(index._device)
    if not entry.has_data:
        return
    values = np.asarray(entry.read_numpy(index))
    lo, hi = int(values.min()), int(values.max())
    if lo < 0 or hi >= size:
        raise exc(
            message
            or f"{op}(): index {lo if lo < 0 else hi} is out of bounds for "
            f"dimension {dim} with size {size}"
        )


def _check_vector_index(op: str, index) -> None:
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(
            f"{op}(): Expected dtype int32 or int64 for index, got {index._dtype.name}"
        )
    if len(index._shape) > 1:
        raise IndexError(
            f"{op}(): Index is supposed to be a vector, got a {len(index._shape)}-D index"
        )


def _coordinates(index, dim: int) -> list:
    """Index tensors addressing ``t[i_0, ..., index[i], ..., i_k]`` at every position i of
    `index` (ranges broadcast along the other dims): gather/scatter as `_index`/`_index_put_`."""
    nd = len(index._shape)
    arange = _op("arange")
    coords = []
    for k, n in enumerate(index._shape):
        if k == dim:
            coords.append(index)
            continue
        shape = [1] * nd
        shape[k] = n
        coords.append(arange(n, device=index._device).view(shape))
    return coords


# ---- index_select, gather, scatter, scatter_add, index_add --------------------------------------


def _meta_index_select(self, dim, index):
    _check_vector_index("index_select", index)
    n = shape_numel(index._shape)
    if not self._shape:
        if n != 1:
            raise IndexError(
                f"index_select(): Index to scalar can have only 1 value, got {n} value(s)"
            )
        shape = ()
    else:
        shape = self._shape[:dim] + (n,) + self._shape[dim + 1 :]
    return (shape, self._dtype, common_device("index_select", self, index))


def _index_select(self, dim, index):
    """The entries of `self` at `index` along `dim`."""
    x = _rank1(self)
    idx = _long(index).reshape(-1)
    _check_in_range(
        "index_select", idx, x._shape[dim], dim, IndexError, "index out of range in self"
    )
    r = _op("_index")(x, [None] * dim + [idx])
    return r if self._shape else r.reshape(())


def _check_scatter_gather(op: str, self, d: int, index, src=None) -> None:
    """PyTorch's shape rules: same number of dims; index no larger than src anywhere and no
    larger than self except along `dim` (not checked for an empty index)."""
    if shape_numel(index._shape) == 0:
        return  # an empty index of any integer dtype is a no-op, as in PyTorch
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, got {index._dtype.name}")
    nd = max(len(self._shape), 1)
    if max(len(index._shape), 1) != nd:
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as "
            f"input tensor ({len(index._shape)}-D index for a "
            f"{len(self._shape)}-D input)"
        )
    if src is not None and max(len(src._shape), 1) != nd:
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as src "
            f"tensor ({len(index._shape)}-D index, {len(src._shape)}-D src)"
        )
    for k in range(nd):
        i = _dim_size(index, k)
        if (k != d and i > _dim_size(self, k)) or (src is not None and i > _dim_size(src, k)):
            extra = (
                f" and to be no larger size than src {list(src._shape)}" if src is not None else ""
            )
            raise RuntimeError(
                f"{op}(): Expected index {list(index._shape)} to be no larger than "
                f"self {list(self._shape)} apart from dimension {d}{extra}"
            )


def _meta_gather(self, dim, index, sparse_grad):
    _check_scatter_gather("gather", self, dim, index)
    return (index._shape, self._dtype, common_device("gather", self, index))


def _d_gather(ctx, grad):
    zeros = _op("zeros_like")(ctx.self, dtype=grad._dtype)
    return (zeros.scatter_add(ctx.dim, ctx.index, grad),)


def _gather(self, dim, index, sparse_grad):
    """``out[i][j] = self[index[i][j]][j]`` (for dim 0; likewise along any dim)."""
    if not index.numel():
        return _op("empty")(index._shape, dtype=self._dtype, device=self._device)
    x, idx = _rank1(self), _long(_rank1(index))
    _check_in_range("gather", idx, x._shape[dim], dim)
    r = _op("_index")(x, _coordinates(idx, dim))
    return r if index._shape else r.reshape(())


def _meta_scatter_common(op: str, self, dim, index, src):
    if isinstance(src, _T):
        if src._dtype is not self._dtype:
            raise RuntimeError(
                f"{op}(): Expected self.dtype to be equal to src.dtype, got "
                f"{self._dtype.name} and {src._dtype.name}"
            )
        _check_scatter_gather(op, self, dim, index, src)
    else:
        _check_scatter_gather(op, self, dim, index)
    return (self._shape, self._dtype, common_device(op, self, index, src))


def _meta_scatter(self, dim, index, src, reduce):
    if reduce is not None and reduce not in _SCATTER_REDUCE:
        raise RuntimeError(
            f"scatter(): reduce argument must be either add or multiply, got {reduce!r}"
        )
    return _meta_scatter_common("scatter", self, dim, index, src)


def _meta_scatter_add(self, dim, index, src):
    return _meta_scatter_common("scatter_add", self, dim, index, src)


def _scattered(op: str, self, dim, index, src, accumulate: bool):
    """A copy of `self` with `src` written (or added) at `index` along `dim`."""
    out = self.clone()
    if not index.numel():
        return out
    x, idx = _rank1(out), _long(_rank1(index))
    _check_in_range(op, idx, x._shape[dim], dim)
    if isinstance(src, _T):
        values = leading_block(_rank1(src), idx._shape)
    else:
        values = _op("full")((), src, dtype=self._dtype, device=self._device)
    _op("_index_put_")(x, _coordinates(idx, dim), values, accumulate)
    return out


def leading_block(src, shape: tuple):
    """The block of `src` at the start of each dim with `shape` (scatters read src there: it
    may be larger than the index)."""
    for k, n in enumerate(shape):
        if src._shape[k] != n:
            src = src.narrow(k, 0, n)
    return src


def _scatter(self, dim, index, src, reduce):
    """`self` with `src` (a tensor or a number) written at `index` along `dim`; with `reduce`
    (``"add"``/``"multiply"``) combined with what is there instead."""
    if reduce is None:
        return _scattered("scatter", self, dim, index, src, False)
    if not isinstance(src, _T):
        src = _op("full")(index._shape, src, dtype=self._dtype, device=self._device)
    return self.scatter_reduce(dim, index, src, _SCATTER_REDUCE[reduce])


def _scatter_add(self, dim, index, src):
    """`self` with `src` added at `index` along `dim` (repeated indices accumulate)."""
    return _scattered("scatter_add", self, dim, index, src, True)


def _pad_to(g, shape: tuple):
    """`g` zero-padded at the high end of each dim up to `shape` (for src larger than index)."""
    for k, (have, want) in enumerate(zip(g._shape, shape)):
        if have != want:
            pad_shape = g._shape[:k] + (want - have,) + g._shape[k + 1 :]
            pad = _op("zeros")(pad_shape, dtype=g._dtype, device=g._device)
            g = _op("cat")([g, pad], k)
    return g


def _d_scatter(ctx, grad):
    if ctx.reduce is not None:
        raise RuntimeError(
            "scatter(): the derivative with reduce= is not implemented (use scatter_reduce)"
        )
    need = ctx.needs_input_grad
    g_self = grad.scatter(ctx.dim, ctx.index, 0) if need[0] else None
    g_src = None
    if isinstance(ctx.src, _T) and need[3]:
        g_src = _pad_to(grad.gather(ctx.dim, ctx.index), ctx.src._shape)
    return (g_self, None, None, g_src)


def _d_scatter_add(ctx, grad):
    g_src = (
        _pad_to(grad.gather(ctx.dim, ctx.index), ctx.src._shape)
        if ctx.needs_input_grad[3]
        else None
    )
    return (grad, None, None, g_src)


def _flops_source(result, self, dim, index, source, *rest) -> int:
    """One addition per source element that is written."""
    return shape_numel(index._shape) if index._shape != source._shape else source.numel()


def _meta_index_add(self, dim, index, source, alpha):
    _check_vector_index("index_add", index)
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"index_add_(): self ({self._dtype.name}) and source "
            f"({source._dtype.name}) must have the same scalar type"
        )
    if not self._dtype.is_floating_point and isinstance(alpha, float):
        raise RuntimeError(
            "index_add_(): For integral input tensors, argument alpha must not be "
            "a floating point number."
        )
    n = shape_numel(index._shape)
    if max(len(source._shape), 1) != max(len(self._shape), 1):
        raise IndexError(
            f"index_add_(): source and self must have the same number of dimensions,"
            f" got {len(source._shape)}-D source and {len(self._shape)}-D self"
        )
    if _dim_size(source, dim) != n:
        raise RuntimeError(
            f"index_add_(): Number of indices ({n}) should be equal to "
            f"source.size(dim): ({_dim_size(source, dim)}), for dim: {dim}"
        )
    for k in range(len(self._shape)):
        if k != dim and source._shape[k] != self._shape[k]:
            raise RuntimeError(
                f"index_add_(): source {list(source._shape)} and self "
                f"{list(self._shape)} must match in every dim except dim {dim}"
            )
    return (self._shape, self._dtype, common_device("index_add", self, index, source))


def _index_add(self, dim, index, source, alpha):
    """`self` with ``alpha * source`` added at `index` along `dim` (repeats accumulate)."""
    out = self.clone()
    x, idx = _rank1(out), _long(index).reshape(-1)
    _check_in_range("index_add", idx, x._shape[dim], dim, IndexError, "index out of range in self")
    values = _rank1(source) if alpha == 1 else _rank1(source).mul(alpha)
    _op("_index_put_")(x, [None] * dim + [idx], values, True)
    return out


def _d_index_add(ctx, grad):
    g_src = None
    if ctx.needs_input_grad[3]:
        g_src = (
            grad.index_select(ctx.dim, ctx.index).reshape(ctx.source._shape)
            if ctx.self._shape
            else grad
        )
        if ctx.alpha != 1:
            g_src = g_src.mul(ctx.alpha)
    return (grad, None, None, g_src)


# ---- masked_fill, masked_select -----------------------------------------------------------------


def _check_mask(op: str, mask) -> None:
    if mask._dtype is not dt.bool:
        raise RuntimeError(
            f"{op}(): only supports boolean masks, but got mask with dtype {mask._dtype.name}"
        )


def _meta_masked_fill(self, mask, value):
    _check_mask("masked_fill", mask)
    if isinstance(value, _T) and value._shape:
        raise RuntimeError(
            f"masked_fill(): only supports a 0-dimensional value tensor, but "
            f"got tensor with {len(value._shape)} dimension(s)."
        )
    shape = broadcast_shapes("masked_fill", self._shape, mask._shape)
    return (shape, self._dtype, common_device("masked_fill", self, mask, value))


def _masked_fill(self, mask, value):
    """`self` with `value` (a number or a 0-d tensor, cast to self's dtype) where `mask`."""
    if isinstance(value, _T):
        v = value if value._dtype is self._dtype else value.to(self._dtype)
    else:
        v = _op("full")((), value, dtype=self._dtype, device=self._device)
    return _op("where")(mask, v, self)


def _masked_select(self, mask):
    """The elements of `self` where `mask` (broadcast together) is True, as a 1-D tensor."""
    if mask._dtype is not dt.bool:
        raise RuntimeError(f"masked_select(): expected BoolTensor for mask, got {mask._dtype.name}")
    shape = broadcast_shapes("masked_select", self._shape, mask._shape)
    return _op("index")(self.expand(shape), [mask.expand(shape)])


# ---- nonzero ------------------------------------------------------------------------------------


def _nonzero(self, as_tuple):
    """Indices of the non-zero elements: an int64 tensor [n, ndim], or (with `as_tuple`) one
    1-D index tensor per dim."""
    if not as_tuple:
        return _op("_nonzero")(self)
    x = _rank1(self)
    r = _op("_nonzero")(x)
    return tuple(r.select(1, j) for j in range(len(x._shape)))


# ---- advanced indexing --------------------------------------------------------------------------


def index_result_shape(op: str, self, indices) -> tuple:
    """The shape of ``self[indices]`` for a list of int64 index tensors / None (one per leading
    dim). Index shapes broadcast together; the broadcast dims replace the indexed dims in place
    when all indexed dims are adjacent, else they go first (PyTorch's rule)."""
    ndim = len(self._shape)
    if len(indices) > ndim:
        raise IndexError(
            f"{op}(): too many indices for tensor of dimension {ndim} (got {len(indices)})"
        )
    positions, shapes = [], []
    for i, t in enumerate(indices):
        if t is None:
            continue
        if t._dtype is not dt.int64:
            raise IndexError(
                f"{op}(): tensors used as indices must be int64 here (masks and "
                f"other integer dtypes go through index/index_put), got "
                f"{t._dtype.name} at index {i}"
            )
        positions.append(i)
        shapes.append(t._shape)
    if not positions:
        return self._shape
    try:
        bshape = broadcast_shapes(op, *shapes)
    except RuntimeError:
        raise IndexError(
            f"{op}(): shape mismatch: indexing tensors could not be broadcast "
            f"together with shapes {', '.join(str(list(s)) for s in shapes)}"
        ) from None
    rest = [s for i, s in enumerate(self._shape) if i not in positions]
    for p in positions:
        if self._shape[p] == 0 and shape_numel(bshape) > 0:
            raise IndexError(f"{op}(): index is out of bounds for dimension {p} with size 0")
    if positions[-1] - positions[0] + 1 == len(positions):
        first = positions[0]
        return tuple(rest[:first]) + bshape + tuple(rest[first:])
    return bshape + tuple(rest)


def _meta_index(self, indices):
    shape = index_result_shape("index", self, indices)
    return (shape, self._dtype, common_device("index", self, indices))


def _d_index(ctx, grad):
    zeros = _op("zeros_like")(ctx.self, dtype=grad._dtype)
    return (_op("_index_put_")(zeros, ctx.indices, grad, True),)


def _int_indices(op: str, self, indices) -> tuple:
    """(tensor, int64 index list): masks become int indices (through nonzero), other integer
    dtypes int64, all on self's device; a 0-d bool inserts a dim of size 1 or 0."""
    out: list = []
    x = self
    for t in indices:
        if t is None:
            out.append(None)
            continue
        if t._dtype.is_floating_point:
            raise IndexError(
                f"{op}(): tensors used as indices must be long, int, byte or bool "
                f"tensors, got {t._dtype.name}"
            )
        if t._device != self._device:
            t = t.to(self._device)
        if t._dtype is dt.bool or t._dtype is dt.uint8:
            if t._dtype is dt.uint8:
                t = t.ne(0)
            dim = len(out)
            if not t._shape:
                x = x.unsqueeze(dim)
                out.append(_op("_nonzero")(t.reshape(1)).select(1, 0))
                continue
            k = len(t._shape)
            for j in range(k):
                if dim + j >= len(x._shape) or t._shape[j] != x._shape[dim + j]:
                    raise IndexError(
                        f"{op}(): The shape of the mask {list(t._shape)} at index "
                        f"{j} does not match the shape of the indexed tensor "
                        f"{list(x._shape[dim:])} at index {dim + j}"
                    )
            nz = _op("_nonzero")(t)
            out.extend(nz.select(1, j) for j in range(k))
        else:
            out.append(_long(t))
    return x, out


def _index(self, indices):
    """Advanced indexing ``self[indices]`` (a copy): integer tensors, bool masks, None."""
    x, idx = _int_indices("index", self, indices)
    return _op("_index")(x, idx)


def _meta_index_put_(self, indices, values, accumulate):
    shape = index_result_shape("index_put_", self, indices)
    if values._dtype is not self._dtype:
        raise RuntimeError(
            f"index_put_(): Index put requires the source and destination dtypes "
            f"match, got {self._dtype.name} for the destination and "
            f"{values._dtype.name} for the source."
        )
    if not broadcasts_to(values._shape, shape):
        raise RuntimeError(
            f"index_put_(): shape mismatch: value tensor of shape "
            f"{list(values._shape)} cannot be broadcast to indexing result of "
            f"shape {list(shape)}"
        )
    return (self._shape, self._dtype, common_device("index_put_", self, indices, values))


def _d_index_put_(ctx, grad):
    need = ctx.needs_input_grad
    g_self = None
    if need[0]:
        g_self = (
            grad
            if ctx.accumulate
            else _op("_index_put_")(
                grad.clone(), ctx.indices, _op("zeros")((), dtype=grad._dtype, device=grad._device)
            )
        )
    g_values = _op("_index")(grad, ctx.indices) if need[2] else None
    return (g_self, None, g_values)


def _cast_values(self, values):
    # PyTorch's t[idx] = v casts v to t's dtype; index_put follows it
    return values if values._dtype is self._dtype else values.to(self._dtype)


def _index_put(self, indices, values, accumulate):
    """A copy of `self` with ``copy[indices] = values`` (or ``+=`` with `accumulate`)."""
    x, idx = _int_indices("index_put", self, indices)
    out = x.clone()
    _op("_index_put_")(out, idx, _cast_values(self, values), accumulate)
    return out.reshape(self._shape) if x._shape != self._shape else out


def _index_put_inplace(self, indices, values, accumulate):
    """``self[indices] = values`` in place (``+=`` with `accumulate`); returns self."""
    x, idx = _int_indices("index_put_", self, indices)
    _op("_index_put_")(x, idx, _cast_values(self, values), accumulate)
    return self


def _declare_all() -> None:
    ix: dict[str, Any] = dict(family="indexing")
    declare(
        "_index(Tensor self, Tensor?[] indices) -> Tensor",
        _meta_index,
        derivative=_d_index,
        saves=(),
        doc="Advanced indexing ``input[indices]`` with index tensors (None keeps a dim): "
        "the primitive behind ``t[idx]``.",
        **ix,
    )
    declare(
        "_index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
        "bool accumulate=False) -> Tensor(a!)",
        _meta_index_put_,
        derivative=_d_index_put_,
        saves=(),
        doc="``self[indices] = values`` (added when `accumulate`), in place: the "
        "primitive behind index_put_ and ``t[idx] = v``.",
        **ix,
    )
    declare(
        "_nonzero(Tensor self) -> Tensor",
        differentiable=False,
        doc="The (n, ndim) int64 indices of the nonzero elements of `input`, in row-major "
        "order: the primitive behind nonzero.",
        **ix,
    )
    exp: dict[str, Any] = dict(kind=EXPLICIT, inplace=True, saves=("index",), **ix)
    declare(
        "scatter(Tensor self, Dim dim, Tensor index, Tensor|Scalar src, *, "
        "str? reduce=None) -> Tensor",
        _meta_scatter,
        impl=_scatter,
        derivative=_d_scatter,
        **exp,
    )
    declare(
        "scatter_add(Tensor self, Dim dim, Tensor index, Tensor src) -> Tensor",
        _meta_scatter_add,
        impl=_scatter_add,
        derivative=_d_scatter_add,
        flops=_flops_source,
        **exp,
    )
    declare(
        "index_add(Tensor self, Dim dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
        _meta_index_add,
        impl=_index_add,
        derivative=_d_index_add,
        flops=_flops_source,
        **exp,
    )
    comp: dict[str, Any] = dict(kind=IMPLICIT, **ix)
    declare(
        "index_select(Tensor self, Dim dim, Tensor index) -> Tensor",
        _meta_index_select,
        impl=_index_select,
        **comp,
    )
    declare(
        "gather(Tensor self, Dim dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
        _meta_gather,
        impl=_gather,
        kind=EXPLICIT,
        derivative=_d_gather,
        saves=("index",),
        **ix,
    )
    declare(
        "masked_fill(Tensor self, Tensor mask, Tensor|Scalar value) -> Tensor",
        _meta_masked_fill,
        impl=_masked_fill,
        inplace=True,
        **comp,
    )
    declare(
        "nonzero(Tensor self, *, bool as_tuple=False) -> Any",
        impl=_nonzero,
        differentiable=False,
        **comp,
    )
    declare("index(Tensor self, Tensor?[] indices) -> Tensor", impl=_index, method=False, **comp)
    d = declare(
        "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
        impl=_index_put,
        inplace=True,
        **comp,
    )
    assert d.inplace_op is not None  # declared inplace=True
    d.inplace_op.register(DispatchKey.CompositeImplicitAutograd, _index_put_inplace)
    declare("masked_select(Tensor self, Tensor mask) -> Tensor", impl=_masked_select, **comp)


_declare_all()
