"""View ops, implemented once in the core for every backend: the result shares the input's
storage and version counter and only has new sizes, strides and offset.

Each view's meta rule validates its arguments and computes the view's geometry (shape, strides,
storage offset), which it passes on as precomputed values; one kernel, `view_kernel`, makes the
tensor from them. Ops that may copy (reshape, flatten, contiguous) or return several views
(split, chunk, unbind) are composites of these.
"""

from __future__ import annotations

from typing import Any

from ..dispatch.keys import AUTOGRAD_BIT
from ..memory_formats import dim_order, memory_format_arg, preserve_format
from ..tensor.impl import (
    TensorImpl,
    contiguous_geometry,
    contiguous_strides,
    new_impl,
    shape_numel,
    wrap_dim,
)
from ..tensor.tensor import Tensor
from .declare import EXPLICIT, IMPLICIT, declare
from .view_derivatives import VIEW_DERIVATIVES

__all__ = ["make_view", "view_strides", "infer_size", "view_kernel", "VIEW_GEOMETRY"]

_T = TensorImpl

# the values a view's meta rule precomputes for `view_kernel`
VIEW_GEOMETRY = ("view_shape", "view_stride", "view_offset")


def make_view(self: TensorImpl, shape: tuple, stride: tuple, offset: int) -> Tensor:
    """A tensor over `self`'s storage with new geometry; `_base` is the root of the view chain."""
    base = self._base if self._base is not None else self
    # a view keeps the Autograd key of an input that requires grad (even under no_grad), so
    # autograd sees in-place changes through it
    return new_impl(
        Tensor,
        self._storage,
        shape,
        stride,
        offset,
        self._dtype,
        self._device,
        self._keys,
        self._vc,
        base,
    )


def view_kernel(self, *record_and_geometry):
    """The kernel of every view op: a view of `self` with the geometry its meta rule computed
    (the last three values)."""
    shape, stride, offset = record_and_geometry[-3:]
    return make_view(self, shape, stride, offset)


def _geometry(self, shape: tuple, stride: tuple, offset: int) -> tuple:
    """What a view's meta rule returns: its Spec and the precomputed geometry."""
    return (shape, self._dtype, self._device), (shape, stride, offset)


