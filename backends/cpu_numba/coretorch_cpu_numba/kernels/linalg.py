"""Matrix-product kernels the cpu backend runs natively beyond the backend kit's: ``addmm``
(a composite: ``mm`` then ``add``) as one BLAS GEMM written straight into the output, with the
bias added there in place: no product temporary the size of the output and one dispatch
instead of two (``linear`` with a bias, every layer of an MLP, runs it)."""

from __future__ import annotations

import numpy as np

from coretorch.backend_kit.array_kit import opmath
from coretorch.ops.linalg import product_scalars

from ..registry import kernel
from ._common import arr, writable_target, write


@kernel("addmm")
def addmm(out, self, mat1, mat2, beta, alpha):
    """out = beta * self + alpha * (mat1 @ mat2), self broadcast (ignored where beta is 0)"""
    o = arr(out)
    cdt = opmath(o.dtype)
    s = arr(self)
    prod, copy = writable_target(out, cdt, o.shape)
    if not copy and np.may_share_memory(prod, s):  # addmm_: the product must not overwrite self
        prod, copy = np.empty(o.shape, cdt), True
    np.matmul(arr(mat1).astype(cdt, copy=False), arr(mat2).astype(cdt, copy=False), out=prod)
    beta, alpha = product_scalars(out.dtype, beta, alpha)
    if alpha != 1:
        np.multiply(prod, alpha, out=prod, casting="unsafe")
    if beta != 0:
        np.add(
            prod, s if beta == 1 else np.multiply(s, beta, dtype=cdt), out=prod, casting="unsafe"
        )
    if copy:
        write(out, prod)
