"""The eigendecomposition of general (non-symmetric) square matrices: ``linalg.eig`` (a
primitive: backends run LAPACK's geev through numpy) and ``linalg.eigvals`` (its eigenvalues).

Results are complex (complex64 for float32 / complex64 input, complex128 otherwise) and are
LAPACK's, as PyTorch's are: eigenvalues in geev's order, each eigenvector of unit norm with its
largest-magnitude entry real (an eigenvector is only defined up to such a phase). Gradients are
not implemented (the backward raises).
"""
from __future__ import annotations

from .. import dtypes as dt
from .declare import declare
from .linalg_common import check_square

__all__: list[str] = []

_L = dict(family="linalg", method=False, function=False)


def _check(name: str, A) -> None:
    d = A._dtype
    if not (d in (dt.float32, dt.float64) or d.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{d.name}")
    check_square(name, A)


def _meta_eig(A):
    _check("linalg.eig", A)
    c = A._dtype.to_complex()
    return [(A._shape[:-1], c, A._device), (A._shape, c, A._device)]


def _d_eig(ctx, *grads):
    raise NotImplementedError("linalg.eig: the derivative of a general eigendecomposition is not "
                              "implemented in coretorch; for a symmetric matrix use "
                              "linalg.eigh, whose backward is")


def _meta_eigvals(A):
    _check("linalg.eigvals", A)
    return (A._shape[:-1], A._dtype.to_complex(), A._device)


def _eigvals(A):
    """The eigenvalues of the square matrix (or batch) `A`, complex, in LAPACK's order."""
    return declare_eig.op.entry(A)[0]


declare_eig = declare("linalg_eig(Tensor A) -> (Tensor eigenvalues, Tensor eigenvectors)",
                      _meta_eig, derivative=_d_eig, saves=(), **_L,
                      doc="The eigenvalues and eigenvectors of the square matrix (or batch) `A`: "
                          "complex, A @ V = V @ diag(L); each eigenvector of unit norm with its "
                          "largest entry real (LAPACK's normalization).")
declare("linalg_eigvals(Tensor A) -> Tensor", _meta_eigvals, impl=_eigvals, **_L)
