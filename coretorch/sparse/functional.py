"""Sparse COO operations, each a composite of dense ops on the indices and values: every
backend runs them, and autograd differentiates them (to the values and to dense operands)."""

from __future__ import annotations

from .. import dtypes as dt
from ..layout import sparse_coo as sparse_coo_layout
from ..ops.factories_public import as_tensor
from ..tensor.tensor import Tensor
from .tensor import SparseTensor, make_sparse

__all__ = [
    "coalesce",
    "mm",
    "softmax",
    "sparse_coo_layout",
    "sparse_coo_tensor",
    "sum",
    "to_dense",
    "to_sparse",
    "transpose2d",
]


def _op(name: str):
    from ..ops.declare import REGISTRY

    return REGISTRY[name].op.entry


def _has_data(t: Tensor) -> bool:
    from ..device import device_types

    entry = device_types().get(t._device.type)
    return entry is not None and entry.has_data


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor with `values` at `indices` (int64, sparse_dim x nnz); `size`
    defaults to the smallest size that holds the indices. Shares memory with `values` when
    dtype and device do not change; a `values` that requires grad receives the gradient."""
    values = as_tensor(values, dtype=dtype, device=device)
    device = values._device if device is None else device
    indices = as_tensor(
        indices, dtype=None if isinstance(indices, Tensor) else dt.int64, device=device
    )
    if indices._dtype is not dt.int64:
        raise RuntimeError(
            f"sparse_coo_tensor(): indices must be an int64 tensor, got {indices._dtype.name}"
        )
    if indices.ndim != 2:
        raise RuntimeError(
            f"sparse_coo_tensor(): indices must be sparse_dim x nnz, but got: "
            f"{list(indices._shape)}"
        )
    if values.ndim == 0:
        raise RuntimeError(
            "sparse_coo_tensor(): values must have at least one dim (nnz), got a 0-d tensor"
        )
    sd, nnz = indices._shape
    if values._shape[0] != nnz:
        raise RuntimeError(
            f"sparse_coo_tensor(): indices and values must have same nnz, but "
            f"got nnz from indices: {nnz}, nnz from values: {values._shape[0]}"
        )
    dense_shape = tuple(values._shape[1:])
    data = _has_data(indices)
    if size is None:
        if not data:
            raise RuntimeError(
                f"sparse_coo_tensor(): size= is needed on '{indices._device}' "
                f"(no data to infer it from)"
            )
        size = tuple((int(indices.amax(1)[d]) + 1 if nnz else 0) for d in range(sd)) + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sd + len(dense_shape):
        raise RuntimeError(
            f"sparse_coo_tensor(): number of dimensions must be sparse_dim ({sd}) "
            f"+ dense_dim ({len(dense_shape)}), but got {len(size)}"
        )
    if size[sd:] != dense_shape:
        raise RuntimeError(
            f"sparse_coo_tensor(): values has incorrect size, expected "
            f"{[nnz, *size[sd:]]}, got {list(values._shape)}"
        )
    if data and nnz and check_invariants is not False:
        _check_bounds(indices, size[:sd])
    values = values.view_as(values) if values.requires_grad else values.detach()
    if requires_grad:
        values.requires_grad_(True)
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    return make_sparse(indices, values, size, coalesced)


def _check_bounds(indices: Tensor, sizes: tuple) -> None:
    lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
    for d, (a, b, n) in enumerate(zip(lo, hi, sizes)):
        if a < 0:
            raise RuntimeError(f"sparse_coo_tensor(): found negative index {a} for dim {d}")
        if b >= n:
            raise RuntimeError(
                f"sparse_coo_tensor(): size is inconsistent with indices: for "
                f"dim {d}, size is {n} but found index {b}"
            )


def _linear_index(indices: Tensor, sizes: tuple) -> Tensor:
    """Row-major flat position of each index column within the sparse dims of `sizes`."""
    lin = _op("zeros")((indices._shape[1],), dtype=dt.int64, device=indices._device)
    for d, n in enumerate(sizes):
        lin = lin * n + indices[d]
    return lin


def _unravel(lin: Tensor, sizes: tuple) -> Tensor:
    rows = []
    for n in reversed(sizes):
        rows.append(lin % n)
        lin = _op("div")(lin, n, rounding_mode="floor")
    rows.reverse()
    if not rows:
        return _op("zeros")((0, lin._shape[0]), dtype=dt.int64, device=lin._device)
    return _op("stack")(rows)


def to_dense(s: SparseTensor) -> Tensor:
    """The strided tensor: duplicate indices add up; differentiable w.r.t. the values."""
    sizes = s._shape[: s.sparse_dim()]
    values = s._values_t
    flat = _op("zeros")(
        (_numel(sizes), *values._shape[1:]), dtype=values._dtype, device=values._device
    )
    return flat.index_add(0, _linear_index(s._indices_t, sizes), values).reshape(s._shape)


def to_sparse(t: Tensor, sparse_dim: int | None = None) -> SparseTensor:
    """Dense -> COO with the non-zero elements (rows of `sparse_dim` dims with any non-zero,
    when values keep dense dims); differentiable w.r.t. `t`."""
    nd = t.ndim
    sd = nd if sparse_dim is None else sparse_dim
    if not 0 <= sd <= nd:
        raise RuntimeError(f"to_sparse(): sparse_dim must be in [0, {nd}], got {sd}")
    if sd == 0:
        idx = _op("zeros")((0, 1), dtype=dt.int64, device=t._device)
        return make_sparse(idx, t.unsqueeze(0), t._shape, True)
    mask = t != 0
    if sd < nd:
        mask = mask.reshape(*t._shape[:sd], -1).any(-1)
    idx = mask.nonzero().t().contiguous()
    values = t[tuple(idx[d] for d in range(sd))]
    return make_sparse(idx, values, t._shape, True)


def coalesce(s: SparseTensor, mean: bool = False) -> SparseTensor:
    """Sorted unique indices; the values of duplicates summed (averaged with `mean`);
    differentiable."""
    if s._coalesced:
        return s
    sizes = s._shape[: s.sparse_dim()]
    values = s._values_t
    uniq, inverse = _op("unique")(
        _linear_index(s._indices_t, sizes), sorted=True, return_inverse=True
    )
    summed = _op("zeros")(
        (uniq._shape[0], *values._shape[1:]), dtype=values._dtype, device=values._device
    ).index_add(0, inverse, values)
    if mean:
        counts = _op("bincount")(inverse, minlength=uniq._shape[0]).to(values._dtype)
        summed = summed / counts.reshape(-1, *([1] * (values.ndim - 1)))
    return make_sparse(_unravel(uniq, sizes), summed, s._shape, True)


def transpose2d(s: SparseTensor) -> SparseTensor:
    """The transpose of a 2-D sparse matrix (its index rows swapped)."""
    _need_matrix("t", s)
    return make_sparse(s._indices_t.flip(0), s._values_t, s._shape[::-1], False)


def _need_matrix(op: str, s: SparseTensor) -> None:
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(
            f"{op}(): expected a 2-D sparse matrix (sparse_dim 2, dense_dim 0), "
            f"got sparse_dim {s.sparse_dim()} and dense_dim {s.dense_dim()}"
        )


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` with a sparse COO matrix on either side and a dense one on the other: a
    dense result, differentiable w.r.t. the dense matrix and the sparse values."""
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        raise RuntimeError(
            "mm(): sparse @ sparse is not supported; call .to_dense() on one operand"
        )
    if not isinstance(mat1, SparseTensor):
        assert isinstance(mat2, SparseTensor)  # this kernel runs when one operand is sparse
        return mm(transpose2d(mat2), mat1.t()).t()
    _need_matrix("mm", mat1)
    if not isinstance(mat2, Tensor) or mat2.ndim != 2:
        raise RuntimeError(
            f"mm(): expected a 2-D dense matrix as the second operand, got "
            f"{getattr(mat2, 'ndim', type(mat2).__name__)}-D"
        )
    (m, k), (k2, n) = mat1._shape, mat2._shape
    if k != k2:
        raise RuntimeError(
            f"mm(): mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})"
        )
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(
            f"mm(): expected mat1 and mat2 to have the same dtype, but got: "
            f"{mat1._dtype.name} != {mat2._dtype.name}"
        )
    return _op("_sparse_coo_mm")(mat1._indices_t, mat1._values_t, mat2, m)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` where one side is sparse: 2-D @ 2-D, or a sparse matrix times a vector."""
    if isinstance(a, SparseTensor) and isinstance(b, Tensor) and b.ndim == 1:
        return mm(a, b.unsqueeze(1)).squeeze(1)
    return mm(a, b)


def sum(input: SparseTensor, dim=None, dtype=None) -> Tensor:  # torch.sparse.sum's name
    """Sum over `dim` (all dims by default): a dense tensor when every sparse dim is reduced,
    else a sparse one over the remaining sparse dims."""
    values = input._values_t if dtype is None else input._values_t.to(dtype)
    if dim is None:
        return values.sum()
    nd, sd = input.ndim, input.sparse_dim()
    dims = [dim] if isinstance(dim, int) else list(dim)
    from ..tensor.impl import wrap_dim

    dims = sorted({wrap_dim("sparse.sum", d, nd) for d in dims})
    dense = [d - sd + 1 for d in dims if d >= sd]
    if dense:
        values = values.sum(dense)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return values.sum(0)
    size = tuple(input._shape[d] for d in keep) + tuple(
        input._shape[d] for d in range(sd, nd) if d not in dims
    )
    idx = input._indices_t.index_select(0, as_tensor(keep, dtype=dt.int64, device=input._device))
    return coalesce(make_sparse(idx, values, size, False))


def softmax(input: SparseTensor, dim: int, dtype=None) -> SparseTensor:
    """Softmax over the specified elements along sparse dim `dim` (unspecified ones count as
    -inf, as in PyTorch): a sparse result on the same indices."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("sparse.softmax(): expected a sparse_coo tensor")
    from ..tensor.impl import wrap_dim

    sd = input.sparse_dim()
    d = wrap_dim("sparse.softmax", dim, input.ndim)
    if d >= sd or input.dense_dim() != 0:
        raise RuntimeError(
            f"sparse.softmax(): dim must be a sparse dim of a tensor without "
            f"dense dims (sparse_dim {sd}, dense_dim {input.dense_dim()}), got "
            f"dim {dim}"
        )
    values = input._values_t if dtype is None else input._values_t.to(dtype)
    if input._nnz() == 0:
        return input._with_values(values)
    others = [i for i in range(sd) if i != d]
    idx = input._indices_t
    group = _linear_index(
        idx[others] if others else idx[:0], tuple(input._shape[i] for i in others)
    )
    uniq, inverse, counts = _op("unique")(
        group, sorted=True, return_inverse=True, return_counts=True
    )
    # the max of each group, for a stable exp: values ascending within groups in group order
    v = values.detach()
    by_value = v.argsort(stable=True)
    order = by_value[inverse[by_value].argsort(stable=True)]
    gmax = v[order][counts.cumsum(0) - 1]
    e = (values - gmax[inverse]).exp()
    total = _op("zeros")((uniq._shape[0],), dtype=values._dtype, device=values._device).index_add(
        0, inverse, e
    )
    return input._with_values(e / total[inverse])
