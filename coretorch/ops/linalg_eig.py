"""The eigendecomposition of general (non-symmetric) square matrices: ``linalg.eig`` (a
primitive: backends run LAPACK's geev through numpy) and ``linalg.eigvals`` (its eigenvalues).

Results are complex (complex64 for float32 / complex64 input, complex128 otherwise) and are
LAPACK's, as PyTorch's are: eigenvalues in geev's order, each eigenvector of unit norm with its
largest-magnitude entry real (an eigenvector is only defined up to such a phase). The derivative
is PyTorch's; a loss must not depend on the eigenvectors' phases.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from .declare import REGISTRY, declare
from .linalg_common import check_square

__all__: list[str] = []

_L: dict[str, Any] = dict(family="linalg", method=False, function=False)


def _check(name: str, A) -> None:
    d = A._dtype
    if not (d in (dt.float32, dt.float64) or d.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {d.name}"
        )
    check_square(name, A)


def _meta_eig(A):
    _check("linalg.eig", A)
    c = A._dtype.to_complex()
    return [(A._shape[:-1], c, A._device), (A._shape, c, A._device)]


def _op(name: str):
    return REGISTRY[name].op.entry


def _solve_complex(M, X):
    """M^-1 X for complex M and X, through the real system [[Mr, -Mi], [Mi, Mr]] (coretorch's
    linalg.solve takes real matrices)."""
    mr, mi, xr, xi = (_op("real")(M), _op("imag")(M), _op("real")(X), _op("imag")(X))
    cat = _op("cat")
    big = cat([cat([mr, mi.neg()], -1), cat([mi, mr], -1)], -2)
    y = _op("linalg_solve")(big, cat([xr, xi], -2))
    n = M._shape[-1]
    return _op("complex")(y.narrow(-2, 0, n), y.narrow(-2, n, n))


def _d_eig(ctx, gL, gV):
    """PyTorch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV)))
    / conj(L_j - L_i)) V^H, real part for a real A. The loss must not depend on the phase of
    the eigenvectors (which are defined only up to it)."""
    L, V = ctx.result
    Vh = V.mT.conj()
    if gV is None:
        inner = _op("diag_embed")(gL)
    else:
        VhgV = Vh @ gV
        VhgV = VhgV - Vh @ (V * _op("real")(VhgV.diagonal(0, -2, -1)).unsqueeze(-2))
        Lc = L.conj()
        E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
        eye = _op("eye")(L._shape[-1], dtype=dt.bool, device=L._device)
        inner = VhgV / _op("where")(eye, 1, E)
        if gL is not None:
            inner = _op("diagonal_scatter")(inner, gL, 0, -2, -1)
    gA = _solve_complex(Vh, inner @ Vh)
    return (gA if ctx.A._dtype.is_complex else _op("real")(gA),)


def _meta_eigvals(A):
    _check("linalg.eigvals", A)
    return (A._shape[:-1], A._dtype.to_complex(), A._device)


def _eigvals(A):
    """The eigenvalues of the square matrix (or batch) `A`, complex, in LAPACK's order."""
    return declare_eig.op.entry(A)[0]


declare_eig = declare(
    "linalg_eig(Tensor A) -> (Tensor eigenvalues, Tensor eigenvectors)",
    _meta_eig,
    derivative=_d_eig,
    saves=(),
    save_result=True,
    **_L,
    doc="The eigenvalues and eigenvectors of the square matrix (or batch) `A`: "
    "complex, A @ V = V @ diag(L); each eigenvector of unit norm with its "
    "largest entry real (LAPACK's normalization).",
)
declare("linalg_eigvals(Tensor A) -> Tensor", _meta_eigvals, impl=_eigvals, **_L)
