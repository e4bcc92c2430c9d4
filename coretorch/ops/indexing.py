"""Indexing ops: index_select, gather, scatter, scatter_add, index_add, masked_fill, nonzero,
advanced indexing (`index`, `_index`) and indexed assignment (`index_put`, `_index_put_`),
masked_select.

Index lists follow PyTorch's ``aten::index`` convention: ``indices[i]`` is None (take the whole
dim) or an integer tensor for one dim; a k-dim bool mask covers k consecutive dims. The primitives
`_index`/`_index_put_` only take int64 index tensors (or None); `index`/`index_put` turn masks and
other integer dtypes into those.
"""
from __future__ import annotations

from .. import dtypes as dt
from ..dispatch.keys import DispatchKey
from ..tensor.impl import TensorImpl, shape_numel
from .declare import IMPLICIT, declare, op_named as _op
from .derivative_utils import saves
from .meta_rules import broadcast_shapes, common_device, is_tensor, wrap_dim
from .meta_rules import need_tensor as _need_tensor

_T = TensorImpl
_INDEX_DTYPES = (dt.int32, dt.int64)

__all__ = ["index_result_shape"]


def _dim_size(t, d: int) -> int:
    return t._shape[d] if t._shape else 1


def _check_vector_index(op: str, index, dtypes=_INDEX_DTYPES, what="int32 or int64"):
    if not is_tensor(index):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in dtypes:
        raise RuntimeError(f"{op}(): Expected dtype {what} for index, got {index._dtype.name}")
    if len(index._shape) > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, got a "
                         f"{len(index._shape)}-D index")


# ---- index_select, gather, scatter, scatter_add, index_add --------------------------------------

def _meta_index_select(self, dim, index):
    _need_tensor("index_select", self)
    d = wrap_dim("index_select", dim, len(self._shape))
    _check_vector_index("index_select", index)
    n = shape_numel(index._shape)
    if not self._shape:
        if n != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got {n} "
                             f"value(s)")
        shape = ()
    else:
        shape = self._shape[:d] + (n,) + self._shape[d + 1:]
    return (shape, self._dtype, common_device("index_select", self, index))


def _index_select_args(self, dim, index):
    return self, dim, index


@saves(2)
def _d_index_select(ctx, grad):
    self, dim, index = _index_select_args(*ctx.args, **ctx.kwargs)
    if not self._shape:
        return (grad,)
    return (_op("zeros_like")(self, dtype=grad._dtype).index_add(dim, index, grad),)


def _check_scatter_gather(op: str, self, d: int, index, src=None) -> None:
    """PyTorch's shape rules: same number of dims; index no larger than src anywhere and no
    larger than self except along `dim` (not checked for an empty index)."""
    if not is_tensor(index):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype is not dt.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index._dtype.name}")
    if shape_numel(index._shape) == 0:
        return
    nd = max(len(self._shape), 1)
    if max(len(index._shape), 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor ({len(index._shape)}-D index for a "
                           f"{len(self._shape)}-D input)")
    if src is not None and max(len(src._shape), 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as src "
                           f"tensor ({len(index._shape)}-D index, {len(src._shape)}-D src)")
    for k in range(nd):
        i = _dim_size(index, k)
        if (k != d and i > _dim_size(self, k)) or (src is not None and i > _dim_size(src, k)):
            extra = (f" and to be no larger size than src {list(src._shape)}"
                     if src is not None else "")
            raise RuntimeError(f"{op}(): Expected index {list(index._shape)} to be no larger than "
                               f"self {list(self._shape)} apart from dimension {d}{extra}")


def _meta_gather(self, dim, index, *, sparse_grad=False):
    _need_tensor("gather", self)
    d = wrap_dim("gather", dim, len(self._shape))
    _check_scatter_gather("gather", self, d, index)
    return (index._shape, self._dtype, common_device("gather", self, index))


def _gather_args(self, dim, index, *, sparse_grad=False):
    return self, dim, index


@saves(2)
def _d_gather(ctx, grad):
    self, dim, index = _gather_args(*ctx.args, **ctx.kwargs)
    return (_op("zeros_like")(self, dtype=grad._dtype).scatter_add(dim, index, grad),)


def _meta_scatter_common(op: str, self, dim, index, src, scalar_ok: bool):
    _need_tensor(op, self)
    d = wrap_dim(op, dim, len(self._shape))
    if is_tensor(src):
        if src._dtype is not self._dtype:
            raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype, got "
                               f"{self._dtype.name} and {src._dtype.name}")
        _check_scatter_gather(op, self, d, index, src)
    elif scalar_ok and isinstance(src, (bool, int, float)):
        _check_scatter_gather(op, self, d, index)
    else:
        kinds = "Tensor or a number" if scalar_ok else "Tensor"
        raise TypeError(f"{op}(): argument 'src' must be {kinds}, not {type(src).__name__}")
    return (self._shape, self._dtype, common_device(op, self, index, src))


