"""coretorch.linalg beyond the OpInfo database: gradients of the functions that read one
triangle of their input (checked on symmetrized / triangular inputs, as PyTorch's OpInfos do),
LinAlgError for singular and non-positive-definite matrices, LU without pivoting, the
determinant's gradient at a singular matrix, and the names of the namespace."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck
from coretorch.testing.opinfo import OP_DB  # noqa: F401  (loads the OpInfo modules in order)

F64 = ct.float64
RNG = np.random.default_rng(7)


def _t(a, grad=True):
    return ct.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _spd(n, batch=()):
    a = RNG.uniform(-1, 1, size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _sym(f):
    """f of the symmetric part: finite differences then see the whole matrix."""
    return lambda a, *rest: f((a + a.transpose(-2, -1)) * 0.5, *rest)


def _lower(f):
    return lambda a, *rest: f(a.tril(), *rest)


SYMMETRIC = {
    "eigh": lambda a: ct.linalg.eigh(a),
    "eigh-U": lambda a: ct.linalg.eigh(a, "U"),
    "eigvalsh": lambda a: ct.linalg.eigvalsh(a),
    "cholesky": lambda a: ct.linalg.cholesky(a),
    "cholesky-upper": lambda a: ct.linalg.cholesky(a, upper=True),
    "cholesky_ex": lambda a: ct.linalg.cholesky_ex(a).L,
    "pinv-hermitian": lambda a: ct.linalg.pinv(a, hermitian=True),
    "matrix_norm-2": lambda a: ct.linalg.matrix_norm(a, 2),
}


@pytest.mark.parametrize("name", sorted(SYMMETRIC))
def test_gradcheck_on_symmetric_input(name):
    f = _sym(SYMMETRIC[name])
    a = _t(_spd(3, (2,)))
    assert gradcheck(f, (a,), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", sorted(SYMMETRIC))
def test_gradients_on_symmetric_input_match_torch(name):
    torch = pytest.importorskip("torch")
    tfn = {
        "eigh": lambda a: torch.linalg.eigh(a),
        "eigh-U": lambda a: torch.linalg.eigh(a, "U"),
        "eigvalsh": torch.linalg.eigvalsh,
        "cholesky": torch.linalg.cholesky,
        "cholesky-upper": lambda a: torch.linalg.cholesky(a, upper=True),
        "cholesky_ex": lambda a: torch.linalg.cholesky_ex(a).L,
        "pinv-hermitian": lambda a: torch.linalg.pinv(a, hermitian=True),
        "matrix_norm-2": lambda a: torch.linalg.matrix_norm(a, 2),
    }[name]
    a = _spd(4)
    x = _t(a)
    out = SYMMETRIC[name](_sym(lambda y: y)(x))
    outs = out if isinstance(out, tuple) else (out,)
    tx = torch.tensor(a, requires_grad=True)
    tout = tfn((tx + tx.mT) * 0.5)
    touts = tout if isinstance(tout, tuple) else (tout,)
    if name.startswith("eigh"):  # eigenvectors in the canonical signs coretorch returns
        from coretorch.testing.opdb.linalg_common import torch_column_signs

        touts = (touts[0], touts[1] * torch_column_signs(touts[1]))
    gos = [RNG.uniform(-1, 1, size=tuple(o.shape)) for o in outs]
    g = ct.autograd.grad(list(outs), [x], [ct.tensor(v) for v in gos])[0]
    tg = torch.autograd.grad(list(touts), [tx], [torch.tensor(v) for v in gos])[0]
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=1e-7, atol=1e-9)


TRIANGULAR = {
    "cholesky_solve": lambda L, b: ct.cholesky_solve(b, L),
    "cholesky_inverse": lambda L, b: ct.cholesky_inverse(L),
}


@pytest.mark.parametrize("name", sorted(TRIANGULAR))
def test_gradcheck_on_triangular_factor(name):
    L = _t(np.linalg.cholesky(_spd(3)))
    b = _t(RNG.uniform(-1, 1, size=(3, 2)))
    assert gradcheck(_lower(TRIANGULAR[name]), (L, b), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_singular_matrix_raises_linalg_error():
    singular = _t([[1.0, 2.0], [2.0, 4.0]], grad=False)
    for fn in (
        ct.linalg.inv,
        lambda a: ct.linalg.solve(a, ct.ones(2, dtype=F64)),
        ct.linalg.lu_factor,
        ct.inverse,
    ):
        with pytest.raises(ct.linalg.LinAlgError, match="singular|is zero"):
            fn(singular)
    inv, info = ct.linalg.inv_ex(singular)
    assert int(info) == 2
    assert issubclass(ct.linalg.LinAlgError, RuntimeError)


def test_not_positive_definite_names_the_minor_and_batch_element():
    good, bad = _spd(3), np.diag([1.0, -1.0, 1.0])
    a = _t(np.stack([good, bad]), grad=False)
    with pytest.raises(
        ct.linalg.LinAlgError,
        match=r"\(Batch element 1\).*leading minor of "
        r"order 2 is not positive-definite",
    ):
        ct.linalg.cholesky(a)
    L, info = ct.linalg.cholesky_ex(a)
    assert np.asarray(info).tolist() == [0, 2]
    np.testing.assert_allclose(np.asarray(L[0]), np.linalg.cholesky(good))
    with pytest.raises(ct.linalg.LinAlgError):
        ct.linalg.cholesky_ex(a, check_errors=True)


def test_lu_without_pivoting():
    a = _spd(4, (2,))
    LU, piv = ct.linalg.lu_factor(_t(a, grad=False), pivot=False)
    assert np.asarray(piv).tolist() == [[1, 2, 3, 4]] * 2
    P, L, U = ct.linalg.lu(_t(a, grad=False), pivot=False)
    assert tuple(P.shape) == (0,)
    np.testing.assert_allclose(np.asarray(L.matmul(U)), a, rtol=1e-12, atol=1e-12)
    x = _t(a[0])
    assert gradcheck(lambda y: ct.linalg.lu_factor(y, pivot=False).LU, (x,))


def test_det_gradient_at_singular_matrix_is_the_adjugate():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    x = _t(a)
    ct.linalg.det(x).backward()
    adjugate = np.array(
        [
            [np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)]
            for i in range(3)
        ]
    )
    np.testing.assert_allclose(np.asarray(x.grad), adjugate, atol=1e-9)
    assert gradcheck(ct.linalg.det, (_t(a),))
    batch = _t(np.stack([a, a.T + 3 * np.eye(3)]))
    assert gradcheck(ct.linalg.det, (batch,))


def test_svdvals_gradient_with_repeated_singular_values():
    x = _t(np.eye(3) * 2.0)
    ct.linalg.svdvals(x).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.eye(3))
    y = _t(np.eye(3))
    ct.linalg.eigvalsh(y).sum().backward()
    np.testing.assert_allclose(np.asarray(y.grad), np.eye(3))


def test_qr_refuses_what_it_cannot_differentiate():
    x = _t(RNG.uniform(-1, 1, size=(4, 3)))
    with pytest.raises(RuntimeError, match="mode='r'"):
        ct.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        ct.linalg.qr(x, mode="complete").Q.sum().backward()


def test_ldl_is_a_named_gap():
    for fn in (ct.linalg.ldl_factor, ct.linalg.ldl_factor_ex, ct.linalg.ldl_solve):
        with pytest.raises(NotImplementedError, match="LDL"):
            fn(ct.eye(3, dtype=F64))


def test_singular_vectors_have_canonical_signs():
    a = RNG.uniform(-1, 1, size=(3, 5, 4))
    U, S, Vh = ct.linalg.svd(_t(a, grad=False), full_matrices=False)
    u = np.asarray(U)
    idx = np.abs(u).argmax(-2)
    assert (np.take_along_axis(u, idx[:, None, :], -2) > 0).all()
    np.testing.assert_allclose((u * np.asarray(S)[:, None, :]) @ np.asarray(Vh), a, atol=1e-12)


def test_namespace_covers_torch_linalg():
    torch = pytest.importorskip("torch")
    public = {
        n for n in dir(torch.linalg) if not n.startswith("_") and callable(getattr(torch.linalg, n))
    }
    missing = sorted(n for n in public if not hasattr(ct.linalg, n))
    assert not missing, missing


def test_norm_nuclear_and_top_level_names():
    a = RNG.uniform(-1, 1, size=(3, 4))
    np.testing.assert_allclose(float(ct.norm(_t(a, grad=False), p="nuc")), np.linalg.norm(a, "nuc"))
    x = _t(a)
    assert gradcheck(lambda y: ct.norm(y, p="nuc"), (x,))
    for name in (
        "det",
        "logdet",
        "slogdet",
        "inverse",
        "cholesky",
        "cholesky_solve",
        "cholesky_inverse",
        "qr",
        "svd",
        "pinverse",
        "matrix_power",
        "matrix_exp",
        "lu_solve",
        "lu_unpack",
        "triangular_solve",
        "chain_matmul",
        "cross",
        "orgqr",
    ):
        assert callable(getattr(ct, name)), name


def test_einsum_contracts_the_cheapest_pair_first(monkeypatch):
    from coretorch.ops import einsum as einsum_mod

    sizes = []
    real = einsum_mod._contract

    def recording(*args):
        out = real(*args)
        sizes.append(out[0].numel())
        return out

    monkeypatch.setattr(einsum_mod, "_contract", recording)
    a, b, c = (_t(RNG.uniform(-1, 1, size=s), grad=False) for s in ((64, 2), (2, 64), (64, 1)))
    r = ct.einsum("ij,jk,kl->il", a, b, c)
    # left to right would build a 64 x 64 intermediate; b @ c first keeps every result small
    assert max(sizes) == 64 and sizes[0] == 2
    np.testing.assert_allclose(
        np.asarray(r), np.asarray(a) @ np.asarray(b) @ np.asarray(c), rtol=1e-12
    )
    # the list form and the variadic form are the same call
    np.testing.assert_allclose(np.asarray(ct.einsum("ij,jk,kl->il", [a, b, c])), np.asarray(r))


def test_variadic_functional_forms():
    a = _t(_spd(3, (2,)), grad=False)
    LU, piv, infos = ct.lu(a, get_infos=True)
    assert tuple(piv.shape) == (2, 3) and np.asarray(infos).tolist() == [0, 0]
    assert len(ct.lu(a)) == 2
    m = [_t(RNG.uniform(-1, 1, size=s), grad=False) for s in ((3, 4), (4, 2), (2, 5))]
    np.testing.assert_allclose(
        np.asarray(ct.chain_matmul(*m)),
        np.asarray(m[0]) @ np.asarray(m[1]) @ np.asarray(m[2]),
        rtol=1e-12,
    )


def test_zero_power_and_single_row_pdist_stay_connected_to_their_input():
    """matrix_power(A, 0) is the identity and pdist of one row is empty, yet both results
    require grad (as PyTorch's do), with a zero gradient."""
    a = ct.randn(3, 3, dtype=ct.float64, requires_grad=True)
    eye = ct.linalg.matrix_power(a, 0)
    np.testing.assert_array_equal(eye.detach().numpy(), np.eye(3))
    assert eye.requires_grad
    eye.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((3, 3)))
    row = ct.randn(1, 4, dtype=ct.float64, requires_grad=True)
    d = ct.nn.functional.pdist(row)
    assert d.shape == (0,) and d.requires_grad
    d.sum().backward()
    np.testing.assert_array_equal(row.grad.numpy(), np.zeros((1, 4)))