def infer_size(op: str, shape: tuple, numel: int) -> tuple:
    """`shape` with its one -1 (if any) replaced so that it holds `numel` elements."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}(): only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"{op}(): invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(
                f"{op}(): shape '{list(shape)}' is invalid for input of size {numel}"
            )
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"{op}(): shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape: tuple, old_stride: tuple, new_shape: tuple):
    """Strides that view `old` as `new_shape` without copying, or None (PyTorch's computeStride)."""
    if not old_shape:
        return tuple(1 for _ in new_shape)
    numel, contiguous = contiguous_geometry(old_shape)
    if numel == 0:
        return contiguous_strides(new_shape) if old_shape != new_shape else old_stride
    if old_stride == contiguous:  # one chunk (the common case): the search below gives these
        return contiguous_geometry(tuple(new_shape))[1]
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1
            and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


# ---- the views' meta rules (geometry) -----------------------------------------------------------


def _meta_view(self, size):
    shape = infer_size("view", size, shape_numel(self._shape))
    stride = view_strides(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use "
            ".reshape(...) instead."
        )
    return _geometry(self, shape, stride, self._offset)


def _meta_view_as(self, other):
    return _meta_view(self, other._shape)


def _meta_as_strided(self, size, stride, storage_offset):
    if len(size) != len(stride):
        raise RuntimeError(
            f"as_strided(): mismatch in length of strides and shape ({len(size)} "
            f"sizes, {len(stride)} strides)"
        )
    offset = self._offset if storage_offset is None else storage_offset
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(
            "as_strided(): sizes, strides and the storage offset must be non-negative"
        )
    if 0 not in size:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * self._dtype.itemsize > self._storage.nbytes:
            raise RuntimeError(
                f"as_strided(): setStorage: sizes {list(size)}, strides "
                f"{list(stride)}, storage offset {offset} are out of bounds for "
                f"storage of size {self._storage.nbytes} bytes"
            )
    return _geometry(self, size, stride, offset)


def _meta_transpose(self, dim0, dim1):
    if not self._shape:
        return _geometry(self, (), (), self._offset)
    shape, stride = list(self._shape), list(self._stride)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    stride[dim0], stride[dim1] = stride[dim1], stride[dim0]
    return _geometry(self, tuple(shape), tuple(stride), self._offset)


def _meta_t(self):
    n = len(self._shape)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return _geometry(self, self._shape[::-1], self._stride[::-1], self._offset)


def _meta_permute(self, dims):
    n = len(self._shape)
    if len(dims) != n:
        raise RuntimeError(
            f"permute(): number of dims don't match in permute (tensor has {n}, got {len(dims)})"
        )
    return _geometry(
        self,
        tuple(self._shape[d] for d in dims),
        tuple(self._stride[d] for d in dims),
        self._offset,
    )


def _meta_expand(self, size, implicit):
    n, m = len(self._shape), len(size)
    if m < n:
        raise RuntimeError(
            f"expand(): the number of sizes provided ({m}) must be greater or equal "
            f"to the number of dimensions in the tensor ({n})"
        )
    shape, stride = [], []
    for i, s in enumerate(size):
        j = i - (m - n)
        if j < 0:
            if s < 0:
                raise RuntimeError(
                    f"expand(): the expanded size of the tensor ({s}) isn't allowed "
                    f"in a leading, non-existing dimension {i}"
                )
            shape.append(s)
            stride.append(0)
            continue
        cur = self._shape[j]
        if s == -1:
            s = cur
        if cur == s:
            shape.append(s)
            stride.append(self._stride[j])
        elif cur == 1 and s >= 0:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(
                f"expand(): The expanded size of the tensor ({s}) must match the "
                f"existing size ({cur}) at non-singleton dimension {i}.  Target "
                f"sizes: {list(size)}.  Tensor sizes: {list(self._shape)}"
            )
    return _geometry(self, tuple(shape), tuple(stride), self._offset)


def _meta_expand_as(self, other):
    return _meta_expand(self, other._shape, False)


def _meta_squeeze(self, dim):
    if dim is None:
        drop = {i for i, s in enumerate(self._shape) if s == 1}
    else:
        drop = {d for d in dim if self._shape and self._shape[d] == 1}
    keep = [i for i in range(len(self._shape)) if i not in drop]
    return _geometry(
        self,
        tuple(self._shape[i] for i in keep),
        tuple(self._stride[i] for i in keep),
        self._offset,
    )


def _meta_unsqueeze(self, dim):
    n = len(self._shape)
    d = wrap_dim("unsqueeze", dim, n + 1)
    stride = self._shape[d] * self._stride[d] if d < n else 1
    return _geometry(
        self,
        self._shape[:d] + (1,) + self._shape[d:],
        self._stride[:d] + (stride,) + self._stride[d:],
        self._offset,
    )


def _no_dims(op: str, self) -> None:
    if not self._shape:
        raise IndexError(f"{op}() cannot be applied to a 0-dim tensor.")


def _slice_geometry(self, d: int, start: int, end: int, step: int) -> tuple:
    """Geometry of ``self[..., start:end:step, ...]`` along dim `d` (start/end already clamped)."""
    length = (end - start + step - 1) // step
    return _geometry(
        self,
        self._shape[:d] + (length,) + self._shape[d + 1 :],
        self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1 :],
        self._offset + start * self._stride[d],
    )


def _meta_slice(self, dim, start, end, step):
    _no_dims("slice", self)
    if step <= 0:
        raise ValueError("slice(): step must be greater than zero")
    size = self._shape[dim]
    start, end = 0 if start is None else start, size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return _slice_geometry(self, dim, start, end, step)


def _meta_narrow(self, dim, start, length):
    if not self._shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    size = self._shape[dim]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return _slice_geometry(self, dim, start, start + length, 1)


def _meta_select(self, dim, index):
    _no_dims("select", self)
    size = self._shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(self._shape)} at dimension {dim}"
        )
    if index < 0:
        index += size
    return _geometry(
        self,
        self._shape[:dim] + self._shape[dim + 1 :],
        self._stride[:dim] + self._stride[dim + 1 :],
        self._offset + index * self._stride[dim],
    )