def _meta_scatter(self, dim, index, src):
    return _meta_scatter_common("scatter", self, dim, index, src, True)


def _meta_scatter_add(self, dim, index, src):
    return _meta_scatter_common("scatter_add", self, dim, index, src, False)


def _scatter_args(self, dim, index, src):
    return self, dim, index, src


def _pad_to(g, shape: tuple):
    """`g` zero-padded at the high end of each dim up to `shape` (for src larger than index)."""
    for k, (have, want) in enumerate(zip(g._shape, shape)):
        if have != want:
            pad_shape = g._shape[:k] + (want - have,) + g._shape[k + 1:]
            pad = _op("zeros")(pad_shape, dtype=g._dtype, device=g._device)
            g = _op("cat")([g, pad], k)
    return g


@saves(2)
def _d_scatter(ctx, grad):
    self, dim, index, src = _scatter_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    g_self = grad.scatter(dim, index, 0) if need[0] else None
    g_src = None
    if is_tensor(src) and len(need) > 3 and need[3]:
        g_src = _pad_to(grad.gather(dim, index), src._shape)
    return (g_self, None, None, g_src)


@saves(2)
def _d_scatter_add(ctx, grad):
    self, dim, index, src = _scatter_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    g_src = _pad_to(grad.gather(dim, index), src._shape) if len(need) > 3 and need[3] else None
    return (grad, None, None, g_src)


def _flops_source(result, self, dim, index, source, **kwargs) -> int:
    """One addition per source element that is written."""
    return shape_numel(index._shape) if index._shape != source._shape else source.numel()


def _meta_index_add(self, dim, index, source, *, alpha=1):
    _need_tensor("index_add", self)
    _need_tensor("index_add", source)
    d = wrap_dim("index_add", dim, len(self._shape))
    _check_vector_index("index_add", index)
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_add_(): self ({self._dtype.name}) and source "
                           f"({source._dtype.name}) must have the same scalar type")
    n = shape_numel(index._shape)
    if max(len(source._shape), 1) != max(len(self._shape), 1):
        raise IndexError(f"index_add_(): source and self must have the same number of dimensions,"
                         f" got {len(source._shape)}-D source and {len(self._shape)}-D self")
    if _dim_size(source, d) != n:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({_dim_size(source, d)}), for dim: {d}")
    for k in range(len(self._shape)):
        if k != d and source._shape[k] != self._shape[k]:
            raise RuntimeError(f"index_add_(): source {list(source._shape)} and self "
                               f"{list(self._shape)} must match in every dim except dim {d}")
    return (self._shape, self._dtype, common_device("index_add", self, index, source))


def _index_add_args(self, dim, index, source, *, alpha=1):
    return self, dim, index, source, alpha


@saves(2)
def _d_index_add(ctx, grad):
    self, dim, index, source, alpha = _index_add_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    g_src = None
    if len(need) > 3 and need[3]:
        g_src = grad.index_select(dim, index).reshape(source._shape) if self._shape else grad
        if alpha != 1:
            g_src = g_src.mul(alpha)
    return (grad, None, None, g_src)


# ---- masked_fill, masked_select -----------------------------------------------------------------

def _check_mask(op: str, mask) -> None:
    if not is_tensor(mask):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._dtype is not dt.bool:
        raise RuntimeError(f"{op}(): only supports boolean masks, but got mask with dtype "
                           f"{mask._dtype.name}")


def _meta_masked_fill(self, mask, value):
    _need_tensor("masked_fill", self)
    _check_mask("masked_fill", mask)
    if is_tensor(value):
        if value._shape:
            raise RuntimeError(f"masked_fill(): only supports a 0-dimensional value tensor, but "
                               f"got tensor with {len(value._shape)} dimension(s).")
    elif not isinstance(value, (bool, int, float)):
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-dim Tensor, "
                        f"not {type(value).__name__}")
    shape = broadcast_shapes("masked_fill", self._shape, mask._shape)
    return (shape, self._dtype, common_device("masked_fill", self, mask, value))


