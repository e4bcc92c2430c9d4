"""OpInfo of the sparse COO matrix product (coretorch/ops/sparse_products.py); numpy
reference. Samples repeat indices (COO sums them) and include an empty matrix."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case


def _sparse_mm_samples(op, m, dtype):
    yield SampleInput(m.index((2, 6), 4), (m.make((6,)), m.make((4, 3)), 4), name="square-dups")
    yield SampleInput(m.index((2, 5), 3), (m.make((5,)), m.make((5, 2)), 3), name="wide-sparse")
    yield SampleInput(
        m.index((2, 4), 3),
        (m.make((4,)), m.make((3, 4), layout="transposed"), 6),
        name="noncontiguous-dense-more-rows",
    )
    yield SampleInput(m.index((2, 0), 3), (m.make((0,)), m.make((3, 2)), 3), name="no-values")


def _sparse_mm(indices, values, dense, rows):
    a = np.zeros((rows, dense.shape[0]), dtype=np.float64)
    np.add.at(a, (indices[0], indices[1]), values.astype(np.float64))
    return (a @ dense.astype(np.float64)).astype(dense.dtype)


def _torch_sparse_mm(indices, values, dense, rows):
    import torch  # the oracle, imported only when a test compares with it

    return torch.sparse.mm(torch.sparse_coo_tensor(indices, values, (rows, dense.shape[0])), dense)


OPS: list[OpInfo] = [
    OpInfo(
        "_sparse_coo_mm",
        dtypes=ALL,
        ref=_sparse_mm,
        torch_ref=_torch_sparse_mm,
        sample_inputs_func=_sparse_mm_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
]


def _ix(*shape, high=2):
    return lambda m: m.index(shape, high)


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


_ERRORS = {
    "_sparse_coo_mm": [
        error_case(
            "1-d-indices",
            _ix(4),
            (_t(4), _t(2, 3), 2),
            match=r"_sparse_coo_mm\(\): expected int64 indices of shape \(2, nnz\)",
        ),
        error_case(
            "values-count",
            _ix(2, 4),
            (_t(3), _t(2, 3), 2),
            match=r"expected values of shape \(4,\) \(one per index\), got \[3\]",
        ),
        error_case(
            "1-d-dense",
            _ix(2, 4),
            (_t(4), _t(3), 2),
            match=r"_sparse_coo_mm\(\): expected a 2-D dense matrix, got 1-D",
        ),
        error_case(
            "negative-rows",
            _ix(2, 4),
            (_t(4), _t(2, 3), -1),
            match=r"rows must be non-negative, got -1",
        ),
    ],
}
attach_error_cases(OPS, _ERRORS)