def _meta_diagonal(self, offset, dim1, dim2):
    if dim1 == dim2:
        raise RuntimeError("diagonal(): dimensions dim1 and dim2 cannot be identical")
    off = self._offset
    if offset >= 0:
        length = max(min(self._shape[dim1], self._shape[dim2] - offset), 0)
        if length:
            off += offset * self._stride[dim2]
    else:
        length = max(min(self._shape[dim1] + offset, self._shape[dim2]), 0)
        if length:
            off -= offset * self._stride[dim1]
    keep = [i for i in range(len(self._shape)) if i not in (dim1, dim2)]
    return _geometry(
        self,
        tuple(self._shape[i] for i in keep) + (length,),
        tuple(self._stride[i] for i in keep) + (self._stride[dim1] + self._stride[dim2],),
        off,
    )


def _meta_unfold(self, dimension, size, step):
    dim_size = self._shape[dimension] if self._shape else 1
    if size < 0 or size > dim_size:
        raise RuntimeError(
            f"unfold(): maximum size for tensor at dimension {dimension} is "
            f"{dim_size} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    if not self._shape:
        return _geometry(self, (size,), (1,), self._offset)
    d = dimension
    count = (dim_size - size) // step + 1
    shape = self._shape[:d] + (count,) + self._shape[d + 1 :] + (size,)
    stride = (
        self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1 :] + (self._stride[d],)
    )
    return _geometry(self, shape, stride, self._offset)


def _meta_same(self):
    return _geometry(self, self._shape, self._stride, self._offset)


def _detach(self, view_shape, view_stride, view_offset):
    """A view that shares data but is cut from the autograd graph."""
    t = make_view(self, view_shape, view_stride, view_offset)
    t._base = None  # not a view for autograd purposes
    t._keys &= ~AUTOGRAD_BIT
    return t


# ---- composites over the views ------------------------------------------------------------------


def _spec(self, shape: tuple) -> tuple:
    return (shape, self._dtype, self._device)


def _meta_reshape(self, shape):
    shape = infer_size("reshape", shape, shape_numel(self._shape))
    return _spec(self, shape), (shape,)


def _reshape(self, shape, inferred):
    """`view` when the strides allow it, else a contiguous copy of the data with that shape."""
    if view_strides(self._shape, self._stride, inferred) is not None:
        return self.view(inferred)
    return self.clone().view(inferred)


def _meta_flatten(self, start_dim, end_dim):
    if start_dim > end_dim:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    s = self._shape
    if not s:
        return _spec(self, (1,))
    return _spec(
        self, s[:start_dim] + (shape_numel(s[start_dim : end_dim + 1]),) + s[end_dim + 1 :]
    )


def _flatten(self, start_dim, end_dim):
    """Merge dims start_dim..end_dim into one (a view when possible)."""
    if self._shape and start_dim == end_dim:
        return self
    return self.reshape(_meta_flatten(self, start_dim, end_dim)[0])


def _meta_unflatten(self, dim, sizes):
    if not self._shape:
        raise IndexError("unflatten(): dimension specified as 0 but tensor has no dimensions")
    if not sizes:
        raise RuntimeError("unflatten(): sizes must be non-empty")
    sizes = infer_size("unflatten", sizes, self._shape[dim])
    return _spec(self, self._shape[:dim] + sizes + self._shape[dim + 1 :])


def _unflatten(self, dim, sizes):
    """Split dim `dim` into `sizes` (one may be -1)."""
    return self.view(_meta_unflatten(self, dim, sizes)[0])


def _meta_movedim(self, source, destination):
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim(): Invalid source or destination dims: source "
            f"({list(source)} dims) should contain the same number of dims as "
            f"destination ({list(destination)} dims)"
        )
    n = len(self._shape)
    given: list[int | None] = [None] * n
    for s, d in zip(source, destination):
        given[d] = s
    rest = iter(i for i in range(n) if i not in source)
    order = tuple(o if o is not None else next(rest) for o in given)
    return _spec(self, tuple(self._shape[i] for i in order) if n else ()), (order,)


def _movedim(self, source, destination, order):
    """Move dims `source` to positions `destination`, the others keeping their order."""
    return self.permute(order)


def _no_dims_to_split(op: str, self) -> None:
    if not self._shape:
        raise RuntimeError(f"{op}(): expects at least a 1-dimensional tensor")


def _meta_unbind(self, dim):
    _no_dims_to_split("unbind", self)
    shape = self._shape[:dim] + self._shape[dim + 1 :]
    return [_spec(self, shape)] * self._shape[dim]


