"""Shape composites written with views, cat and flip: broadcasting (broadcast_to,
broadcast_tensors), ravel, atleast_1d/2d/3d, reshape_as, the stacks (hstack, vstack, dstack,
column_stack), the splits (tensor_split, hsplit, vsplit, dsplit, split_with_sizes,
unsafe_split, unsafe_chunk), flipud, fliplr, rot90 and repeat_interleave.

Each is differentiated through the ops it calls, so every backend has them with gradients.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import dtypes as dt
from ..dispatch.arguments import to_int, to_int_list
from ..tensor.impl import shape_numel, wrap_dim
from ..tensor.tensor import Tensor
from .declare import IMPLICIT, declare, op_named as _op
from .meta_rules import broadcast_shapes as _broadcast_shapes

_T = Tensor

__all__ = [
    "broadcast_shapes",
    "broadcast_tensors",
    "tensor_varargs",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
]


def _spec(self, shape: Sequence[int]) -> tuple:
    return (tuple(shape), self._dtype, self._device)


# ---- broadcasting ------------------------------------------------------------------------------


def broadcast_shapes(*shapes) -> tuple:
    """The shape tensors of `shapes` broadcast to (``coretorch.broadcast_shapes((2, 1), (3,))``
    is ``(2, 3)``); an int is a 1-D shape."""
    from ..tensor.size import Size

    norm = [
        (s,) if isinstance(s, int) else tuple(to_int_list("broadcast_shapes", "shapes", None, s))
        for s in shapes
    ]
    for s in norm:
        if any(d < 0 for d in s):
            raise RuntimeError(
                f"broadcast_shapes(): Trying to create tensor with negative "
                f"dimension {min(s)}: {list(s)}"
            )
    return Size(_broadcast_shapes("broadcast_shapes", *norm) if norm else ())


def _meta_broadcast_to(self, size):
    if len(size) < len(self._shape):
        raise RuntimeError(
            f"broadcast_to(): the number of sizes provided ({len(size)}) must be "
            f"greater or equal to the number of dimensions in the tensor "
            f"({len(self._shape)})"
        )
    off = len(size) - len(self._shape)
    out = list(size)
    for i, want in enumerate(size):
        have = self._shape[i - off] if i >= off else None
        if want == -1:
            if have is None:
                raise RuntimeError(
                    f"broadcast_to(): The expanded size of the tensor (-1) isn't "
                    f"allowed in a leading, non-existing dimension {i}"
                )
            out[i] = have
        elif have is not None and have != want and have != 1:
            raise RuntimeError(
                f"broadcast_to(): The expanded size of the tensor ({want}) must "
                f"match the existing size ({have}) at non-singleton dimension "
                f"{i}.  Target sizes: {list(size)}.  Tensor sizes: "
                f"{list(self._shape)}"
            )
    return _spec(self, out)


def _broadcast_to(self, size):
    """`self` expanded (a view) to `size`; -1 keeps a dimension's size."""
    return self.expand(size)


