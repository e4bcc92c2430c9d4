"""Sparse COO tensors (``torch.sparse``): `coretorch.sparse_coo_tensor`, `Tensor.to_sparse`,
`mm`, `sum`, `softmax`. A sparse tensor is a `SparseTensor` holding dense indices and values;
its operations are composites of dense ops, so they run on every backend and autograd
reaches the values and the dense operands."""

from __future__ import annotations

from ..tensor.tensor import Tensor
from . import functional as _F
from .kernels import register_sparse_kernels
from .tensor import SparseTensor

__all__ = ["SparseTensor", "addmm", "mm", "softmax", "spmm", "sum"]

register_sparse_kernels()


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product with a sparse COO matrix (either side) and a dense one: dense result;
    the gradient flows to the dense matrix and to the sparse values."""
    return _F.mm(mat1, mat2)


spmm = mm


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse `mat1`."""
    return mat * beta + _F.mm(mat1, mat2) * alpha


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # torch.sparse.sum's name
    """Sum of a sparse tensor over `dim` (all dims by default): dense when every sparse dim is
    reduced, sparse otherwise."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError(
            "sparse.sum(): expected a sparse_coo tensor; use Tensor.sum for dense ones"
        )
    return _F.sum(input, dim, dtype)


def softmax(input: SparseTensor, dim: int, dtype=None) -> Tensor:
    """Softmax along sparse dim `dim` over the specified elements only (unspecified ones are
    treated as -inf): a sparse tensor on the same indices."""
    return _F.softmax(input, dim, dtype)


def _legacy_constructor(name: str, dtype):
    """``coretorch.sparse.FloatTensor(indices, values[, size])`` (values keep their dtype, as in
    PyTorch) or ``FloatTensor(*size)`` (an empty sparse tensor): the legacy spellings older
    graph-network code uses."""
    from .. import dtypes as dt

    def construct(*args, device=None):
        if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
            return _F.sparse_coo_tensor(*args, device=device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            zeros = _F._op("zeros")
            return _F.sparse_coo_tensor(
                zeros((len(args), 0), dtype=dt.int64, device=device),
                zeros((0,), dtype=dtype, device=device),
                args,
            )
        raise TypeError(
            f"sparse.{name}(): expected (indices, values[, size]) tensors or sizes "
            f"(ints), got ({', '.join(type(a).__name__ for a in args)})"
        )

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (_legacy_constructor.__doc__ or "").replace("FloatTensor", name)
    return construct


def _legacy_constructors() -> dict:
    from .. import dtypes as dt

    kinds = {
        "FloatTensor": dt.float32,
        "DoubleTensor": dt.float64,
        "HalfTensor": dt.float16,
        "LongTensor": dt.int64,
        "IntTensor": dt.int32,
        "ShortTensor": dt.int16,
        "CharTensor": dt.int8,
        "ByteTensor": dt.uint8,
        "BoolTensor": dt.bool,
    }
    return {name: _legacy_constructor(name, d) for name, d in kinds.items()}


globals().update(_legacy_constructors())
