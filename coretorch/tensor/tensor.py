"""`Tensor`: the user-facing tensor.

Every hand-written method is defined in the class body below (geometry, metadata, autograd,
conversions, indexing, sharing); methods whose work lives in a layer above this one (ops,
autograd, multiprocessing) call it through `_late`. The ~200 op methods (``t.add``, ``t.sum``,
...) and the Python operators are the ops' own entry points, generated from their schemas and
set on the class by `coretorch.ops.methods.bind_methods` when the ops are declared; the stub
``tensor_ops.pyi`` (``make stubs``) declares them, as the base class `TensorOps` that type
checkers and editors see.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable, NoReturn

from .. import dtypes as _dt, memory_formats as _mf
from ..dtypes import dtype as _dtype_cls
from ..layout import strided as _strided
from .impl import AutogradMeta, TensorImpl, requires_grad as _tracks_grad, shape_numel, wrap_dim
from .layout import is_contiguous as _is_contiguous
from .size import Size

if TYPE_CHECKING:
    from .tensor_ops import TensorOps
else:
    TensorOps = object  # the op methods are set on Tensor at run time

_tuple_new = tuple.__new__

__all__ = ["Tensor"]


class _Late:
    """Modules above the tensor layer, imported when a method first needs them (an import at
    module level would be circular); afterwards an attribute read."""

    _MODULES = {
        "methods": "coretorch.ops.methods",
        "legacy": "coretorch.tensor.legacy",
        "sharing": "coretorch.multiprocessing.tensor_sharing",
        "hooks": "coretorch.autograd.tensor_hooks",
        "engine": "coretorch.autograd.engine",
        "dlpack": "coretorch.dlpack",
        "sparse": "coretorch.sparse.functional",
        "api": "coretorch",
    }

    def __getattr__(self, name: str):
        mod = importlib.import_module(self._MODULES[name])
        setattr(self, name, mod)
        return mod


_late = _Late()


def cast_method(name: str, dtype: _dtype_cls) -> Callable[..., "Tensor"]:
    """The method ``t.<name>()``: ``t.to(dtype)`` (self when it has the dtype already); also
    the casts of tensor containers such as `PackedSequence`."""

    def cast(self, memory_format=None) -> "Tensor":
        if memory_format is None:
            return self.to(dtype)
        return self.to(dtype, memory_format=memory_format)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to(coretorch.{dtype.name})``"
    cast.dtype = dtype  # type: ignore[attr-defined]  # read by containers' casts
    return cast


def _on_device(type_name: str) -> property:
    return property(
        lambda self: self._device.type == type_name,
        doc=f"Whether the tensor is on a '{type_name}' device.",
    )


class Tensor(TensorImpl, TensorOps):
    """A multi-dimensional array on a device, with autograd support (mirrors ``torch.Tensor``).

    Create tensors with factories (`coretorch.tensor`, `zeros`, `randn`, ...), not this class.
    """

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        """PyTorch's legacy constructor: ``Tensor(2, 3)`` (uninitialized), ``Tensor([1, 2])``
        (data), ``Tensor()`` (empty), in the default dtype on cpu (`coretorch.tensor.legacy`)."""
        if cls is not Tensor:
            raise TypeError(
                f"{cls.__name__}(...) is not a constructor; make a tensor with a "
                f"factory (coretorch.tensor, coretorch.empty, ...)"
            )
        from ..dtypes import get_default_dtype
        from .legacy import legacy_new

        return legacy_new("Tensor", get_default_dtype(), "cpu", args, kwargs, alias_any_dtype=True)

    # ---- geometry --------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The size of the tensor, as a Size."""
        return _tuple_new(Size, self._shape)  # already ints: skip Size's conversion

    def size(self, dim: int | None = None):
        """The shape, or the size of dimension `dim`."""
        if dim is None:
            return Size(self._shape)
        return self._shape[wrap_dim("size", dim, len(self._shape))]

    def stride(self, dim: int | None = None):
        """Strides in elements, or the stride of dimension `dim`."""
        if dim is None:
            return self._stride
        return self._stride[wrap_dim("stride", dim, len(self._shape))]

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    def dim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    ndimension = dim

    def numel(self) -> int:
        """The number of elements."""
        return shape_numel(self._shape)

    nelement = numel

    def storage_offset(self) -> int:
        """The offset of the first element in the storage, in elements."""
        return self._offset

    def untyped_storage(self):
        """The Storage holding this tensor's data (shared with its views)."""
        return self._storage

    def element_size(self) -> int:
        """The size of one element, in bytes."""
        return self._dtype.itemsize

    # PyTorch's property form of element_size()
    itemsize = property(element_size, doc="The size of one element, in bytes.")

    @property
    def nbytes(self) -> int:
        """The bytes the elements take (numel times element size; a view counts only its own)."""
        return self.numel() * self.itemsize

    def data_ptr(self) -> int:
        """The address of the first element."""
        return self._storage.address + self._offset * self._dtype.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether elements are laid out row-major with no gaps (size-1 dims are ignored); with
        `memory_format` (``coretorch.channels_last`` ...), dense in that format's order."""
        if memory_format is not None:
            fmt = _mf.memory_format_arg("is_contiguous", memory_format)
            if fmt is not _mf.contiguous_format:
                if fmt is _mf.preserve_format:
                    raise RuntimeError(
                        "is_contiguous(): preserve memory format is unsupported "
                        "by the contiguous operator"
                    )
                return _mf.is_contiguous_as(self._shape, self._stride, fmt)
        return _is_contiguous(self._shape, self._stride)

    def is_set_to(self, other: "Tensor") -> bool:
        """Whether `other` views the same storage with the same offset, size and strides."""
        return (
            self._storage is other._storage
            and self._offset == other._offset
            and self._shape == other._shape
            and self._stride == other._stride
        )

    # ---- metadata --------------------------------------------------------------------------
    @property
    def dtype(self) -> _dtype_cls:
        """The element type."""
        return self._dtype

    @property
    def device(self):
        """The device the data lives on."""
        return self._device

    @property
    def is_meta(self) -> bool:
        """Whether the tensor is on the meta device (shape and dtype, no data)."""
        return self._device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor is on the CPU."""
        return self._device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor is on a cuda device."""
        return self._device.type == "cuda"

    is_xpu, is_mps, is_mtia = _on_device("xpu"), _on_device("mps"), _on_device("mtia")
    is_xla, is_ipu, is_maia, is_vulkan = (
        _on_device("xla"),
        _on_device("ipu"),
        _on_device("maia"),
        _on_device("vulkan"),
    )
    # a dense tensor is strided (`coretorch.sparse.SparseTensor` answers sparse_coo); the other
    # layouts and kinds do not exist here: no tensor is csr, quantized, nested or mkldnn
    layout = _strided
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = property(
        lambda self: False, doc="False: a dense tensor has none of these layouts or kinds."
    )

    # ---- sparse COO (coretorch.sparse) -------------------------------------------------------
    def to_sparse(
        self, sparse_dim: int | None = None, *, layout=None, blocksize=None, dense_dim=None
    ) -> "Tensor":
        """A sparse COO tensor of the non-zero elements (of the first `sparse_dim` dims, values
        keeping the rest); differentiable."""
        if layout is not None and layout is not _late.sparse.sparse_coo_layout:
            raise RuntimeError(
                f"to_sparse(): only layout=coretorch.sparse_coo is supported, got {layout}"
            )
        return _late.sparse.to_sparse(self, sparse_dim)

    def to_dense(self, dtype=None, *, masked_grad: bool | None = None) -> "Tensor":
        """Self (already dense), or cast to `dtype`."""
        return self if dtype is None else self.to(dtype)

    def sparse_dim(self) -> int:
        """0: a dense tensor has no sparse dims."""
        return 0

    def dense_dim(self) -> int:
        """Every dim of a dense tensor is dense."""
        return len(self._shape)

    def _sparse_only(self, op: str) -> NoReturn:
        raise RuntimeError(
            f"{op} expected sparse coordinate tensor layout but got Strided "
            f"(call .to_sparse() first)"
        )

    def indices(self) -> "Tensor":
        """Sparse tensors only."""
        self._sparse_only("indices")

    def values(self) -> "Tensor":
        """Sparse tensors only."""
        self._sparse_only("values")

    _indices, _values = indices, values

    def _nnz(self) -> int:
        """Sparse tensors only."""
        self._sparse_only("_nnz")

    def coalesce(self) -> "Tensor":
        """Sparse tensors only."""
        self._sparse_only("coalesce")

    def is_coalesced(self) -> bool:
        """Sparse tensors only."""
        self._sparse_only("is_coalesced")

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one."""
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is complex (complex64 or complex128)."""
        return self._dtype.is_complex

    @property
    def real(self) -> "Tensor":
        """The real part, as a view (the tensor itself when it is real)."""
        from ..ops.declare import REGISTRY

        return REGISTRY["real"].op.entry(self)

    @property
    def imag(self) -> "Tensor":
        """The imaginary part of a complex tensor, as a view (real tensors raise)."""
        from ..ops.declare import REGISTRY

        return REGISTRY["imag"].op.entry(self)

    def get_device(self) -> int:
        """The device index: -1 on the CPU, else the index (0 when unset)."""
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def _base_tensor(self):
        return self._base

    def _is_view(self) -> bool:
        return self._base is not None

    # ---- Python protocol -------------------------------------------------------------------
    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        n = self.numel()
        if n != 1:  # PyTorch's messages
            raise RuntimeError(
                "Boolean value of Tensor with no values is ambiguous"
                if n == 0
                else "Boolean value of Tensor with more than one value is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def _scalar(self, what: str):
        if self.numel() != 1:
            raise ValueError(
                f"only one element tensors can be converted to Python scalars "
                f"(asked {what}() of a tensor of shape {list(self._shape)})"
            )
        return self.item()

    def __repr__(self, *, tensor_contents=None) -> str:
        from .printing import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # as PyTorch: a 0-d tensor formats as its Python number, anything else only with an
        # empty spec (as its repr)
        if not self._shape and self._device.type != "meta" and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "coretorch tensors are not pickled; use coretorch.save (safetensors), "
            "which never executes code when loading"
        )

    # ---- autograd (the machinery lives in coretorch.autograd) ------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether autograd tracks this tensor: a leaf that requires grad, or an op's output
        computed from one. Settable on leaves."""
        return _tracks_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        _set_requires_grad(self, flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set whether autograd records operations on this (leaf) tensor; returns self."""
        _set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (gradients accumulate into their `.grad`)."""
        m = self._autograd
        return m is None or m.grad_fn is None

    @property
    def grad_fn(self):
        """The backward node of the op that produced this tensor (None for leaves)."""
        m = self._autograd
        return None if m is None else m.grad_fn

    @property
    def grad(self) -> "Tensor | None":
        """The gradient accumulated by `backward` (leaves, and tensors that `retain_grad`)."""
        m = self._autograd
        return None if m is None else m.grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            _check_grad(self, value)
        _autograd_meta(self).grad = value

    @property
    def retains_grad(self) -> bool:
        """Whether this non-leaf keeps its gradient in `.grad` (see `retain_grad`)."""
        m = self._autograd
        return m is not None and m.retains_grad

    @property
    def data(self) -> "Tensor":
        """The same data without autograd history; assigning replaces this tensor's data while it
        keeps its identity and autograd state (``param.data = new``)."""
        return _late.hooks.get_data(self)

    @data.setter
    def data(self, value: "Tensor") -> None:
        _late.hooks.set_data(self, value)

    def backward(
        self,
        gradient: "Tensor | None" = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Compute the gradient of this tensor w.r.t. the graph leaves and accumulate it in their
        ``.grad`` (mirrors ``torch.Tensor.backward``)."""
        _late.engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed; a
        returned tensor replaces the gradient. Returns a handle whose ``remove()`` unregisters
        it."""
        return _late.hooks.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``."""
        return _late.hooks.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self) -> None:
        """Make this non-leaf tensor keep its gradient in ``.grad`` after backward."""
        _late.hooks.retain_grad(self)

    def detach_(self) -> "Tensor":
        """Cut this tensor from the graph in place: it becomes a leaf that doesn't require
        grad."""
        return _late.hooks.detach_(self)

    # ---- DLPack -----------------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export this cpu tensor as a DLPack capsule sharing its memory."""
        return _late.dlpack.to_dlpack_capsule(
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple:
        """(device type, device index) in DLPack terms: (1, 0) for cpu."""
        return _late.dlpack.dlpack_device(self)

    # ---- indexing -------------------------------------------------------------------------
    def __getitem__(self, idx):
        """Basic indexing (ints, slices with steps, None, ...) gives views; tensors, sequences of
        ints and bool masks are advanced indexing (a copy), as in PyTorch."""
        return _late.methods.getitem(self, idx)

    def __setitem__(self, idx, value) -> None:
        """``t[idx] = value``: a copy into the indexed view, or `index_put_` for advanced
        indices."""
        _late.methods.setitem(self, idx, value)

    # ---- conversions ----------------------------------------------------------------------
    def to(self, *args, **kwargs) -> "Tensor":
        """Convert dtype and/or device: ``t.to("meta")``, ``t.to(coretorch.float64)``,
        ``t.to(other)``, ``t.to(device, dtype, copy=True)``. Returns self when nothing changes
        (unless ``copy=True``)."""
        return _late.methods.to(self, *args, **kwargs)

    def cpu(self, memory_format=None) -> "Tensor":
        """This tensor on the cpu (self if it is there already)."""
        return _late.methods.to(self, "cpu")

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        """This tensor on a cuda device (the current one, or `device`: an index or a name)."""
        return _late.methods.to(self, _late.methods.cuda_device(device))

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """The type name (``'torch.FloatTensor'``, as PyTorch), or this tensor converted to
        `dtype` (a dtype or a type name such as ``'torch.DoubleTensor'``)."""
        return _late.legacy.tensor_type(self, dtype, non_blocking, **kwargs)

    def type_as(self, other: "Tensor") -> "Tensor":
        """This tensor with `other`'s dtype and device (itself when they already match)."""
        return self.to(dtype=other._dtype, device=other._device)

    def where(self, condition: "Tensor", other) -> "Tensor":
        """``coretorch.where(condition, self, other)``: this tensor where `condition` holds."""
        return _late.api.where(condition, self, other)

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (every dtype but bool and uint8)."""
        return self._dtype.is_signed

    def is_same_size(self, other: "Tensor") -> bool:
        """Whether `other` has this tensor's shape."""
        return self._shape == other._shape

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (RuntimeError for any other number of elements,
        as ``bool(t)``)."""
        return self.__bool__()

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> "Tensor":
        """Fill the main diagonal with `fill_value`, in place (2-D, or n-D with equal sizes).
        With `wrap`, a tall matrix's diagonal starts again below each square block (N + 1 rows
        further), as numpy's ``fill_diagonal(wrap=True)``.

        Raises:
            RuntimeError: fewer than 2 dims, or an n-D tensor whose sizes differ.
        """
        shape = self._shape
        if len(shape) < 2:
            raise RuntimeError(f"fill_diagonal_(): dimensions must larger than 1, got {len(shape)}")
        if len(shape) > 2 and len(set(shape)) != 1:
            raise RuntimeError(
                "fill_diagonal_(): all dimensions of input must be of equal "
                f"length, got {list(shape)}"
            )
        n = min(shape)
        step = sum(self._stride)
        if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:
            # the next diagonal starts one row below the end of the previous square block
            blocks = [
                (b * (shape[1] + 1), min(shape[1], shape[0] - b * (shape[1] + 1)))
                for b in range(0, -(-shape[0] // (shape[1] + 1)))
            ]
            for row, length in blocks:
                self[row : row + length].as_strided((length,), (step,)).fill_(fill_value)
            return self
        self.as_strided((n,), (step,)).fill_(fill_value)
        return self

    def new_empty_strided(
        self, size, stride, *, dtype=None, device=None, requires_grad: bool = False
    ) -> "Tensor":
        """An uninitialized tensor of `size` and `stride`, with this tensor's dtype and device
        by default."""
        t = _late.api.empty_strided(
            size, stride, dtype=dtype or self._dtype, device=device or self._device
        )
        return t.requires_grad_() if requires_grad else t

    def new(self, *args, **kwargs) -> "Tensor":
        """PyTorch's legacy ``t.new(2, 3)`` / ``t.new(data)``: a tensor of this dtype and
        device."""
        return _late.legacy.tensor_new(self, *args, **kwargs)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """An uninitialized tensor of `size`, with this tensor's dtype and device by default."""
        return _late.methods.new_factory(self, "empty", size, dtype, device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """Zeros of `size`, with this tensor's dtype and device by default."""
        return _late.methods.new_factory(self, "zeros", size, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """Ones of `size`, with this tensor's dtype and device by default."""
        return _late.methods.new_factory(self, "ones", size, dtype, device, requires_grad)

    def new_full(
        self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False
    ) -> "Tensor":
        """`fill_value` everywhere, with this tensor's dtype and device by default."""
        return _late.methods.new_factory(
            self, "full", (size, fill_value), dtype, device, requires_grad
        )

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """A tensor of `data`, with this tensor's dtype and device by default."""
        from ..ops.factories_public import tensor

        return tensor(
            data,
            dtype=dtype or self._dtype,
            device=device or self._device,
            requires_grad=requires_grad,
        )

    def item(self):
        """The value of a one-element tensor as a Python number."""
        return _late.methods.item(self)

    def tolist(self):
        """The values as (nested) Python lists."""
        return _late.methods.tolist(self)

    def numpy(self, *, force: bool = False):
        """A numpy array sharing memory with this cpu tensor (``force=True`` copies from any
        device)."""
        return _late.methods.numpy(self, force=force)

    def __array__(self, dtype=None, copy=None):
        return _late.methods.array(self, dtype, copy)

    @property
    def T(self) -> "Tensor":
        """The dimensions reversed (a view)."""
        return self.permute(tuple(range(len(self._shape) - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        """The last two dimensions swapped (a view): the batched matrix transpose."""
        return self.transpose(-2, -1)

    @property
    def mH(self) -> "Tensor":
        """The conjugate transpose of the last two dimensions (``mT`` for a real tensor)."""
        return self.transpose(-2, -1).conj()

    @property
    def H(self) -> "Tensor":
        """The conjugate transpose of a matrix (``T`` for a real one)."""
        if len(self._shape) != 2:
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got "
                f"{len(self._shape)}-D tensor."
            )
        return self.t().conj()

    # ---- sharing between processes (coretorch.multiprocessing) ------------------------------
    def share_memory_(self) -> "Tensor":
        """Move the underlying storage to shared memory (in place: views see it too) and return
        self. Nothing happens when it is already there. Only cpu tensors can be shared."""
        _late.sharing.share_tensor_memory_(self)
        return self

    def is_shared(self) -> bool:
        """Whether the tensor's storage is in shared memory."""
        return _late.sharing.is_shared(self)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) "
                "support the deepcopy protocol at the moment"
            )
        new = self.detach().clone()
        if self.requires_grad:
            new.requires_grad_(True)
        memo[id(self)] = new
        return new

    # t.float() ... t.char(): conversions to one dtype (last in the class body, so that `int`,
    # `float` and `bool` in the annotations above are the builtins)
    float = cast_method("float", _dt.float32)
    double = cast_method("double", _dt.float64)
    half = cast_method("half", _dt.float16)
    bfloat16 = cast_method("bfloat16", _dt.bfloat16)
    int = cast_method("int", _dt.int32)
    long = cast_method("long", _dt.int64)
    short = cast_method("short", _dt.int16)
    bool = cast_method("bool", _dt.bool)
    byte = cast_method("byte", _dt.uint8)
    char = cast_method("char", _dt.int8)
    cfloat = cast_method("cfloat", _dt.complex64)
    cdouble = cast_method("cdouble", _dt.complex128)


def _autograd_meta(t: TensorImpl) -> AutogradMeta:
    m = t._autograd
    if m is None:
        m = t._autograd = AutogradMeta()
    return m


def _set_requires_grad(t: TensorImpl, flag: bool) -> None:
    from ..dispatch.keys import AUTOGRAD_BIT

    m = t._autograd
    if m is not None and m.grad_fn is not None:
        if not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you "
                "want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        return
    if flag and not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError(
            f"only Tensors of floating point and complex dtype can require gradients "
            f"(got {t._dtype.name})"
        )
    _autograd_meta(t).requires_grad = bool(flag)
    t._keys = (t._keys | AUTOGRAD_BIT) if flag else (t._keys & ~AUTOGRAD_BIT)


def _check_grad(t: TensorImpl, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"assigned grad expected to be a Tensor or None but got grad of type "
            f"{type(value).__name__}"
        )
    if value._shape != t._shape:
        raise RuntimeError(
            f"assigned grad has data of a different size: expected "
            f"{list(t._shape)}, got {list(value._shape)}"
        )
    if value._device != t._device:
        raise RuntimeError(
            f"assigned grad has data located on a different device: expected "
            f"{t._device}, got {value._device}"
        )
