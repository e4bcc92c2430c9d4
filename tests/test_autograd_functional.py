"""coretorch.autograd.functional: Jacobians, Hessians and the vector products, against analytic
derivatives (numpy) and PyTorch's functions where installed."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))


def _t(a, grad=False):
    return ct.tensor(a, dtype=ct.float64, requires_grad=grad)


def test_jacobian_of_elementwise_and_mixed_functions():
    j = jacobian(lambda a: a.exp() * 2, _t(X))
    np.testing.assert_allclose(j.numpy(), np.diag(2 * np.exp(X)))
    ja, jb = jacobian(lambda a, b: a * b, (_t(X), _t(Y)))  # d(a*b)[i,k]/da[m] = b[i,k] δkm
    assert ja.shape == (2, 3, 3) and jb.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(ja.numpy(), Y[:, :, None] * np.eye(3))
    np.testing.assert_allclose(
        jb.numpy(), np.einsum("ij,kl->ikjl", np.eye(2), np.eye(3)) * X[None, :, None, None]
    )
    (j00, j01), (j10, j11) = jacobian(lambda a, b: (a.sin(), (a * b).sum(0)), (_t(X), _t(Y)))
    np.testing.assert_allclose(j00.numpy(), np.diag(np.cos(X)))
    np.testing.assert_allclose(j01.numpy(), np.zeros((3, 2, 3)))
    np.testing.assert_allclose(j10.numpy(), np.diag(Y.sum(0)))


def test_hessian_of_a_scalar_function():
    # f = sum(a sin a): f'' = 2 cos a - a sin a on the diagonal
    h = hessian(lambda a: (a.sin() * a).sum(), _t(X))
    np.testing.assert_allclose(h.numpy(), np.diag(2 * np.cos(X) - X * np.sin(X)), atol=1e-12)
    (haa, hab), (hba, hbb) = hessian(lambda a, b: (a * b).sum(), (_t(X), _t(Y)))
    np.testing.assert_allclose(haa.numpy(), np.zeros((3, 3)))
    np.testing.assert_allclose(hab.numpy(), np.broadcast_to(np.eye(3)[:, None, :], (3, 2, 3)))
    np.testing.assert_allclose(hba.numpy(), hab.numpy().transpose(1, 2, 0))


def test_vector_products_match_the_jacobian_and_hessian():
    f = lambda a, b: (a * b).tanh()  # noqa: E731
    v = RNG.standard_normal((2, 3))
    ja, jb = jacobian(f, (_t(X), _t(Y)))
    out, (va, vb) = vjp(f, (_t(X), _t(Y)), _t(v))
    np.testing.assert_allclose(out.numpy(), np.tanh(X * Y))
    np.testing.assert_allclose(va.numpy(), np.einsum("ij,ijk->k", v, ja.numpy()))
    np.testing.assert_allclose(vb.numpy(), np.einsum("ij,ijkl->kl", v, jb.numpy()))
    ua, ub = RNG.standard_normal(3), RNG.standard_normal((2, 3))
    _, jv = jvp(f, (_t(X), _t(Y)), (_t(ua), _t(ub)))
    np.testing.assert_allclose(
        jv.numpy(),
        np.einsum("ijk,k->ij", ja.numpy(), ua) + np.einsum("ijkl,kl->ij", jb.numpy(), ub),
    )
    g = lambda a: (a.sin() * a).sum()  # noqa: E731
    h = np.diag(2 * np.cos(X) - X * np.sin(X))
    for fn in (vhp, hvp):
        val, prod = fn(g, _t(X), _t(ua))
        np.testing.assert_allclose(val.numpy(), (np.sin(X) * X).sum())
        np.testing.assert_allclose(prod.numpy(), h @ ua, atol=1e-12)


def test_create_graph_results_are_differentiable():
    x = _t(X, grad=True)
    j = jacobian(lambda a: a**3, x, create_graph=True)  # diag(3 a^2)
    assert j.requires_grad
    j.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * X)
    assert not jacobian(lambda a: a**3, x).requires_grad


def test_independent_inputs_give_zeros_or_refuse_in_strict_mode():
    f = lambda a, b: a * 2  # noqa: E731
    _, (ga, gb) = vjp(f, (_t(X), _t(Y)), _t(np.ones(3)))
    np.testing.assert_allclose(gb.numpy(), np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        vjp(f, (_t(X), _t(Y)), _t(np.ones(3)), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jacobian(f, (_t(X), _t(Y)), strict=True)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="inputs given to jacobian must be either a Tensor"):
        jacobian(lambda a: a, [1.0])
    with pytest.raises(RuntimeError, match="v can only be None"):
        vjp(lambda a: a * 2, _t(X))
    with pytest.raises(RuntimeError, match="mismatch in shape"):
        vjp(lambda a: a * 2, _t(X), _t(np.ones(4)))
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        hessian(lambda a: (a, a), _t(X))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        hessian(lambda a: a * 2, _t(X))
    with pytest.raises(NotImplementedError, match="forward-mode"):
        jacobian(lambda a: a, _t(X), strategy="forward-mode")


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF

    import coretorch.autograd.functional as F

    scalar = name in ("hessian", "vhp", "hvp")
    fc = (lambda a, b: (a.sin() * b).pow(2).sum()) if scalar else (lambda a, b: (a * b).tanh())
    ft = (lambda a, b: (a.sin() * b).pow(2).sum()) if scalar else (lambda a, b: (a * b).tanh())
    kw_c, kw_t = {}, {}
    if name == "vjp":
        v = RNG.standard_normal((2, 3))
        kw_c, kw_t = {"v": _t(v)}, {"v": torch.tensor(v)}
    elif name in ("jvp", "vhp", "hvp"):
        v = (RNG.standard_normal(3), RNG.standard_normal((2, 3)))
        kw_c, kw_t = {"v": tuple(map(_t, v))}, {"v": tuple(map(torch.tensor, v))}
    ours = getattr(F, name)(fc, (_t(X), _t(Y)), **kw_c)
    theirs = getattr(TF, name)(ft, (torch.tensor(X), torch.tensor(Y)), **kw_t)

    def flat(r):
        return [y for x in r for y in flat(x)] if isinstance(r, (tuple, list)) else [r]

    a, b = flat(ours), flat(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.numpy(), y.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_variable_is_a_new_leaf_sharing_storage():
    t = ct.ones(2)
    v = ct.autograd.Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and not t.requires_grad
    v.data.add_(1)
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0])
