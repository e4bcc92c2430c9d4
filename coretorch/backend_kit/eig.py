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
    k = kit_of(out[0])
    a = k.arr(A)
    if a.size:
        eig = getattr(k.xp.linalg, "eig", None)
        pair = (
            eig(a) if eig is not None else [k.from_host(r) for r in np.linalg.eig(k.xp.asnumpy(a))]
        )
        for o, r in zip(out, pair):
            k.write(o, r)


KERNELS = {"linalg_eig": linalg_eig}
