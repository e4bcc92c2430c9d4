"""Ops that rearrange data (copies, not views): cat, stack, flip, repeat, tile, roll, triu, tril."""
from __future__ import annotations

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import IMPLICIT, REGISTRY, declare
from .derivative_utils import saves
from .meta_rules import common_device, size_arg, wrap_dim
from .meta_rules import need_tensor as _need_tensor

_T = TensorImpl

__all__ = ["cat_skipped"]


def cat_skipped(t) -> bool:
    """Whether `cat` ignores `t`: 1-D empty tensors are skipped for shape checks (as in PyTorch)."""
    return t._shape == (0,)


def _tensor_list(op: str, tensors) -> list:
    if isinstance(tensors, _T) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, _T):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise ValueError(f"{op}(): expected a non-empty list of Tensors")
    return list(tensors)


def _meta_cat(tensors, dim=0):
    tensors = _tensor_list("cat", tensors)
    dtype = tensors[0]._dtype
    for t in tensors[1:]:
        dtype = dt.promote_types(dtype, t._dtype)
    device = common_device("cat", tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if not cat_skipped(t)]
    if not kept:
        return ((0,), dtype, device)
    i0, first = kept[0]
    ndim = len(first._shape)
    if ndim == 0:
        raise RuntimeError(f"cat(): zero-dimensional tensor (at position {i0}) cannot be "
                           f"concatenated")
    d = wrap_dim("cat", dim, ndim)
    total = 0
    for i, t in kept:
        if len(t._shape) != ndim:
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: expected "
                               f"{ndim}-D tensors, but got {len(t._shape)}-D for tensor number "
                               f"{i} in the list")
        for k in range(ndim):
            if k != d and t._shape[k] != first._shape[k]:
                raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}. "
                                   f"Expected {first._shape[k]} in dimension {k} but got "
                                   f"{t._shape[k]} for tensor number {i} in the list")
        total += t._shape[d]
    return (first._shape[:d] + (total,) + first._shape[d + 1:], dtype, device)


def _cat_args(tensors, dim=0):
    return tensors, dim


@saves()
def _d_cat(ctx, grad):
    tensors, dim = _cat_args(*ctx.args, **ctx.kwargs)
    kept = [t for t in tensors if not cat_skipped(t)]
    grads, start = [], 0
    d = wrap_dim("cat", dim, len(kept[0]._shape)) if kept else 0
    for t in tensors:
        if cat_skipped(t):
            grads.append(REGISTRY["zeros_like"].op(t))
            continue
        g = grad.narrow(d, start, t._shape[d])
        start += t._shape[d]
        grads.append(g if g._dtype is t._dtype else g.to(t._dtype))
    return (grads,)


def _stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dimension `dim`."""
    tensors = _tensor_list("stack", tensors)
    shape = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != shape:
            raise RuntimeError(f"stack(): stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t._shape)} at entry {i}")
    d = wrap_dim("stack", dim, len(shape) + 1)
    return REGISTRY["cat"].op([t.unsqueeze(d) for t in tensors], d)


def _flip_dims(op: str, self, dims) -> tuple:
    if isinstance(dims, int) or not isinstance(dims, (list, tuple)):
        raise TypeError(f"{op}(): argument 'dims' must be tuple of ints, not "
                        f"{type(dims).__name__}")
    out = tuple(wrap_dim(op, d, len(self._shape)) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}(): dims has duplicates: {list(dims)}")
    return out


def _meta_flip(self, dims):
    _need_tensor("flip", self)
    _flip_dims("flip", self, dims)
    return (self._shape, self._dtype, self._device)


def _flip_args(self, dims):
    return self, dims


@saves()
def _d_flip(ctx, grad):
    _, dims = _flip_args(*ctx.args, **ctx.kwargs)
    return (grad.flip(dims),)


def _repeat(self, *sizes):
    """Tile the data `sizes[i]` times along each dim (leading new dims allowed)."""
    _need_tensor("repeat", self)
    sizes = size_arg("repeat", sizes)
    n = len(self._shape)
    if len(sizes) < n:
        raise RuntimeError(f"repeat(): Number of dimensions of repeat dims can not be smaller "
                           f"than number of dimensions of tensor (got {len(sizes)} repeat dims "
                           f"for a {n}-D tensor)")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"repeat(): Trying to create tensor with negative dimension: "
                           f"{list(sizes)}")
    shape = (1,) * (len(sizes) - n) + self._shape
    x = self.reshape(shape)
    # view as [1, s0, 1, s1, ...], expand to [r0, s0, r1, s1, ...], copy into [r0*s0, ...]
    inter, expanded = [], []
    for r, s in zip(sizes, shape):
        inter += [1, s]
        expanded += [r, s]
    out = x.reshape(inter).expand(expanded).clone()
    return out.reshape(tuple(r * s for r, s in zip(sizes, shape)))


def _tile(self, dims):
    """`repeat` with `dims` padded with leading 1s to the tensor's number of dims."""
    _need_tensor("tile", self)
    dims = size_arg("tile", (dims,) if isinstance(dims, int) else tuple(dims))
    dims = (1,) * (len(self._shape) - len(dims)) + dims
    return _repeat(self, dims)


def _roll(self, shifts, dims=None):
    """Shift elements circularly along `dims` (of the flattened tensor when dims is None)."""
    _need_tensor("roll", self)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: "
                               f"{len(shifts)}, dims: 0")
        return _roll(self.reshape(-1), shifts, (0,)).reshape(self._shape)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims: {len(dims)}")
    out = self
    for shift, dim in zip(shifts, dims):
        d = wrap_dim("roll", dim, len(self._shape))
        size = out._shape[d] if out._shape else 1
        if size == 0 or not out._shape:
            continue
        s = shift % size
        if s:
            out = REGISTRY["cat"].op([out.narrow(d, size - s, s), out.narrow(d, 0, size - s)], d)
    return out if out is not self else self.clone()


def _meta_tri(op: str):
    def meta(self, diagonal=0):
        _need_tensor(op, self)
        if len(self._shape) < 2:
            raise RuntimeError(f"{op}(): input tensor must have at least 2 dimensions, got "
                               f"{len(self._shape)}")
        if not isinstance(diagonal, int) or isinstance(diagonal, bool):
            raise TypeError(f"{op}(): argument 'diagonal' must be int, not "
                            f"{type(diagonal).__name__}")
        return (self._shape, self._dtype, self._device)
    meta.__name__ = f"meta_{op}"
    return meta


def _tri_args(self, diagonal=0):
    return self, diagonal


@saves()
def _d_triu(ctx, grad):
    return (grad.triu(_tri_args(*ctx.args, **ctx.kwargs)[1]),)


@saves()
def _d_tril(ctx, grad):
    return (grad.tril(_tri_args(*ctx.args, **ctx.kwargs)[1]),)


def _declare_all() -> None:
    declare("cat", _meta_cat, family="shape", method=False, derivative=_d_cat)
    declare("flip", _meta_flip, family="shape", derivative=_d_flip)
    declare("triu", _meta_tri("triu"), family="shape", inplace=True, derivative=_d_triu)
    declare("tril", _meta_tri("tril"), family="shape", inplace=True, derivative=_d_tril)
    comp = dict(kind=IMPLICIT, family="shape", out=False)
    declare("stack", impl=_stack, method=False, **comp)
    declare("repeat", impl=_repeat, **comp)
    declare("tile", impl=_tile, **comp)
    declare("roll", impl=_roll, **comp)


_declare_all()
