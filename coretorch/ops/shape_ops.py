"""Ops that rearrange data (copies, not views): cat (the primitive), and stack, flip, repeat,
tile, roll, triu, tril written with views, `cat`, `_index` and `where`."""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl, wrap_dim
from .declare import EXPLICIT, IMPLICIT, declare, op_named
from .meta_rules import common_device

_T = TensorImpl

__all__ = ["cat_skipped"]


def cat_skipped(t) -> bool:
    """Whether `cat` ignores `t`: 1-D empty tensors are skipped for shape checks (as in PyTorch)."""
    return t._shape == (0,)


def _nonempty(op: str, tensors) -> None:
    if not tensors:
        if op == "stack":  # PyTorch's types differ: cat raises ValueError, stack RuntimeError
            raise RuntimeError("stack(): stack expects a non-empty TensorList")
        raise ValueError(f"{op}(): expected a non-empty list of Tensors")


def _meta_cat(tensors, dim):
    _nonempty("cat", tensors)
    dtype = tensors[0]._dtype
    for t in tensors[1:]:
        dtype = dt.promote_types(dtype, t._dtype)
    device = common_device("cat", tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if not cat_skipped(t)]
    if not kept:
        return ((0,), dtype, device), (0,)
    i0, first = kept[0]
    ndim = len(first._shape)
    if ndim == 0:
        raise RuntimeError(
            f"cat(): zero-dimensional tensor (at position {i0}) cannot be concatenated"
        )
    d = wrap_dim("cat", dim, ndim)
    total = 0
    for i, t in kept:
        if len(t._shape) != ndim:
            raise RuntimeError(
                f"cat(): Tensors must have same number of dimensions: expected "
                f"{ndim}-D tensors, but got {len(t._shape)}-D for tensor number "
                f"{i} in the list"
            )
        for k in range(ndim):
            if k != d and t._shape[k] != first._shape[k]:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. "
                    f"Expected {first._shape[k]} in dimension {k} but got "
                    f"{t._shape[k]} for tensor number {i} in the list"
                )
        total += t._shape[d]
    return (first._shape[:d] + (total,) + first._shape[d + 1 :], dtype, device), (d,)


def _d_cat(ctx, grad):
    d = _meta_cat(ctx.tensors, ctx.dim)[1][0]
    grads, start = [], 0
    for t in ctx.tensors:
        if cat_skipped(t):
            grads.append(op_named("zeros_like")(t))
            continue
        g = grad.narrow(d, start, t._shape[d])
        start += t._shape[d]
        grads.append(g if g._dtype is t._dtype else g.to(t._dtype))
    return (grads,)


def _meta_stack(tensors, dim):
    _nonempty("stack", tensors)
    shape = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != shape:
            raise RuntimeError(
                f"stack(): stack expects each tensor to be equal size, but got "
                f"{list(shape)} at entry 0 and {list(t._shape)} at entry {i}"
            )
    d = wrap_dim("stack", dim, len(shape) + 1)
    dtype = tensors[0]._dtype
    for t in tensors[1:]:
        dtype = dt.promote_types(dtype, t._dtype)
    return ((shape[:d] + (len(tensors),) + shape[d:], dtype, common_device("stack", tensors)), (d,))


def _stack(tensors, dim, wrapped):
    """Join equal-shaped tensors along a new dimension `dim`."""
    return op_named("cat")([t.unsqueeze(wrapped) for t in tensors], wrapped)


def _dims_of(op: str, self, dims) -> tuple:
    out = tuple(wrap_dim(op, d, len(self._shape)) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}(): dims has duplicates: {list(dims)}")
    return out


def _meta_flip(self, dims):
    return (self._shape, self._dtype, self._device), (_dims_of("flip", self, dims),)


def _flip(self, dims, wrapped):
    """`self` reversed along `dims`: one `_index` call whose index tensors cover the dims from
    the first to the last flipped one (reversed ranges where flipped, ranges elsewhere)."""
    if not wrapped or not self._shape:
        return self.clone()
    lo, hi = min(wrapped), max(wrapped)
    arange = op_named("arange")
    indices: list = [None] * lo
    for d in range(lo, hi + 1):
        n = self._shape[d]
        r = (
            arange(n - 1, -1, -1, device=self._device)
            if d in wrapped
            else arange(n, device=self._device)
        )
        shape = [1] * (hi - lo + 1)
        shape[d - lo] = n
        indices.append(r.view(shape))
    return op_named("_index")(self, indices)


def _d_flip(ctx, grad):
    return (grad.flip(ctx.dims),)


def _meta_repeat(self, repeats):
    n = len(self._shape)
    if len(repeats) < n:
        raise RuntimeError(
            f"repeat(): Number of dimensions of repeat dims can not be smaller "
            f"than number of dimensions of tensor (got {len(repeats)} repeat dims "
            f"for a {n}-D tensor)"
        )
    if any(s < 0 for s in repeats):
        raise RuntimeError(
            f"repeat(): Trying to create tensor with negative dimension: {list(repeats)}"
        )
    shape = (1,) * (len(repeats) - n) + self._shape
    return (tuple(r * s for r, s in zip(repeats, shape)), self._dtype, self._device)