def _masked_fill_args(self, mask, value):
    return self, mask, value


@saves(1)
def _d_masked_fill(ctx, grad):
    self, mask, value = _masked_fill_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    where = _op("where")
    g_self = where(mask, 0, grad) if need[0] else None
    g_value = None
    if is_tensor(value) and len(need) > 2 and need[2]:
        g_value = where(mask, grad, 0).sum()
    return (g_self, None, g_value)


def _masked_select(self, mask):
    """The elements of `self` where `mask` (broadcast together) is True, as a 1-D tensor."""
    _need_tensor("masked_select", self)
    if not is_tensor(mask) or mask._dtype is not dt.bool:
        raise RuntimeError(f"masked_select(): expected BoolTensor for mask, got "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    shape = broadcast_shapes("masked_select", self._shape, mask._shape)
    return _index(self.expand(shape), [mask.expand(shape)])


# ---- nonzero ------------------------------------------------------------------------------------

def _nonzero(self, *, as_tuple=False):
    """Indices of the non-zero elements: an int64 tensor [n, ndim], or (with `as_tuple`) one
    1-D index tensor per dim."""
    _need_tensor("nonzero", self)
    if not as_tuple:
        return _op("_nonzero")(self)
    x = self if self._shape else self.reshape(1)
    r = _op("_nonzero")(x)
    return tuple(r.select(1, j) for j in range(len(x._shape)))


# ---- advanced indexing --------------------------------------------------------------------------

def index_result_shape(op: str, self, indices) -> tuple:
    """The shape of ``self[indices]`` for a list of int64 index tensors / None (one per leading
    dim). Index shapes broadcast together; the broadcast dims replace the indexed dims in place
    when all indexed dims are adjacent, else they go first (PyTorch's rule)."""
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"{op}(): argument 'indices' must be a list of Tensors or None, not "
                        f"{type(indices).__name__}")
    ndim = len(self._shape)
    if len(indices) > ndim:
        raise IndexError(f"{op}(): too many indices for tensor of dimension {ndim} (got "
                         f"{len(indices)})")
    positions, shapes = [], []
    for i, t in enumerate(indices):
        if t is None:
            continue
        if not is_tensor(t):
            raise TypeError(f"{op}(): expected a Tensor or None at index {i}, got "
                            f"{type(t).__name__}")
        if t._dtype is not dt.int64:
            raise IndexError(f"{op}(): tensors used as indices must be int64 here (masks and "
                             f"other integer dtypes go through index/index_put), got "
                             f"{t._dtype.name} at index {i}")
        positions.append(i)
        shapes.append(t._shape)
    if not positions:
        return self._shape
    try:
        bshape = broadcast_shapes(op, *shapes)
    except RuntimeError:
        raise IndexError(f"{op}(): shape mismatch: indexing tensors could not be broadcast "
                         f"together with shapes {', '.join(str(list(s)) for s in shapes)}") \
            from None
    rest = [s for i, s in enumerate(self._shape) if i not in positions]
    for p in positions:
        if self._shape[p] == 0 and shape_numel(bshape) > 0:
            raise IndexError(f"{op}(): index is out of bounds for dimension {p} with size 0")
    if positions[-1] - positions[0] + 1 == len(positions):
        first = positions[0]
        return tuple(rest[:first]) + bshape + tuple(rest[first:])
    return bshape + tuple(rest)


def _meta_index(self, indices):
    _need_tensor("_index", self)
    shape = index_result_shape("index", self, indices)
    return (shape, self._dtype, common_device("index", self, indices))


def _index_args(self, indices):
    return self, indices


@saves()
def _d_index(ctx, grad):
    self, indices = _index_args(*ctx.args, **ctx.kwargs)
    zeros = _op("zeros_like")(self, dtype=grad._dtype)
    return (_op("_index_put_")(zeros, indices, grad, True),)


def _int_indices(op: str, self, indices) -> tuple:
    """(tensor, int64 index list): masks become int indices (through nonzero), lists and other
    integer dtypes int64 tensors on self's device; a 0-d bool inserts a dim of size 1 or 0."""
    from .factories_public import as_index_tensor
    if is_tensor(indices) or not isinstance(indices, (list, tuple)):
        indices = [indices]
    out: list = []
    x = self
    for i in indices:
        if i is None:
            out.append(None)
            continue
        if is_tensor(i) and i._dtype.is_floating_point:
            raise IndexError(f"{op}(): tensors used as indices must be long, int, byte or bool "
                             f"tensors, got {i._dtype.name}")
        t = as_index_tensor(i, self._device)
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
                    raise IndexError(f"{op}(): The shape of the mask {list(t._shape)} at index "
                                     f"{j} does not match the shape of the indexed tensor "
                                     f"{list(x._shape[dim:])} at index {dim + j}")
            nz = _op("_nonzero")(t)
            out.extend(nz.select(1, j) for j in range(k))
        else:
            out.append(t if t._dtype is dt.int64 else t.to(dt.int64))
    return x, out


