"""The sparse COO matrix product on scipy.sparse: the (indices, values) pairs become a csr
matrix (duplicates summed, as COO means) multiplied with the dense matrix in compiled code."""

from __future__ import annotations

import numpy as np

from ..numpy_view import as_numpy
from ..registry import kernel
from ._common import write

_HALF = ("float16", "bfloat16")


@kernel("_sparse_coo_mm")
def sparse_coo_mm(out, indices, values, dense, rows):
    """out = csr(values at indices, (rows, k)) @ dense"""
    import scipy.sparse  # on first use: it adds ~70 ms to `import coretorch`

    idx, v, d = as_numpy(indices), as_numpy(values), as_numpy(dense)
    if out._dtype.name in _HALF:  # scipy.sparse has no 16-bit floats: float32, rounded once
        v, d = v.astype(np.float32), d.astype(np.float32)
    a = scipy.sparse.csr_matrix((v, (idx[0], idx[1])), shape=(rows, dense._shape[0]))
    write(out, np.asarray(a @ d).astype(out._dtype.numpy, copy=False))
