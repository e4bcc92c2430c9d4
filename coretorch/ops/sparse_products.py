"""`_sparse_coo_mm`: a sparse COO matrix, given as its indices and values, times a dense
matrix (what `coretorch.sparse.mm` runs). A composite for every backend (values[:, None] *
dense[cols] added into the result's rows) with its own derivative; the cpu backend runs it on
scipy.sparse (csr @ dense)."""

from __future__ import annotations

from .. import dtypes as dt
from .declare import declare, op_named
from .meta_rules import common_device

__all__ = ["sparse_coo_mm_backward"]


def _meta(indices, values, dense, rows):
    op = "_sparse_coo_mm"
    if indices._dtype is not dt.int64 or len(indices._shape) != 2 or indices._shape[0] != 2:
        raise RuntimeError(
            f"{op}(): expected int64 indices of shape (2, nnz), got "
            f"{indices._dtype.name} of shape {list(indices._shape)}"
        )
    if len(values._shape) != 1 or values._shape[0] != indices._shape[1]:
        raise RuntimeError(
            f"{op}(): expected values of shape ({indices._shape[1]},) (one per "
            f"index), got {list(values._shape)}"
        )
    if len(dense._shape) != 2:
        raise RuntimeError(f"{op}(): expected a 2-D dense matrix, got {len(dense._shape)}-D")
    if values._dtype is not dense._dtype:
        raise RuntimeError(
            f"{op}(): expected values and dense to have the same dtype, but got: "
            f"{values._dtype.name} != {dense._dtype.name}"
        )
    if rows < 0:
        raise RuntimeError(f"{op}(): rows must be non-negative, got {rows}")
    return ((rows, dense._shape[1]), dense._dtype, common_device(op, indices, values, dense))


def _impl(indices, values, dense, rows):
    # each stored a[r, c] adds a[r, c] * dense[c] to row r of the result
    contrib = values.unsqueeze(1) * dense.index_select(0, indices[1])
    out = op_named("zeros")((rows, dense._shape[1]), dtype=dense._dtype, device=dense._device)
    return out.index_add(0, indices[0], contrib)


def sparse_coo_mm_backward(ctx, grad):
    """d values[i] = grad[r_i] . dense[c_i]; d dense = A^T @ grad (the same op, transposed)."""
    need = ctx.needs_input_grad
    idx, dense = ctx.indices, ctx.dense
    d_values = (
        (grad.index_select(0, idx[0]) * dense.index_select(0, idx[1])).sum(1) if need[1] else None
    )
    d_dense = (
        op_named("_sparse_coo_mm")(idx.flip(0), ctx.values, grad, dense._shape[0])
        if need[2]
        else None
    )
    return None, d_values, d_dense, None


def _flops(result, indices, values, dense, rows) -> int:
    """2 * nnz * columns."""
    return 2 * indices._shape[1] * dense._shape[1]


def _declare_all() -> None:
    declare(
        "_sparse_coo_mm(Tensor indices, Tensor values, Tensor dense, int rows) -> Tensor",
        _meta,
        impl=_impl,
        derivative=sparse_coo_mm_backward,
        saves=("indices", "values", "dense"),
        flops=_flops,
        family="linalg",
        method=False,
        out=False,
        doc="The (rows, n) product of the sparse COO matrix (indices, values) "
        "with the dense (k, n) matrix `dense`.",
    )


_declare_all()