def _repeat(self, repeats):
    """Tile the data `repeats[i]` times along each dim (leading new dims allowed)."""
    shape = (1,) * (len(repeats) - len(self._shape)) + self._shape
    # view as [1, s0, 1, s1, ...], expand to [r0, s0, r1, s1, ...], copy into [r0*s0, ...]
    inter, expanded = [], []
    for r, s in zip(repeats, shape):
        inter += [1, s]
        expanded += [r, s]
    out = self.reshape(inter).expand(expanded).clone()
    return out.view(tuple(r * s for r, s in zip(repeats, shape)))


def _tile_repeats(self, dims) -> tuple:
    return (1,) * (len(self._shape) - len(dims)) + tuple(dims)


def _meta_tile(self, dims):
    return _meta_repeat(self, _tile_repeats(self, dims))


def _tile(self, dims):
    """`repeat` with `dims` padded with leading 1s to the tensor's number of dims."""
    return self.repeat(_tile_repeats(self, dims))


def _int_tuple(op: str, name: str, value) -> tuple:
    """An int or a sequence of ints as a tuple (PyTorch's ``int[1]``: one int or several)."""
    from ..dispatch.arguments import to_int_list

    seq = value if isinstance(value, (tuple, list)) else (value,)
    return to_int_list(op, name, None, seq)


def _meta_roll(self, shifts, dims):
    shifts = _int_tuple("roll", "shifts", shifts)
    dims = () if dims is None else _int_tuple("roll", "dims", dims)
    if not dims and len(shifts) != 1 or dims and len(shifts) != len(dims):
        raise RuntimeError(
            f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}"
        )
    dims = tuple(wrap_dim("roll", d, len(self._shape)) for d in dims)
    return (self._shape, self._dtype, self._device), (shifts, dims)


def _roll(self, shifts, dims, shift_list, dim_list):
    """Shift elements circularly along `dims` (of the flattened tensor when none are given)."""
    if not dim_list:
        return _roll(self.reshape(-1), shifts, (0,), shift_list, (0,)).view(self._shape)
    out = self
    for shift, d in zip(shift_list, dim_list):
        size = out._shape[d] if out._shape else 1
        if size == 0 or not out._shape:
            continue
        s = shift % size
        if s:
            out = op_named("cat")([out.narrow(d, size - s, s), out.narrow(d, 0, size - s)], d)
    return out if out is not self else self.clone()


def _meta_tri(op: str):
    def meta(self, diagonal):
        if len(self._shape) < 2:
            raise RuntimeError(
                f"{op}(): input tensor must have at least 2 dimensions, got {len(self._shape)}"
            )
        return (self._shape, self._dtype, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _triangle(self, diagonal: int, lower: bool):
    """`self` with the elements above (`lower`) or below the `diagonal`-th diagonal of its last
    two dims set to zero: `where` with an index mask."""
    n, m = self._shape[-2:]
    arange = op_named("arange")
    cols_minus_rows = arange(m, device=self._device) - arange(n, device=self._device).view(n, 1)
    keep = cols_minus_rows.le(diagonal) if lower else cols_minus_rows.ge(diagonal)
    zero = False if self._dtype is dt.bool else 0
    return op_named("where")(keep, self, zero)


def _triu(self, diagonal):
    """The upper triangle of the last two dims (elements below the diagonal set to zero)."""
    return _triangle(self, diagonal, False)


def _tril(self, diagonal):
    """The lower triangle of the last two dims (elements above the diagonal set to zero)."""
    return _triangle(self, diagonal, True)


def _d_triu(ctx, grad):
    return (grad.triu(ctx.diagonal),)


def _d_tril(ctx, grad):
    return (grad.tril(ctx.diagonal),)


def _declare_all() -> None:
    declare(
        "cat(Tensor[] tensors, int dim=0) -> Tensor",
        _meta_cat,
        family="shape",
        method=False,
        derivative=_d_cat,
        saves=(),
        precomputed=("wrapped",),
        doc="`tensors` joined along the existing dimension `dim` (their other sizes must "
        "match; empty 1-d tensors are skipped).",
    )
    declare(
        "flip(Tensor self, int[] dims) -> Tensor",
        _meta_flip,
        impl=_flip,
        kind=EXPLICIT,
        family="shape",
        derivative=_d_flip,
        saves=(),
        precomputed=("wrapped",),
    )
    for name, impl, d in (("triu", _triu, _d_triu), ("tril", _tril, _d_tril)):
        declare(
            f"{name}(Tensor self, int diagonal=0) -> Tensor",
            _meta_tri(name),
            impl=impl,
            kind=EXPLICIT,
            family="shape",
            inplace=True,
            derivative=d,
            saves=(),
        )
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="shape", out=False)
    declare(
        "stack(Tensor[] tensors, int dim=0) -> Tensor",
        _meta_stack,
        impl=_stack,
        method=False,
        precomputed=("wrapped",),
        **comp,
    )
    declare("repeat(Tensor self, int[] repeats) -> Tensor", _meta_repeat, impl=_repeat, **comp)
    declare("tile(Tensor self, int[] dims) -> Tensor", _meta_tile, impl=_tile, **comp)
    declare(
        "roll(Tensor self, Any shifts, Any dims=None) -> Tensor",
        _meta_roll,
        impl=_roll,
        precomputed=("shift_list", "dim_list"),
        **comp,
    )


_declare_all()
