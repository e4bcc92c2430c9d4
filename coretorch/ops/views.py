"""View ops, implemented once in the core for every backend: the result shares the input's
storage and version counter and only has new sizes, strides and offset."""
from __future__ import annotations

from ..dispatch.keys import AUTOGRAD_BIT
from ..tensor.impl import TensorImpl, contiguous_strides, new_impl, shape_numel
from ..tensor.tensor import Tensor
from .declare import EXPLICIT, IMPLICIT, declare
from .meta_rules import size_arg, wrap_dim
from .view_derivatives import VIEW_DERIVATIVES

_T = TensorImpl


def make_view(self: TensorImpl, shape: tuple, stride: tuple, offset: int) -> Tensor:
    """A tensor over `self`'s storage with new geometry; `_base` is the root of the view chain."""
    base = self._base if self._base is not None else self
    # a view keeps the Autograd key of an input that requires grad (even under no_grad), so
    # autograd sees in-place changes through it
    return new_impl(Tensor, self._storage, shape, stride, offset, self._dtype, self._device,
                    self._keys, self._vc, base)


def _infer_size(op: str, shape: tuple, numel: int) -> tuple:
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
            raise RuntimeError(f"{op}(): shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"{op}(): shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape: tuple, old_stride: tuple, new_shape: tuple):
    """Strides that view `old` as `new_shape` without copying, or None (PyTorch's computeStride)."""
    if not old_shape:
        return tuple(1 for _ in new_shape)
    numel = shape_numel(old_shape)
    if numel == 0:
        return contiguous_strides(new_shape) if old_shape != new_shape else old_stride
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
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


def _view(self, *shape):
    """A view with a new shape (sizes may contain one -1); the elements must be compatible."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and hasattr(shape[0], "itemsize"):
        raise NotImplementedError("view(dtype): reinterpreting a tensor's dtype is not supported")
    shape = _infer_size("view", size_arg("view", shape), shape_numel(self._shape))
    stride = view_strides(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return make_view(self, shape, stride, self._offset)


def _reshape(self, *shape):
    """`view` when the strides allow it, else a contiguous copy of the data with that shape."""
    shape = _infer_size("reshape", size_arg("reshape", shape), shape_numel(self._shape))
    if view_strides(self._shape, self._stride, shape) is not None:
        return self.view(shape)
    return self.clone(memory_format="contiguous").view(shape)


def _as_strided(self, size, stride, storage_offset=None):
    """A view with explicit sizes, strides (in elements) and storage offset."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided(): mismatch in length of strides and shape ({len(size)} "
                           f"sizes, {len(stride)} strides)")
    offset = self._offset if storage_offset is None else storage_offset
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError("as_strided(): sizes and strides must be non-negative")
    if 0 not in size:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * self._dtype.itemsize > self._storage.nbytes:
            raise RuntimeError(f"as_strided(): setStorage: sizes {list(size)}, strides "
                               f"{list(stride)}, storage offset {offset} are out of bounds for "
                               f"storage of size {self._storage.nbytes} bytes")
    return make_view(self, size, stride, offset)


def _transpose(self, dim0, dim1):
    """Swap two dimensions (a view)."""
    n = len(self._shape)
    d0, d1 = wrap_dim("transpose", dim0, n), wrap_dim("transpose", dim1, n)
    if n == 0:
        return make_view(self, (), (), self._offset)
    shape, stride = list(self._shape), list(self._stride)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    return make_view(self, tuple(shape), tuple(stride), self._offset)


def _t(self):
    """Transpose a tensor of at most 2 dims."""
    if len(self._shape) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{len(self._shape)}D")
    return self.transpose(0, 1) if len(self._shape) == 2 else self.view(self._shape)


def _permute(self, *dims):
    """Reorder dimensions (a view)."""
    dims = size_arg("permute", dims)
    n = len(self._shape)
    if len(dims) != n:
        raise RuntimeError(f"permute(): number of dims don't match in permute (tensor has {n}, "
                           f"got {len(dims)})")
    dims = tuple(wrap_dim("permute", d, n) for d in dims)
    if sorted(dims) != list(range(n)):
        raise RuntimeError(f"permute(): repeated dim in {list(dims)}")
    return make_view(self, tuple(self._shape[d] for d in dims),
                     tuple(self._stride[d] for d in dims), self._offset)


