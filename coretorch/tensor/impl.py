"""`TensorImpl`: the data model of a tensor (storage, sizes, strides, offset, dtype, device, key
set, version counter, autograd metadata). `Tensor` adds the user-facing methods on top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .storage import Storage

if TYPE_CHECKING:
    from ..autograd.node import AccumulateGrad, Node
    from ..device import device
    from ..dtypes import dtype

__all__ = [
    "TensorImpl",
    "AutogradMeta",
    "requires_grad",
    "contiguous_strides",
    "shape_numel",
    "wrap_dim",
    "is_overlapping",
    "device_key_bits",
    "contiguous_geometry",
    "new_autograd_meta",
]

# device type name -> dispatch-key bit of its backend; filled by backend registration
device_key_bits: dict[str, int] = {}


class AutogradMeta:
    """Autograd state of a tensor; absent (None) on tensors autograd never touched."""

    __slots__ = (
        "requires_grad",
        "grad",
        "grad_fn",
        "output_nr",
        "retains_grad",
        "hooks",
        "post_accumulate_grad_hooks",
        "grad_accumulator",
        "name",
    )
    grad: Any  # a Tensor or None
    grad_fn: Node | None
    grad_accumulator: AccumulateGrad | None

    def __init__(self, requires_grad: bool = False, grad_fn=None, output_nr: int = 0):
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks: dict | None = None  # handle id -> hook
        self.post_accumulate_grad_hooks: dict | None = None  # handle id -> hook
        self.grad_accumulator = None
        self.name: str | None = None


_new = object.__new__


def new_autograd_meta(grad_fn, output_nr: int) -> AutogradMeta:
    """The AutogradMeta of output `output_nr` of `grad_fn` (autograd gives one to every float
    output it records: made without running __init__, ~0.6k instructions less)."""
    m = _new(AutogradMeta)
    m.requires_grad = m.retains_grad = False
    m.grad_fn, m.output_nr = grad_fn, output_nr
    m.grad = m.hooks = m.post_accumulate_grad_hooks = m.grad_accumulator = m.name = None
    return m


class TensorImpl:
    """Storage + geometry + dtype/device + dispatch keys + version counter + autograd meta.

    `_vc` is a one-element list shared by a tensor and all its views: bumping it records an
    in-place change that autograd can detect. `_base` is the tensor a view was taken from.
    `_cache` belongs to the backend (the cpu backend keeps its numpy view there).
    """

    __slots__ = (
        "_storage",
        "_shape",
        "_stride",
        "_offset",
        "_dtype",
        "_device",
        "_keys",
        "_vc",
        "_autograd",
        "_base",
        "_cache",
        "__weakref__",
        "__dict__",
    )
    # the slots' types, for the type checker (annotations only: no class attributes are made)
    _storage: Storage
    _shape: tuple[int, ...]
    _stride: tuple[int, ...]
    _offset: int
    _dtype: dtype
    _device: device
    _keys: int
    _vc: list[int]
    _autograd: AutogradMeta | None
    _base: Any
    _cache: Any

    @property
    def _version(self) -> int:
        return self._vc[0]

    def _bump_version(self) -> None:
        self._vc[0] += 1


def requires_grad(t: TensorImpl) -> bool:
    """Whether autograd tracks `t`: a leaf that requires grad, or the output of a recorded op."""
    m = t._autograd
    return m is not None and (m.requires_grad or m.grad_fn is not None)


def shape_numel(shape) -> int:
    """The number of elements of a tensor of `shape` (1 for a 0-d shape)."""
    n = 1
    for s in shape:
        n *= s
    return n


def wrap_dim(op: str, dim, ndim: int) -> int:
    """`dim` as a non-negative index into `ndim` dims (a 0-d tensor takes dim 0 or -1), with
    PyTorch's TypeError/IndexError naming `op` otherwise."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"{op}(): Dimension out of range (expected to be in range of "
            f"[{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def is_overlapping(shape: tuple, stride: tuple) -> bool:
    """Whether two indices of this geometry can address the same element."""
    span = 0
    for st, n in sorted((st, n) for n, st in zip(shape, stride) if n > 1):
        if st <= span:
            return True
        span += (n - 1) * st
    return False


def contiguous_strides(shape: tuple) -> tuple:
    """Row-major strides (in elements) for `shape`."""
    n = len(shape)
    if n == 0:
        return ()
    if n == 1:
        return (1,)
    strides = [1] * n
    acc = 1
    for i in range(n - 1, 0, -1):
        d = shape[i]
        acc *= d if d > 1 else 1
        strides[i - 1] = acc
    return tuple(strides)


# shape -> (numel, contiguous strides): programs reuse few shapes, and a dict look-up costs
# ~0.3k instructions where computing both costs ~1.7k (benchmarks/instructions.py --layers)
_geometry: dict[tuple, tuple[int, tuple]] = {}
_GEOMETRY_CACHE_SIZE = 4096


def contiguous_geometry(shape: tuple) -> tuple[int, tuple]:
    """``(numel, contiguous strides)`` of `shape` (cached)."""
    g = _geometry.get(shape)
    if g is None:
        if len(_geometry) >= _GEOMETRY_CACHE_SIZE:
            _geometry.clear()
        g = _geometry[shape] = (shape_numel(shape), contiguous_strides(shape))
    return g


def new_impl(
    cls,
    storage: Storage,
    shape: tuple,
    stride: tuple,
    offset: int,
    dtype,
    device,
    keys: int,
    vc: list | None = None,
    base: Any = None,
):
    """Create a tensor object of class `cls` without running any __init__ (hot path)."""
    t = object.__new__(cls)
    t._storage = storage
    t._shape = shape
    t._stride = stride
    t._offset = offset
    t._dtype = dtype
    t._device = device
    t._keys = keys
    t._vc = [0] if vc is None else vc
    t._autograd = None
    t._base = base
    t._cache = None
    return t