def _unbind(self, dim):
    """All slices along `dim`, each without that dim."""
    return tuple(self.select(dim, i) for i in range(self._shape[dim]))


def _split_sections(op: str, self, split_size_or_sections, dim: int) -> list:
    _no_dims_to_split(op, self)
    size = self._shape[dim]
    if isinstance(split_size_or_sections, (int, _T)) and not isinstance(
        split_size_or_sections, bool
    ):
        from ..dispatch.arguments import to_int

        step = to_int(op, "split_size", 2, split_size_or_sections)
        if step < 0 or (step == 0 and size):
            raise RuntimeError(
                f"{op}(): split_size can only be 0 if dimension size is 0, but "
                f"got dimension size of {size}"
            )
        return [min(step, size - i) for i in range(0, size, step)] if size else [0]
    from ..dispatch.arguments import to_int_list

    sections = list(to_int_list(op, "split_size_or_sections", 2, split_size_or_sections))
    if any(s < 0 for s in sections) or sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes(): expects split_sizes to sum exactly to {size} "
            f"(input tensor's size at dimension {dim}), but got split_sizes="
            f"{sections}"
        )
    return sections


def _meta_split(self, split_size_or_sections, dim):
    sections = _split_sections("split", self, split_size_or_sections, dim)
    s = self._shape
    return [_spec(self, s[:dim] + (n,) + s[dim + 1 :]) for n in sections], (sections,)


def _narrowed(self, dim: int, sections) -> tuple:
    out, start = [], 0
    for length in sections:
        out.append(self.narrow(dim, start, length))
        start += length
    return tuple(out)


def _split(self, split_size_or_sections, dim, sections):
    """Chunks of `split_size` along `dim` (the last may be smaller), or of the given sizes."""
    return _narrowed(self, dim, sections)