def _expand(self, *sizes, implicit=False):
    """Broadcast to `sizes` (-1 keeps a dim) without copying: expanded dims get stride 0."""
    sizes = size_arg("expand", sizes)
    n, m = len(self._shape), len(sizes)
    if m < n:
        raise RuntimeError(f"expand(): the number of sizes provided ({m}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({n})")
    shape, stride = [], []
    for i, s in enumerate(sizes):
        j = i - (m - n)
        if j < 0:
            if s < 0:
                raise RuntimeError(f"expand(): the expanded size of the tensor (-1) isn't allowed "
                                   f"in a leading, non-existing dimension {i}")
            shape.append(s)
            stride.append(0)
            continue
        cur = self._shape[j]
        if s == -1:
            s = cur
        if cur == s:
            shape.append(s)
            stride.append(self._stride[j])
        elif cur == 1:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(f"expand(): The expanded size of the tensor ({s}) must match the "
                               f"existing size ({cur}) at non-singleton dimension {i}.  Target "
                               f"sizes: {list(sizes)}.  Tensor sizes: {list(self._shape)}")
    return make_view(self, tuple(shape), tuple(stride), self._offset)


def _expand_as(self, other):
    return self.expand(other._shape)


def _view_as(self, other):
    return self.view(other._shape)


def _squeeze(self, dim=None):
    """Remove size-1 dims (all, one, or a tuple of them)."""
    n = len(self._shape)
    if dim is None:
        dims = {i for i, s in enumerate(self._shape) if s == 1}
    else:
        dl = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {wrap_dim("squeeze", d, n) for d in dl}
        dims = {d for d in dims if n and self._shape[d] == 1}
    keep = [i for i in range(n) if i not in dims]
    return make_view(self, tuple(self._shape[i] for i in keep),
                     tuple(self._stride[i] for i in keep), self._offset)


def _unsqueeze(self, dim):
    """Insert a size-1 dim at `dim`."""
    n = len(self._shape)
    d = wrap_dim("unsqueeze", dim, n + 1)
    stride = self._shape[d] * self._stride[d] if d < n else 1
    return make_view(self, self._shape[:d] + (1,) + self._shape[d:],
                     self._stride[:d] + (stride,) + self._stride[d:], self._offset)


def _slice(self, dim=0, start=None, end=None, step=1):
    """``self[..., start:end:step, ...]`` along `dim` (a view)."""
    n = len(self._shape)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim("slice", dim, n)
    if step <= 0:
        raise ValueError("slice(): step must be greater than zero")
    size = self._shape[d]
    start, end = 0 if start is None else start, size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    length = (end - start + step - 1) // step
    shape = self._shape[:d] + (length,) + self._shape[d + 1:]
    stride = self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1:]
    return make_view(self, shape, stride, self._offset + start * self._stride[d])


def _narrow(self, dim, start, length):
    """`length` elements of `dim` from `start` (a view)."""
    n = len(self._shape)
    d = wrap_dim("narrow", dim, n)
    size = self._shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size "
                         f"({size}).")
    return _slice(self, d, start, start + length, 1)


def _select(self, dim, index):
    """Index `index` of `dim`, removing that dim (a view)."""
    n = len(self._shape)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim("select", dim, n)
    size = self._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._shape)} at dimension {d}")
    if index < 0:
        index += size
    return make_view(self, self._shape[:d] + self._shape[d + 1:],
                     self._stride[:d] + self._stride[d + 1:],
                     self._offset + index * self._stride[d])


