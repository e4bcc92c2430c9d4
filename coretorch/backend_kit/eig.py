"""The general eigendecomposition kernel (``linalg_eig``): numpy's LAPACK geev. Array modules
without a general eig (CuPy before 14) run it on the host and copy the results back."""
from __future__ import annotations

import numpy as np

from .array_kit import kit_of
from .factorizations import column_signs

__all__ = ["KERNELS"]


def linalg_eig(out, A):
    """out = (eigenvalues, eigenvectors) of the square matrix (batch) A, complex; each
    eigenvector scaled to make its largest-magnitude entry real and positive"""
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
    v = v.astype(V._dtype.numpy, copy=False)
    # sign() of a complex entry is its phase e / |e|: dividing by it makes the entry |e|
    k.write(L, w)
    k.write(V, v * xp.conj(column_signs(xp, v)))


KERNELS = {"linalg_eig": linalg_eig}
