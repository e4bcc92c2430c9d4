"""linalg.eig / linalg.eigvals: A V = V diag(L), unit eigenvectors whose largest entry is real
(LAPACK's normalization), and the same eigenpairs as PyTorch up to their order and each
eigenvector's phase."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck


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
    assert L.dtype.to_real().itemsize == np.dtype(a.dtype).itemsize // (
        2 if a.dtype.kind == "c" else 1
    )
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
    np.testing.assert_allclose(
        np.sort_complex(ct.linalg.eigvals(ct.tensor(a)).numpy().ravel()),
        np.sort_complex(torch.linalg.eigvals(torch.tensor(a)).numpy().ravel()),
        atol=tol,
    )


# losses that ignore the eigenvectors' phases (the only ones with a defined gradient)
_LOSSES = {
    "eigenvalues": lambda A: ct.view_as_real(ct.linalg.eig(A)[0]),
    "abs-eigenvectors": lambda A: ct.linalg.eig(A)[1].abs(),
    "eigvals": lambda A: ct.linalg.eigvals(A).abs(),
}


@pytest.mark.parametrize("name", sorted(_LOSSES))
@pytest.mark.parametrize("is_complex", [False, True])
def test_eig_gradcheck(name, is_complex):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4)) + (1j * rng.standard_normal((4, 4)) if is_complex else 0)
    assert gradcheck(_LOSSES[name], (ct.tensor(a, requires_grad=True),))


def test_eig_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal((2, 4, 4))

    def loss(lib, A):
        L, V = lib.linalg.eig(A)
        return V.abs().sum() + lib.view_as_real(L).pow(2).sum()

    A, tA = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (g,) = ct.autograd.grad(loss(ct, A), [A])
    (tg,) = torch.autograd.grad(loss(torch, tA), [tA])
    np.testing.assert_allclose(g.numpy(), tg.numpy(), atol=1e-9)


def test_eig_refuses():
    with pytest.raises(RuntimeError, match="square"):
        ct.linalg.eig(ct.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        ct.linalg.eigvals(ct.ones(2, 2, dtype=ct.int64))
