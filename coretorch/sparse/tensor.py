"""`SparseTensor`: a sparse COO tensor, a `Tensor` whose layout is ``sparse_coo``.

It holds two dense tensors, ``indices`` (int64, sparse_dim x nnz) and ``values`` (nnz x the
dense dims), and its size. It has no storage of its own: shape, dtype and device answer from
those tensors, and its dispatch keys carry ``SparseCOO``, so an op called with it reaches the
sparse kernel of that op (`coretorch.sparse.kernels`) or a clear error. Autograd state lives
on ``values``: the sparse ops compute with dense ops on it, so gradients reach the values (and
whatever produced them); ``.grad`` of a sparse leaf is sparse, on the same indices.
"""

from __future__ import annotations

from ..dispatch.keys import BACKEND_MASK, SPARSE_COO_BIT
from ..layout import sparse_coo
from ..tensor.size import Size
from ..tensor.tensor import Tensor

__all__ = ["SparseTensor", "make_sparse", "unsupported"]


def unsupported(op: str):
    """The error for a dense-only operation called with a sparse COO tensor."""
    return RuntimeError(f"{op}(): sparse_coo tensors are not supported; call .to_dense() first")


def make_sparse(indices: Tensor, values: Tensor, size: tuple, coalesced: bool) -> SparseTensor:
    """A sparse tensor over `indices` and `values` (no checks: `sparse_coo_tensor` checks)."""
    t = object.__new__(SparseTensor)
    t._indices_t, t._values_t, t._coalesced = indices, values, coalesced
    t._storage = None  # type: ignore[assignment]  # a sparse tensor has no storage of its own
    t._shape, t._stride, t._offset = tuple(size), (), 0
    t._dtype, t._device = values._dtype, values._device
    t._keys = SPARSE_COO_BIT | (values._keys & BACKEND_MASK)
    t._vc, t._autograd, t._base, t._cache = [0], None, None, None
    return t