def _diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal of the 2-D slices over `dim1`, `dim2`, as the last dim (a view)."""
    n = len(self._shape)
    d1, d2 = wrap_dim("diagonal", dim1, n), wrap_dim("diagonal", dim2, n)
    if d1 == d2:
        raise RuntimeError("diagonal(): dimensions dim1 and dim2 cannot be identical")
    off = self._offset
    if offset >= 0:
        length = max(min(self._shape[d1], self._shape[d2] - offset), 0)
        if length:
            off += offset * self._stride[d2]
    else:
        length = max(min(self._shape[d1] + offset, self._shape[d2]), 0)
        if length:
            off -= offset * self._stride[d1]
    keep = [i for i in range(n) if i not in (d1, d2)]
    shape = tuple(self._shape[i] for i in keep) + (length,)
    stride = tuple(self._stride[i] for i in keep) + (self._stride[d1] + self._stride[d2],)
    return make_view(self, shape, stride, off)


def _unfold(self, dimension, size, step):
    """All slices of `size` with stride `step` along `dimension`, as a new last dim (a view)."""
    n = len(self._shape)
    d = wrap_dim("unfold", dimension, n) if n else 0
    dim_size = self._shape[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {d} is {dim_size} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    count = (dim_size - size) // step + 1
    if not n:
        return make_view(self, (size,), (1,), self._offset)
    shape = self._shape[:d] + (count,) + self._shape[d + 1:] + (size,)
    stride = (self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1:]
              + (self._stride[d],))
    return make_view(self, shape, stride, self._offset)


def _alias(self):
    return make_view(self, self._shape, self._stride, self._offset)


def _detach(self):
    """A view that shares data but is cut from the autograd graph."""
    t = make_view(self, self._shape, self._stride, self._offset)
    t._base = None  # not a view for autograd purposes
    t._keys &= ~AUTOGRAD_BIT
    return t


# ---- composites over the views ------------------------------------------------------------------

def _flatten(self, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one (a view when possible)."""
    n = len(self._shape)
    if n == 0:
        return self.reshape(1)
    s, e = wrap_dim("flatten", start_dim, n), wrap_dim("flatten", end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    return self.reshape(self._shape[:s] + (shape_numel(self._shape[s:e + 1]),) + self._shape[e + 1:])


def _unflatten(self, dim, sizes):
    """Split dim `dim` into `sizes` (one may be -1)."""
    n = len(self._shape)
    d = wrap_dim("unflatten", dim, n)
    sizes = _infer_size("unflatten", tuple(sizes), self._shape[d])
    return self.view(self._shape[:d] + sizes + self._shape[d + 1:])


def _movedim(self, source, destination):
    n = len(self._shape)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim(): Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [wrap_dim("movedim", d, n) for d in src]
    dst = [wrap_dim("movedim", d, n) for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return self.permute(order)


def _unbind(self, dim=0):
    """All slices along `dim`, each without that dim."""
    d = wrap_dim("unbind", dim, len(self._shape))
    return tuple(self.select(d, i) for i in range(self._shape[d]))


def _split(self, split_size_or_sections, dim=0):
    """Chunks of `split_size` along `dim` (the last may be smaller), or of the given sizes."""
    d = wrap_dim("split", dim, len(self._shape))
    size = self._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split(): split_size can only be 0 if dimension size is 0, but "
                               f"got dimension size of {size}")
        sections = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes(): expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sections}")
    out, start = [], 0
    for length in sections:
        out.append(self.narrow(d, start, length))
        start += length
    return tuple(out)


def _chunk(self, chunks, dim=0):
    """Split into `chunks` pieces of ceil(size / chunks) along `dim`."""
    if chunks <= 0:
        raise RuntimeError(f"chunk(): chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim("chunk", dim, len(self._shape))
    size = self._shape[d]
    step = max(1, -(-size // chunks))
    return self.split(step, d)


def _contiguous(self, memory_format=None):
    """Self if already contiguous, else a contiguous copy."""
    return self if self.is_contiguous() else self.clone(memory_format="contiguous")


def _declare_all() -> None:
    views = dict(kind=EXPLICIT, family="view", out=False)
    for name, fn in (("view", _view), ("as_strided", _as_strided), ("transpose", _transpose),
                     ("t", _t), ("permute", _permute), ("expand", _expand),
                     ("squeeze", _squeeze), ("unsqueeze", _unsqueeze), ("slice", _slice),
                     ("narrow", _narrow), ("select", _select), ("diagonal", _diagonal),
                     ("unfold", _unfold), ("alias", _alias)):
        declare(name, impl=fn, derivative=VIEW_DERIVATIVES[name], **views)
    declare("detach", impl=_detach, kind=EXPLICIT, family="view", out=False,
            differentiable=False)
    comp = dict(kind=IMPLICIT, family="view", out=False)
    for name, fn in (("reshape", _reshape), ("flatten", _flatten), ("unflatten", _unflatten),
                     ("movedim", _movedim), ("unbind", _unbind), ("split", _split),
                     ("chunk", _chunk), ("expand_as", _expand_as), ("view_as", _view_as),
                     ("contiguous", _contiguous)):
        declare(name, impl=fn, **comp)


_declare_all()