def _meta_chunk(self, chunks, dim):
    if chunks <= 0:
        raise RuntimeError(f"chunk(): chunk expects `chunks` to be greater than 0, got: {chunks}")
    _no_dims_to_split("chunk", self)
    size = self._shape[dim]
    sections = _split_sections("chunk", self, max(1, -(-size // chunks)), dim)
    s = self._shape
    return [_spec(self, s[:dim] + (n,) + s[dim + 1 :]) for n in sections], (sections,)


def _chunk(self, chunks, dim, sections):
    """Split into `chunks` pieces of ceil(size / chunks) along `dim`."""
    return _narrowed(self, dim, sections)


def _meta_contiguous(self, memory_format):
    fmt = memory_format_arg("contiguous", memory_format)
    if fmt is preserve_format:
        raise RuntimeError(
            "contiguous(): preserve memory format is unsupported by the contiguous operator"
        )
    dim_order("contiguous", fmt, len(self._shape))
    return _spec(self, self._shape)


def _contiguous(self, memory_format):
    """Self if already dense in `memory_format` (default row-major), else a copy that is."""
    fmt = memory_format_arg("contiguous", memory_format)
    return self if self.is_contiguous(memory_format=fmt) else self.clone(memory_format=fmt)


# (schema, meta rule, docstring): every view op runs `view_kernel` with its meta rule's geometry
_VIEWS = (
    (
        "view(Tensor(a) self, int[] size) -> Tensor(a)",
        _meta_view,
        "A view of `input` with shape `size` (one entry may be -1); the strides must allow it "
        "(else use reshape).",
    ),
    (
        "view_as(Tensor(a) self, Tensor other) -> Tensor(a)",
        _meta_view_as,
        "``input.view(other.shape)``: a view of `input` with the shape of `other`.",
    ),
    (
        "as_strided(Tensor(a) self, int[] size, int[] stride, "
        "int? storage_offset=None) -> Tensor(a)",
        _meta_as_strided,
        "A view of `input`'s storage with explicit `size`, `stride` and `storage_offset`.",
    ),
    (
        "transpose(Tensor(a) self, Dim dim0, Dim dim1) -> Tensor(a)",
        _meta_transpose,
        "A view of `input` with dimensions `dim0` and `dim1` swapped.",
    ),
    (
        "t(Tensor(a) self) -> Tensor(a)",
        _meta_t,
        "The transpose of a matrix `input` (0-d and 1-d inputs are returned as they are).",
    ),
    (
        "permute(Tensor(a) self, Dim[] dims) -> Tensor(a)",
        _meta_permute,
        "A view of `input` with its dimensions reordered as `dims`.",
    ),
    (
        "expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)",
        _meta_expand,
        "A view of `input` broadcast to `size` (-1 keeps a size) without copying: expanded "
        "dimensions have stride 0.",
    ),
    (
        "expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
        _meta_expand_as,
        "``input.expand(other.shape)``: a view of `input` broadcast to the shape of `other`.",
    ),
    (
        "squeeze(Tensor(a) self, Dim[]? dim=None) -> Tensor(a)",
        _meta_squeeze,
        "A view of `input` without its size-1 dimensions (only those in `dim` when given).",
    ),
    (
        "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
        _meta_unsqueeze,
        "A view of `input` with a new size-1 dimension inserted at `dim`.",
    ),
    (
        "slice(Tensor(a) self, Dim dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)",
        _meta_slice,
        "``input[..., start:end:step]`` along `dim`, as a view (what ``t[a:b]`` runs).",
    ),
    (
        "narrow(Tensor(a) self, Dim dim, int start, int length) -> Tensor(a)",
        _meta_narrow,
        "A view of `length` elements of `input` along `dim`, from `start`.",
    ),
    (
        "select(Tensor(a) self, Dim dim, int index) -> Tensor(a)",
        _meta_select,
        "The slice of `input` at `index` along `dim`, as a view without that dimension.",
    ),
    (
        "diagonal(Tensor(a) self, int offset=0, Dim dim1=0, Dim dim2=1) -> Tensor(a)",
        _meta_diagonal,
        "A view of the diagonal of `input` over `dim1` and `dim2` (above it for `offset` > 0), as "
        "the last dimension.",
    ),
    (
        "unfold(Tensor(a) self, Dim dimension, int size, int step) -> Tensor(a)",
        _meta_unfold,
        "A view of all windows of `size` elements of `input` along `dimension`, `step` apart, in "
        "a new last dimension.",
    ),
    (
        "alias(Tensor(a) self) -> Tensor(a)",
        _meta_same,
        "A view of all of `input` (a new tensor object sharing its storage and geometry).",
    ),
)


def _declare_all() -> None:
    views: dict[str, Any] = dict(
        kind=EXPLICIT, family="view", out=False, precomputed=VIEW_GEOMETRY, saves=()
    )
    for schema, meta, doc in _VIEWS:
        name = schema.split("(", 1)[0]
        declare(schema, meta, impl=view_kernel, derivative=VIEW_DERIVATIVES[name], doc=doc, **views)
    declare(
        "detach(Tensor(a) self) -> Tensor(a)",
        _meta_same,
        impl=_detach,
        kind=EXPLICIT,
        family="view",
        out=False,
        precomputed=VIEW_GEOMETRY,
        differentiable=False,
    )
    comp: dict[str, Any] = dict(kind=IMPLICIT, family="view", out=False)
    declare(
        "reshape(Tensor(a) self, int[] shape) -> Tensor(a)",
        _meta_reshape,
        impl=_reshape,
        precomputed=("inferred",),
        **comp,
    )
    declare(
        "flatten(Tensor(a) self, Dim start_dim=0, Dim end_dim=-1) -> Tensor(a)",
        _meta_flatten,
        impl=_flatten,
        **comp,
    )
    declare(
        "unflatten(Tensor(a) self, Dim dim, int[] sizes) -> Tensor(a)",
        _meta_unflatten,
        impl=_unflatten,
        **comp,
    )
    declare(
        "movedim(Tensor(a) self, Dim[] source, Dim[] destination) -> Tensor(a)",
        _meta_movedim,
        impl=_movedim,
        precomputed=("order",),
        **comp,
    )
    declare("unbind(Tensor(a) self, Dim dim=0) -> Tensor(a)[]", _meta_unbind, impl=_unbind, **comp)
    declare(
        "split(Tensor(a) self, Any split_size_or_sections, Dim dim=0) -> Tensor(a)[]",
        _meta_split,
        impl=_split,
        precomputed=("sections",),
        **comp,
    )
    declare(
        "chunk(Tensor(a) self, int chunks, Dim dim=0) -> Tensor(a)[]",
        _meta_chunk,
        impl=_chunk,
        precomputed=("sections",),
        **comp,
    )
    declare(
        "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
        _meta_contiguous,
        impl=_contiguous,
        **comp,
    )


_declare_all()