def _refuse(name: str):
    def method(self, *args, **kwargs):
        raise unsupported(name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Not defined for sparse tensors (as in PyTorch): ``{name}`` raises."
    return method


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout=coretorch.sparse_coo``); make one with
    `coretorch.sparse_coo_tensor` or `Tensor.to_sparse`."""

    __slots__ = ("_coalesced", "_indices_t", "_values_t")
    _coalesced: bool
    _indices_t: Tensor
    _values_t: Tensor

    layout = sparse_coo
    is_sparse = property(lambda self: True, doc="Always True for a sparse tensor.")

    # ---- the COO parts ---------------------------------------------------------------------
    def _indices(self) -> Tensor:
        """The int64 (sparse_dim, nnz) indices, as stored (uncoalesced ones too)."""
        return self._indices_t

    def _values(self) -> Tensor:
        """The (nnz, *dense dims) values, as stored (uncoalesced ones too)."""
        return self._values_t

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor (call `coalesce` first, as in PyTorch)."""
        self._need_coalesced("indices")
        return self._indices_t

    def values(self) -> Tensor:
        """The values of a coalesced tensor (call `coalesce` first, as in PyTorch)."""
        self._need_coalesced("values")
        return self._values_t

    def _need_coalesced(self, op: str) -> None:
        if not self._coalesced:
            raise RuntimeError(
                f"Cannot get {op} on an uncoalesced tensor, please call .coalesce() first"
            )

    def _nnz(self) -> int:
        """The number of specified elements (duplicates counted until coalesced)."""
        return self._values_t._shape[0]

    def sparse_dim(self) -> int:
        """How many leading dims the indices address."""
        return self._indices_t._shape[0]

    def dense_dim(self) -> int:
        """How many trailing dims each value holds."""
        return len(self._values_t._shape) - 1

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique."""
        return self._coalesced

    def coalesce(self) -> SparseTensor:
        """Sorted, unique indices; the values of duplicate indices summed."""
        from .functional import coalesce

        return coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad: bool | None = None) -> Tensor:
        """The dense (strided) tensor; differentiable with respect to the values."""
        from .functional import to_dense

        out = to_dense(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(
        self, sparse_dim: int | None = None, *, layout=None, blocksize=None, dense_dim=None
    ) -> SparseTensor:
        """Self (already sparse COO)."""
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(
                f"to_sparse(): conversion from sparse_coo to sparse_coo with "
                f"sparse_dim {sparse_dim} (it has {self.sparse_dim()}) is not "
                f"supported"
            )
        return self

    def _with_values(self, values: Tensor, indices: Tensor | None = None) -> SparseTensor:
        return make_sparse(
            self._indices_t if indices is None else indices, values, self._shape, self._coalesced
        )

    # ---- autograd (state of the values) ------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._values_t.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._values_t.requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        """Set whether autograd records operations on this (leaf) tensor; returns self."""
        self._values_t.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._values_t.is_leaf

    @property
    def grad_fn(self):
        return self._values_t.grad_fn

    @property  # type: ignore[override]  # read-only: the gradient lives on the values
    def grad(self) -> SparseTensor | None:
        """The sparse gradient of a sparse leaf with respect to the tensor it stands for, as
        PyTorch gives it: on its indices (coalesced when they repeat: one entry per position)."""
        g = self._values_t.grad
        if g is None:
            return None
        if self._coalesced:
            return self._with_values(g)
        from .functional import coalesce

        # every copy of a repeated index holds the gradient of that one position
        return coalesce(self._with_values(g), mean=True)

    @grad.setter
    def grad(self, value) -> None:
        if value is None:
            self._values_t.grad = None
            return
        if not isinstance(value, SparseTensor) or value._shape != self._shape:
            raise RuntimeError(
                f"assigned grad of a sparse tensor of size {list(self._shape)} "
                f"must be a sparse tensor of that size"
            )
        # kept as values on this tensor's indices: the assigned gradient read at each of them
        dense = value.detach().to_dense()
        self._values_t.grad = dense[tuple(self._indices_t[d] for d in range(self.sparse_dim()))]

    def detach(self) -> SparseTensor:
        """The same indices and values without autograd history."""
        return self._with_values(self._values_t.detach())

    def clone(self, *, memory_format=None) -> SparseTensor:
        """A copy of the indices and values (differentiable)."""
        return self._with_values(self._values_t.clone(), self._indices_t.clone())

    def to(self, *args, **kwargs) -> SparseTensor:
        """The indices and values moved to a device and/or the values cast to a dtype."""
        values = self._values_t.to(*args, **kwargs)
        if values is self._values_t:
            return self
        return self._with_values(values, self._indices_t.to(values._device))

    def cpu(self, memory_format=None) -> SparseTensor:
        """This sparse tensor on the cpu (self if it is there already)."""
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> SparseTensor:
        """This sparse tensor on a cuda device (the current one, or `device`)."""
        from ..ops.methods import cuda_device

        return self.to(cuda_device(device))

    # the ignore: mypy finds this signature, the same as Tensor's, incompatible (a dunder quirk)
    def __repr__(self, *, tensor_contents=None) -> str:  # type: ignore[override]
        from ..tensor.printing import sparse_coo_repr

        return sparse_coo_repr(self)

    @property
    def shape(self) -> Size:
        """The (dense) shape of the sparse tensor."""
        return Size(self._shape)

    # what a strided tensor has and a sparse one does not (as in PyTorch)
    stride = _refuse("stride")
    storage_offset = _refuse("storage_offset")
    untyped_storage = _refuse("untyped_storage")
    data_ptr = _refuse("data_ptr")
    is_contiguous = _refuse("is_contiguous")
    numpy = _refuse("numpy")
    __array__ = _refuse("__array__")
    item = _refuse("item")
    tolist = _refuse("tolist")
    __getitem__ = _refuse("__getitem__")
    __setitem__ = _refuse("__setitem__")
    share_memory_ = _refuse("share_memory_")
    __dlpack__ = _refuse("__dlpack__")