def _index(self, indices):
    """Advanced indexing ``self[indices]`` (a copy): integer tensors, bool masks, None."""
    _need_tensor("index", self)
    x, idx = _int_indices("index", self, indices)
    return _op("_index")(x, idx)


def _meta_index_put_(self, indices, values, accumulate=False):
    _need_tensor("_index_put_", self)
    _need_tensor("_index_put_", values)
    shape = index_result_shape("index_put_", self, indices)
    if values._dtype is not self._dtype:
        raise RuntimeError(f"index_put_(): Index put requires the source and destination dtypes "
                           f"match, got {self._dtype.name} for the destination and "
                           f"{values._dtype.name} for the source.")
    try:
        ok = broadcast_shapes("index_put_", values._shape, shape) == shape
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"index_put_(): shape mismatch: value tensor of shape "
                           f"{list(values._shape)} cannot be broadcast to indexing result of "
                           f"shape {list(shape)}")
    return (self._shape, self._dtype, common_device("index_put_", self, indices, values))


def _index_put_args(self, indices, values, accumulate=False):
    return self, indices, values, accumulate


@saves()
def _d_index_put_(ctx, grad):
    self, indices, values, accumulate = _index_put_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    g_self = None
    if need[0]:
        g_self = grad if accumulate else grad.index_put(
            indices, _op("zeros")((), dtype=grad._dtype, device=grad._device))
    g_values = _op("_index")(grad, indices) if len(need) > 2 and need[2] else None
    return (g_self, None, g_values)


def _values_tensor(self, values):
    if is_tensor(values):
        # PyTorch's t[idx] = v casts v to t's dtype; index_put follows it
        return values if values._dtype is self._dtype else values.to(self._dtype)
    from .factories_public import tensor
    return tensor(values, dtype=self._dtype, device=self._device)


def _index_put(self, indices, values, accumulate=False):
    """A copy of `self` with ``copy[indices] = values`` (or ``+=`` with `accumulate`)."""
    _need_tensor("index_put", self)
    x, idx = _int_indices("index_put", self, indices)
    out = x.clone()
    _op("_index_put_")(out, idx, _values_tensor(self, values), accumulate)
    return out.reshape(self._shape) if x._shape != self._shape else out


def _index_put_inplace(self, indices, values, accumulate=False):
    """``self[indices] = values`` in place (``+=`` with `accumulate`); returns self."""
    _need_tensor("index_put_", self)
    x, idx = _int_indices("index_put_", self, indices)
    _op("_index_put_")(x, idx, _values_tensor(self, values), accumulate)
    return self


def _declare_all() -> None:
    ix = dict(family="indexing")
    declare("index_select", _meta_index_select, derivative=_d_index_select, **ix)
    declare("gather", _meta_gather, derivative=_d_gather, **ix)
    declare("scatter", _meta_scatter, inplace=True, derivative=_d_scatter, **ix)
    declare("scatter_add", _meta_scatter_add, inplace=True, derivative=_d_scatter_add,
            flops=_flops_source, **ix)
    declare("index_add", _meta_index_add, inplace=True, derivative=_d_index_add,
            flops=_flops_source, **ix)
    declare("masked_fill", _meta_masked_fill, inplace=True, derivative=_d_masked_fill, **ix)
    declare("_nonzero", None, differentiable=False, out=False, **ix)
    declare("_index", _meta_index, derivative=_d_index, **ix)
    declare("_index_put_", _meta_index_put_, inplace_only=True, derivative=_d_index_put_, **ix)
    comp = dict(kind=IMPLICIT, out=False, **ix)
    declare("nonzero", impl=_nonzero, differentiable=False, **comp)
    declare("index", impl=_index, method=False, **comp)
    d = declare("index_put", impl=_index_put, inplace=True, **comp)
    d.inplace_op.register(DispatchKey.CompositeImplicitAutograd, _index_put_inplace)
    declare("masked_select", impl=_masked_select, **comp)


_declare_all()
