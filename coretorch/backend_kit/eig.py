"""The general eigendecomposition kernel (``linalg_eig``): numpy's LAPACK geev. Array modules
without a general eig (CuPy before 14) run it on the host and copy the results back."""
from __future__ import annotations

import numpy as np

from .array_kit import kit_of

__all__ = ["KERNELS"]


def linalg_eig(out, A):
    """out = (eigenvalues, eigenvectors) of the square matrix (batch) A, complex, as LAPACK's
    geev gives them (the eigenvectors of unit norm, each with its largest entry real), which is
    what PyTorch returns too"""
    L, V = out
    k = kit_of(L)
    a = k.arr(A)
    if a.size == 0:
        return
    xp = k.xp
    if hasattr(xp.linalg, "eig"):
        w, v = xp.linalg.eig(a)
    else:
        w, v = (k.from_host(r) for r in np.linalg.eig(xp.asnumpy(a)))
    k.write(L, w)
    k.write(V, v)


KERNELS = {"linalg_eig": linalg_eig}