def tensor_varargs(name: str, doc: str | None):
    """The public function of an op over a tensor list that PyTorch calls with the tensors as
    separate arguments (``broadcast_tensors(a, b)``; one list or tuple is taken as well)."""

    def fn(*tensors, **kwargs):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        return _op(name)(list(tensors), **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _meta_broadcast_tensors(tensors):
    shape = _broadcast_shapes("broadcast_tensors", *[t._shape for t in tensors]) if tensors else ()
    return [_spec(t, shape) for t in tensors]


def _broadcast_tensors(tensors):
    """The tensors expanded (views) to their common broadcast shape."""
    if not tensors:
        return ()
    shape = _broadcast_shapes("broadcast_tensors", *[t._shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


# ---- flattening, rank padding --------------------------------------------------------------


def _meta_ravel(self):
    return _spec(self, (shape_numel(self._shape),))


def _ravel(self):
    """The elements as a 1-D tensor (a view when the strides allow)."""
    return self.reshape(-1)


def _atleast_shape(shape: tuple, n: int) -> tuple:
    """PyTorch's (and numpy's) padding: 0-d -> (1,...); 1-D (k,) -> (1, k) / (1, k, 1);
    2-D (a, b) -> (a, b, 1)."""
    if len(shape) >= n:
        return shape
    if n == 3 and len(shape) == 1:
        return (1,) + shape + (1,)
    if n == 3 and len(shape) == 2:
        return shape + (1,)
    return (1,) * (n - len(shape)) + shape


def _atleast(n: int):
    def meta(self):
        return _spec(self, _atleast_shape(self._shape, n))

    def impl(self):
        shape = _atleast_shape(self._shape, n)
        return self if shape == self._shape else self.reshape(shape)

    impl.__name__ = f"atleast_{n}d"
    impl.__doc__ = (
        f"`self` viewed with at least {n} dimension{'s' if n > 1 else ''} "
        f"(size-1 dims added as numpy's atleast_{n}d does)."
    )
    return meta, impl


def _meta_reshape_as(self, other):
    n = shape_numel(other._shape)
    if n != shape_numel(self._shape):
        raise RuntimeError(
            f"reshape_as(): shape '{list(other._shape)}' is invalid for input of "
            f"size {shape_numel(self._shape)}"
        )
    return _spec(self, other._shape)


def _reshape_as(self, other):
    """`self` reshaped to `other`'s shape."""
    return self.reshape(other._shape)


# ---- stacks ---------------------------------------------------------------------------------


def _nonempty(op: str, tensors) -> None:
    if not tensors:
        raise RuntimeError(f"{op}(): expects a non-empty TensorList")


def _hstack(tensors):
    """Concatenate along dim 1 (dim 0 for 1-D tensors); 0-d tensors count as 1-D."""
    _nonempty("hstack", tensors)
    ts = [_op("atleast_1d")(t) for t in tensors]
    return _op("cat")(ts, 0 if len(ts[0]._shape) == 1 else 1)


def _vstack(tensors):
    """Concatenate along dim 0 after making every tensor at least 2-D ((k,) -> (1, k))."""
    _nonempty("vstack", tensors)
    return _op("cat")([_op("atleast_2d")(t) for t in tensors], 0)


def _dstack(tensors):
    """Concatenate along dim 2 after making every tensor at least 3-D."""
    _nonempty("dstack", tensors)
    return _op("cat")([_op("atleast_3d")(t) for t in tensors], 2)


def _column_stack(tensors):
    """Concatenate along dim 1, 0-d and 1-D tensors taken as columns."""
    _nonempty("column_stack", tensors)
    cols = [t.reshape(shape_numel(t._shape), 1) if len(t._shape) <= 1 else t for t in tensors]
    return _op("cat")(cols, 1)


# ---- splits ---------------------------------------------------------------------------------


def _split_arg(op: str, value):
    """tensor_split's `indices_or_sections`: an int (or 0-d integer tensor) of sections, or a
    sequence (or 1-D integer tensor) of split indices."""
    if isinstance(value, _T):
        if value._dtype.is_floating_point or value._dtype.name == "bool":
            raise RuntimeError(
                f"{op}(): Expected tensor_indices_or_sections to have integral "
                f"dtype, but got {value._dtype.name}"
            )
        if len(value._shape) > 1:
            raise RuntimeError(
                f"{op}(): Expected tensor_indices_or_sections to be a zero-"
                f"dimensional or one-dimensional tensor, but got a tensor with "
                f"{len(value._shape)} dims"
            )
        return int(value.item()) if not value._shape else [int(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return list(to_int_list(op, "indices", 2, value))
    return to_int(op, "sections", 2, value)


def _pieces(op: str, self, value, dim: int) -> list:
    """(start, length) of each piece along `dim`: n sections (the first size % n one longer),
    or the pieces between the given indices (clamped to the dimension; a piece between
    decreasing indices is empty)."""
    if not self._shape:
        raise RuntimeError(f"{op}(): expected at least a 1-dimensional tensor")
    size = self._shape[dim]
    value = _split_arg(op, value)
    if isinstance(value, int):
        if value <= 0:
            raise RuntimeError(f"{op}(): number of sections must be larger than 0, got {value}")
        q, r = divmod(size, value)
        lengths = [q + 1] * r + [q] * (value - r)
        starts = [sum(lengths[:i]) for i in range(value)]
        return list(zip(starts, lengths))
    bounds = [0] + [min(max(i if i >= 0 else i + size, 0), size) for i in value] + [size]
    return [(a, max(b - a, 0)) for a, b in zip(bounds, bounds[1:])]


def _meta_tensor_split(self, indices_or_sections, dim, op: str = "tensor_split"):
    pieces = _pieces(op, self, indices_or_sections, dim)
    s = self._shape
    return [_spec(self, s[:dim] + (n,) + s[dim + 1 :]) for _, n in pieces], (pieces,)


def _tensor_split(self, indices_or_sections, dim, pieces):
    """Views of `self` split along `dim` into n near-equal sections (the first size % n one
    element longer) or at the given indices (``tensor_split(x, [1, 4])``: x[:1], x[1:4],
    x[4:])."""
    return tuple(self.narrow(dim, start, n) for start, n in pieces)


def _even_split(op: str, dim_rule):
    """hsplit/vsplit/dsplit: tensor_split along a fixed dim; an int must divide it evenly."""

    def check(self, indices_or_sections) -> int:
        dim = dim_rule(op, self)
        value = _split_arg(op, indices_or_sections)
        if isinstance(value, int) and (value == 0 or self._shape[dim] % value):
            raise RuntimeError(
                f"{op}(): attempted to split along dimension {dim}, but the size "
                f"of the dimension {self._shape[dim]} is not divisible by the "
                f"split_size {value}!"
            )
        return dim

    def meta(self, indices_or_sections):
        dim = check(self, indices_or_sections)
        return _meta_tensor_split(self, indices_or_sections, dim, op)

    def impl(self, indices_or_sections, pieces):
        return _tensor_split(self, indices_or_sections, dim_rule(op, self), pieces)

    impl.__name__ = op
    impl.__doc__ = f"``tensor_split`` along dim {dim_rule.__doc__} (sections must divide it)."
    return meta, impl


def _min_rank(op: str, self, n: int) -> None:
    if len(self._shape) < n:
        raise RuntimeError(
            f"{op}(): requires a tensor with at least {n} dimension"
            f"{'s' if n > 1 else ''}, but got a tensor with "
            f"{len(self._shape)} dimensions!"
        )


def _hsplit_dim(op, self) -> int:
    """1 (0 for 1-D tensors)"""
    _min_rank(op, self, 1)
    return 1 if len(self._shape) > 1 else 0


def _vsplit_dim(op, self) -> int:
    """0"""
    _min_rank(op, self, 2)
    return 0


def _dsplit_dim(op, self) -> int:
    """2"""
    _min_rank(op, self, 3)
    return 2


# ---- flips and rotation ---------------------------------------------------------------------


def _flip_dim(op: str, dim: int, rank: int):
    def meta(self):
        _min_rank(op, self, rank)
        return _spec(self, self._shape)

    def impl(self):
        return self.flip([dim])

    impl.__name__ = op
    impl.__doc__ = f"`self` with dim {dim} reversed (``flip(x, [{dim}])``)."
    return meta, impl


def _meta_rot90(self, k, dims):
    if len(dims) != 2:
        raise RuntimeError(
            f"rot90(): expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if len(self._shape) < 2:
        raise RuntimeError(
            f"rot90(): expected total dims >= 2, but got total dims = {len(self._shape)}"
        )
    d0, d1 = (wrap_dim("rot90", d, len(self._shape)) for d in dims)
    if d0 == d1:
        raise RuntimeError(
            f"rot90(): expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    shape = list(self._shape)
    if k % 2:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return _spec(self, shape)


def _rot90(self, k, dims):
    """Rotate by 90 degrees `k` times in the plane of `dims` (from the first toward the
    second), as numpy's rot90."""
    d0, d1 = dims
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.clone()


# ---- repeat_interleave, split aliases -----------------------------------------------------


def _repeat_counts(self, repeats, dim) -> tuple:
    """(tensor to repeat, dim, repeats as an int or a host list of counts)."""
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else wrap_dim("repeat_interleave", dim, max(len(x._shape), 1))
    if isinstance(repeats, _T) and repeats._shape:
        if len(repeats._shape) > 1 or repeats._dtype.is_floating_point:
            raise RuntimeError("repeat_interleave(): repeats must be 0-dim or 1-dim integer tensor")
        counts = [int(c) for c in repeats.tolist()]
        size = x._shape[d] if x._shape else 1
        if len(counts) not in (1, size):
            raise RuntimeError(
                f"repeat_interleave(): repeats must have the same size as input "
                f"along dim, but got repeats.size(0) = {len(counts)} and "
                f"input.size({d}) = {size}"
            )
        if any(c < 0 for c in counts):
            raise RuntimeError("repeat_interleave(): repeats can not be negative")
        return x, d, counts[0] if len(counts) == 1 else counts
    r = to_int("repeat_interleave", "repeats", 2, repeats)
    if r < 0:
        raise RuntimeError("repeat_interleave(): repeats can not be negative")
    return x, d, r


def _repeat_interleave(self, repeats, dim, output_size):
    """Each element (slice along `dim`; of the flattened tensor without a dim) repeated
    `repeats` times in place; `repeats` is an int or one count per element. With only a
    tensor of counts, the indices 0..n-1 each repeated its count."""
    if repeats is None:
        counts = self
        self = _op("arange")(shape_numel(counts._shape), device=counts._device)
        repeats, dim = counts, 0
    x, d, r = _repeat_counts(self, repeats, dim)
    if not x._shape:
        x = x.reshape(1)
    if isinstance(r, int):
        shape = list(x._shape)
        expanded = x.unsqueeze(d + 1).expand(shape[: d + 1] + [r] + shape[d + 1 :])
        return expanded.flatten(d, d + 1)
    index = [i for i, c in enumerate(r) for _ in range(c)]
    from .factories_public import tensor

    return x.index_select(d, tensor(index, dtype=dt.int64, device=x._device))


def _meta_split_with_sizes(self, split_sizes, dim):
    size = self._shape[dim] if self._shape else 0
    if sum(split_sizes) != size or any(n < 0 for n in split_sizes):
        raise RuntimeError(
            f"split_with_sizes(): expects split_sizes to sum exactly to {size} "
            f"(input tensor's size at dimension {dim}), but got split_sizes="
            f"{list(split_sizes)}"
        )
    return _op_meta("split")(self, list(split_sizes), dim)


def _op_meta(name: str):
    from .declare import REGISTRY

    return REGISTRY[name].meta


def _split_with_sizes(self, split_sizes, dim, sections):
    """Views of `self` of the given lengths along `dim` (they must add up to its size)."""
    return self.split(list(split_sizes), dim)


def _unsafe_split(self, split_size, dim, sections):
    """``split`` (PyTorch's variant whose views autograd does not track as views)."""
    return self.split(split_size, dim)


def _unsafe_chunk(self, chunks, dim, sections):
    """``chunk`` (PyTorch's variant whose views autograd does not track as views)."""
    return self.chunk(chunks, dim)


def _declare_all() -> None:
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="shape", out=False)
    declare(
        "broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)",
        _meta_broadcast_to,
        impl=_broadcast_to,
        **comp,
    )
    declare(
        "broadcast_tensors(Tensor[] tensors) -> Tensor[]",
        _meta_broadcast_tensors,
        impl=_broadcast_tensors,
        method=False,
        function=False,
        **comp,
    )
    declare("ravel(Tensor(a) self) -> Tensor(a)", _meta_ravel, impl=_ravel, **comp)
    for n in (1, 2, 3):
        meta, impl = _atleast(n)
        declare(f"atleast_{n}d(Tensor(a) self) -> Tensor(a)", meta, impl=impl, method=False, **comp)
    declare(
        "reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)",
        _meta_reshape_as,
        impl=_reshape_as,
        function=False,
        **comp,
    )
    for name, impl in (
        ("hstack", _hstack),
        ("vstack", _vstack),
        ("dstack", _dstack),
        ("column_stack", _column_stack),
    ):
        declare(f"{name}(Tensor[] tensors) -> Tensor", impl=impl, method=False, **comp)
    declare(
        "tensor_split(Tensor(a) self, Any indices_or_sections, Dim dim=0) -> Tensor(a)[]",
        _meta_tensor_split,
        impl=_tensor_split,
        precomputed=("pieces",),
        **comp,
    )
    for name, rule in (("hsplit", _hsplit_dim), ("vsplit", _vsplit_dim), ("dsplit", _dsplit_dim)):
        meta, impl = _even_split(name, rule)
        declare(
            f"{name}(Tensor(a) self, Any indices_or_sections) -> Tensor(a)[]",
            meta,
            impl=impl,
            precomputed=("pieces",),
            **comp,
        )
    for name, dim, rank in (("flipud", 0, 1), ("fliplr", 1, 2)):
        meta, impl = _flip_dim(name, dim, rank)
        declare(f"{name}(Tensor self) -> Tensor", meta, impl=impl, **comp)
    declare(
        "rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor", _meta_rot90, impl=_rot90, **comp
    )
    declare(
        "repeat_interleave(Tensor self, Any repeats=None, int? dim=None, *, "
        "int? output_size=None) -> Tensor",
        impl=_repeat_interleave,
        **comp,
    )
    declare(
        "split_with_sizes(Tensor(a) self, int[] split_sizes, Dim dim=0) -> Tensor(a)[]",
        _meta_split_with_sizes,
        impl=_split_with_sizes,
        precomputed=("sections",),
        **comp,
    )
    declare(
        "unsafe_split(Tensor(a) self, int split_size, Dim dim=0) -> Tensor(a)[]",
        lambda self, split_size, dim: _op_meta("split")(self, split_size, dim),
        impl=_unsafe_split,
        precomputed=("sections",),
        **comp,
    )
    declare(
        "unsafe_chunk(Tensor(a) self, int chunks, Dim dim=0) -> Tensor(a)[]",
        lambda self, chunks, dim: _op_meta("chunk")(self, chunks, dim),
        impl=_unsafe_chunk,
        precomputed=("sections",),
        **comp,
    )


_declare_all()
broadcast_tensors = tensor_varargs("broadcast_tensors", _broadcast_tensors.__doc__)


def _atleast_public(n: int):
    """``coretorch.atleast_<n>d``: one tensor gives one tensor; several (or a list) a tuple."""
    op = _op(f"atleast_{n}d")

    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], _T):
            return op(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        return tuple(op(t) for t in tensors)

    fn.__name__ = fn.__qualname__ = f"atleast_{n}d"
    fn.__doc__ = op.__doc__
    return fn


atleast_1d, atleast_2d, atleast_3d = (_atleast_public(n) for n in (1, 2, 3))
