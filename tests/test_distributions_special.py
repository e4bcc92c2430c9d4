"""The special functions and linear algebra under coretorch.distributions: values against
scipy/numpy, gradients against finite differences (gradcheck), and the implicit
reparameterization gradients of gamma and beta samples against finite differences of scipy's
quantile functions at the same uniform draw."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import coretorch as ct
from coretorch.autograd import gradcheck, gradgradcheck
from coretorch.distributions import _linalg, _special

X = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0])


def _t(a, requires_grad=False):
    return ct.tensor(np.asarray(a, dtype=np.float64), dtype=ct.float64, requires_grad=requires_grad)


def test_values_match_scipy():
    x = _t(X)
    np.testing.assert_allclose(_special.lgamma(x).numpy(), scipy.special.gammaln(X), rtol=1e-14)
    np.testing.assert_allclose(_special.digamma(x).numpy(), scipy.special.digamma(X), rtol=1e-14)
    np.testing.assert_allclose(
        _special.polygamma(2, x).numpy(), scipy.special.polygamma(2, X), rtol=1e-14
    )
    np.testing.assert_allclose(
        _special.gammainc(_t(X), _t(X[::-1])).numpy(),
        scipy.special.gammainc(X, X[::-1]),
        rtol=1e-14,
    )
    # float32 in, float32 out; PyTorch's special values
    out = _special.lgamma(ct.tensor([0.0, -0.5, 3.0]))
    assert out.dtype == ct.float32
    np.testing.assert_allclose(out.numpy(), [np.inf, 1.2655121, np.log(2.0)], rtol=1e-6)
    d = _special.digamma(ct.tensor([0.0, -1.0]))
    assert d[0].item() == -np.inf and np.isnan(d[1].item())


def test_gradients_match_finite_differences():
    x = _t([0.3, 1.7, 4.2], requires_grad=True)
    assert gradcheck(_special.lgamma, (x,))
    assert gradcheck(_special.digamma, (x,))
    assert gradgradcheck(_special.lgamma, (x,))
    assert gradcheck(lambda v: _special.gammainc(_t([0.8, 2.0, 5.0]), v), (x,))


def test_errors():
    with pytest.raises(TypeError, match="lgamma\\(\\): expected a floating-point tensor"):
        _special.lgamma(ct.tensor([1, 2]))
    with pytest.raises(ValueError, match="polygamma\\(\\): expected a non-negative integer"):
        _special.polygamma(-1, ct.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="with respect to the first argument"):
        a = _t([1.0], requires_grad=True)
        _special.gammainc(a, _t([1.0])).sum().backward()


def _replay_uniforms(seed: int, shape) -> np.ndarray:
    ct.manual_seed(seed)
    return ct.rand(shape, dtype=ct.float64).numpy()


@pytest.mark.parametrize("alpha", [0.05, 0.7, 3.0, 250.0])
def test_gamma_sample_gradient_is_the_quantile_derivative(alpha):
    # the sample is the gamma quantile of a uniform from coretorch's generator; its derivative
    # in alpha must equal d/dalpha gammaincinv(alpha, u) at that u
    a = _t(np.full(64, alpha), requires_grad=True)
    ct.manual_seed(11)
    x = _special.standard_gamma(a)
    x.sum().backward()
    u = _replay_uniforms(11, (64,))
    np.testing.assert_allclose(
        x.detach().numpy(), np.maximum(scipy.special.gammaincinv(alpha, u), 1e-300), rtol=1e-12
    )
    h = 1e-6 * alpha
    fd = (scipy.special.gammaincinv(alpha + h, u) - scipy.special.gammaincinv(alpha - h, u)) / (
        2 * h
    )
    keep = x.detach().numpy() > 1e-250  # where the sample is representable
    np.testing.assert_allclose(a.grad.numpy()[keep], fd[keep], rtol=2e-5)


@pytest.mark.parametrize("c1,c0", [(0.4, 0.6), (2.0, 5.0), (40.0, 3.0)])
def test_beta_sample_gradient_is_the_quantile_derivative(c1, c0):
    a, b = _t(np.full(48, c1), True), _t(np.full(48, c0), True)
    ct.manual_seed(5)
    x = _special.standard_beta(a, b)
    x.sum().backward()
    u = _replay_uniforms(5, (48,))
    np.testing.assert_allclose(
        x.detach().numpy(), scipy.special.betaincinv(c1, c0, u), rtol=1e-10, atol=1e-300
    )
    for grad, fd in (
        (
            a.grad,
            lambda h: (
                (scipy.special.betaincinv(c1 + h, c0, u) - scipy.special.betaincinv(c1 - h, c0, u))
                / (2 * h)
            ),
        ),
        (
            b.grad,
            lambda h: (
                (scipy.special.betaincinv(c1, c0 + h, u) - scipy.special.betaincinv(c1, c0 - h, u))
                / (2 * h)
            ),
        ),
    ):
        np.testing.assert_allclose(grad.numpy(), fd(1e-6), rtol=1e-4, atol=1e-9)


def _spd(rng, n, batch=()):
    b = rng.standard_normal(batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def test_cholesky_and_solve_triangular_match_numpy():
    rng = np.random.default_rng(3)
    a = _spd(rng, 4, (2,))
    lower = _linalg.cholesky(_t(a))
    np.testing.assert_allclose(lower.numpy(), np.linalg.cholesky(a), rtol=1e-13)
    rhs = rng.standard_normal((3, 1, 4, 2))  # broadcasts against the batch of 2
    x = _linalg.solve_triangular(lower, _t(rhs), upper=False)
    assert tuple(x.shape) == (3, 2, 4, 2)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(
                x.numpy()[i, j],
                scipy.linalg.solve_triangular(np.linalg.cholesky(a[j]), rhs[i, 0], lower=True),
                rtol=1e-12,
            )
    inv = _linalg.cholesky_inverse(lower)
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(a), rtol=1e-12, atol=1e-14)


def test_linalg_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    b = _t(rng.standard_normal((2, 3, 3)), requires_grad=True)
    rhs = _t(rng.standard_normal((3, 2)), requires_grad=True)

    def chol_of_spd(m):  # the input must stay symmetric positive definite under perturbation
        return _linalg.cholesky(m @ m.transpose(-2, -1) + 3 * _t(np.eye(3)))

    assert gradcheck(chol_of_spd, (b,))
    assert gradcheck(
        lambda m, r: _linalg.solve_triangular(chol_of_spd(m), r, upper=False), (b, rhs)
    )
    upper = _t(np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3), requires_grad=True)
    assert gradcheck(lambda m, r: _linalg.solve_triangular(m.triu(), r, upper=True), (upper, rhs))


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    with pytest.raises(RuntimeError, match="the leading minor of order 2 is not positive-definite"):
        _linalg.cholesky(ct.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="\\(Batch element 1\\)"):
        _linalg.cholesky(ct.tensor([[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        _linalg.cholesky(ct.ones(2, 3))
    with pytest.raises(RuntimeError, match="incompatible shapes"):
        _linalg.solve_triangular(ct.eye(2), ct.ones(3, 1), upper=False)


def test_second_derivative_of_a_sample_is_refused_as_in_pytorch():
    for sample in (
        lambda c: _special.standard_gamma(c),
        lambda c: _special.standard_beta(c, c * 2),
    ):
        c = _t([2.0, 0.5], requires_grad=True)
        (first,) = ct.autograd.grad(sample(c).sum(), [c], create_graph=True)
        with pytest.raises(NotImplementedError, match="second derivative of the sample"):
            first.sum().backward()
