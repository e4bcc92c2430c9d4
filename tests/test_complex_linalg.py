"""linalg.eig / linalg.eigvals: A V = V diag(L), unit eigenvectors whose largest entry is real
(LAPACK's normalization), and the same eigenpairs as PyTorch up to their order and each
eigenvector's phase."""
from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct


def _matrices():
    rng = np.random.default_rng(0)
    yield rng.standard_normal((4, 4))
    yield rng.standard_normal((2, 3, 3)).astype(np.float32)
    yield rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    yield np.array([[0.0, -1.0], [1.0, 0.0]])  # eigenvalues +-i


@pytest.mark.parametrize("a", list(_matrices()), ids=lambda a: f"{a.dtype}-{a.shape}")
def test_eig_decomposes(a):
    A = ct.tensor(a)
    L, V = ct.linalg.eig(A)
    assert L.dtype is V.dtype and L.dtype.is_complex
    assert L.dtype.to_real().itemsize == np.dtype(a.dtype).itemsize // (2 if a.dtype.kind == "c"
                                                                        else 1)
    v, lam = V.numpy(), L.numpy()
    tol = 1e-4 if lam.dtype == np.complex64 else 1e-10
    np.testing.assert_allclose(a @ v, v * lam[..., None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)
    top = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    np.testing.assert_allclose(top.imag, 0, atol=tol)
    np.testing.assert_allclose(ct.linalg.eigvals(A).numpy(), lam)


def _canonical(w, v):
    """Eigenpairs sorted by eigenvalue (real part, then imaginary), each eigenvector's phase
    fixed: comparable between libraries whatever their order and phase."""
    order = np.lexsort((np.round(w.imag, 6), np.round(w.real, 6)), axis=-1)
    w = np.take_along_axis(w, order, -1)
    v = np.take_along_axis(v, order[..., None, :], -1)
    top = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    return w, v * np.conj(top / np.abs(top))


@pytest.mark.parametrize("a", list(_matrices()), ids=lambda a: f"{a.dtype}-{a.shape}")
def test_eig_matches_pytorch_up_to_order_and_phase(a):
    torch = pytest.importorskip("torch")
    L, V = ct.linalg.eig(ct.tensor(a))
    tL, tV = torch.linalg.eig(torch.tensor(a))
    w, v = _canonical(L.numpy(), V.numpy())
    tw, tv = _canonical(tL.numpy(), tV.numpy())
    tol = 1e-4 if w.dtype == np.complex64 else 1e-9
    np.testing.assert_allclose(w, tw, atol=tol)
    np.testing.assert_allclose(v, tv, atol=tol)
    np.testing.assert_allclose(np.sort_complex(ct.linalg.eigvals(ct.tensor(a)).numpy().ravel()),
                               np.sort_complex(torch.linalg.eigvals(torch.tensor(a)).numpy()
                                               .ravel()), atol=tol)


def test_eig_backward_is_refused_by_name():
    A = ct.randn(3, 3, dtype=ct.float64, requires_grad=True)
    L, _ = ct.linalg.eig(A)
    with pytest.raises(NotImplementedError, match="linalg.eig: the derivative"):
        ct.view_as_real(L).sum().backward()


def test_eig_refuses():
    with pytest.raises(RuntimeError, match="square"):
        ct.linalg.eig(ct.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        ct.linalg.eigvals(ct.ones(2, 2, dtype=ct.int64))
