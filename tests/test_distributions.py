"""coretorch.distributions: densities, entropies and moments against scipy.stats (and PyTorch
when installed), shapes, argument validation, sampling statistics with fixed seeds, and
gradients of rsample against finite differences at a fixed random draw."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

import coretorch as ct
import coretorch.distributions as D
from coretorch.distributions import constraints


def _t(a, requires_grad=False):
    return ct.tensor(np.asarray(a, dtype=np.float64), dtype=ct.float64, requires_grad=requires_grad)


def _np(t):
    return t.detach().numpy()


LOC, SCALE = np.array([0.0, 1.5, -2.0]), np.array([1.0, 0.3, 4.0])
X = np.array([0.2, 1.1, 3.0])


# ---- densities, entropies and moments against scipy.stats ---------------------------------


def test_normal_matches_scipy():
    d = D.Normal(_t(LOC), _t(SCALE))
    ref = st.norm(LOC, SCALE)
    np.testing.assert_allclose(_np(d.log_prob(_t(X))), ref.logpdf(X), rtol=1e-14)
    np.testing.assert_allclose(_np(d.entropy()), ref.entropy(), rtol=1e-14)
    np.testing.assert_allclose(_np(d.cdf(_t(X))), ref.cdf(X), rtol=1e-13)
    np.testing.assert_allclose(
        _np(d.icdf(_t([0.1, 0.5, 0.975]))), ref.ppf([0.1, 0.5, 0.975]), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(_np(d.mean), ref.mean())
    np.testing.assert_allclose(_np(d.variance), ref.var(), rtol=1e-15)
    np.testing.assert_allclose(_np(d.stddev), ref.std())


def test_uniform_matches_scipy():
    low, high = np.array([0.0, -1.0]), np.array([2.0, 0.5])
    d = D.Uniform(_t(low), _t(high))
    ref = st.uniform(low, high - low)
    x = np.array([1.3, -0.2])
    np.testing.assert_allclose(_np(d.log_prob(_t(x))), ref.logpdf(x), rtol=1e-15)
    np.testing.assert_allclose(_np(d.entropy()), ref.entropy(), rtol=1e-15)
    np.testing.assert_allclose(_np(d.cdf(_t(x))), ref.cdf(x), rtol=1e-15)
    np.testing.assert_allclose(_np(d.icdf(_t([0.25, 0.5]))), ref.ppf([0.25, 0.5]))
    np.testing.assert_allclose(_np(d.mean), ref.mean())
    np.testing.assert_allclose(_np(d.variance), ref.var(), rtol=1e-15)
    outside = D.Uniform(_t(low), _t(high), validate_args=False).log_prob(_t([2.0, -1.5]))
    assert _np(outside).tolist() == [-math.inf, -math.inf]  # [low, high): high is outside


@pytest.mark.parametrize("use_logits", [False, True])
def test_bernoulli_matches_scipy(use_logits):
    p = np.array([0.1, 0.5, 0.93])
    d = D.Bernoulli(logits=_t(np.log(p) - np.log1p(-p))) if use_logits else D.Bernoulli(_t(p))
    ref = st.bernoulli(p)
    for v in (0.0, 1.0):
        np.testing.assert_allclose(_np(d.log_prob(_t([v] * 3))), ref.logpmf(v), rtol=1e-13)
    np.testing.assert_allclose(_np(d.entropy()), ref.entropy(), rtol=1e-13)
    np.testing.assert_allclose(_np(d.mean), p, rtol=1e-14)
    np.testing.assert_allclose(_np(d.variance), ref.var(), rtol=1e-14)
    np.testing.assert_allclose(_np(d.probs), p, rtol=1e-14)
    mode = _np(d.mode)
    assert mode[0] == 0.0 and np.isnan(mode[1]) and mode[2] == 1.0


@pytest.mark.parametrize("use_logits", [False, True])
def test_categorical_matches_numpy(use_logits):
    w = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 0.5, 0.5, 4.0]])
    p = w / w.sum(-1, keepdims=True)
    d = D.Categorical(logits=_t(np.log(w))) if use_logits else D.Categorical(probs=_t(w))
    assert d.batch_shape == (2,) and d.event_shape == () and d.param_shape == (2, 4)
    np.testing.assert_allclose(_np(d.probs), p, rtol=1e-14)
    np.testing.assert_allclose(
        _np(d.log_prob(ct.tensor([3, 1]))), np.log([p[0, 3], p[1, 1]]), rtol=1e-14
    )
    np.testing.assert_allclose(_np(d.entropy()), st.entropy(p, axis=-1), rtol=1e-14)
    assert _np(d.mode).tolist() == [3, 0]
    assert np.isnan(_np(d.mean)).all() and tuple(d.mean.shape) == (2,)
    # log_prob broadcasts values against the batch
    assert tuple(d.log_prob(ct.tensor([[0], [1], [2]])).shape) == (3, 2)
    support = d.enumerate_support()
    assert _np(support).tolist() == [[0, 0], [1, 1], [2, 2], [3, 3]]
    assert tuple(d.enumerate_support(expand=False).shape) == (4, 1)


def test_one_hot_categorical():
    p = np.array([0.2, 0.3, 0.5])
    d = D.OneHotCategorical(probs=_t(p))
    assert d.batch_shape == () and d.event_shape == (3,)
    np.testing.assert_allclose(_np(d.log_prob(_t([0, 1, 0]))), np.log(0.3), rtol=1e-14)
    np.testing.assert_allclose(_np(d.entropy()), st.entropy(p), rtol=1e-14)
    np.testing.assert_allclose(_np(d.variance), p * (1 - p))
    assert _np(d.mode).tolist() == [0, 0, 1]
    assert _np(d.enumerate_support()).tolist() == np.eye(3).tolist()
    s = d.sample((5,))
    assert tuple(s.shape) == (5, 3) and _np(s.sum(-1)).tolist() == [1.0] * 5
    leaf = _t(p, requires_grad=True)
    r = D.OneHotCategoricalStraightThrough(probs=leaf).rsample((2,))
    assert _np(r.sum(-1)).tolist() == [1.0, 1.0]
    (r * _t([1.0, 2.0, 3.0])).sum().backward()
    # straight through: d/dp of 2 w·(p / sum p) at sum p = 1 is 2 (w - w·p)
    np.testing.assert_allclose(_np(leaf.grad), 2 * (np.array([1.0, 2.0, 3.0]) - 2.3), rtol=1e-12)


def test_gamma_matches_scipy():
    a, rate = np.array([0.5, 2.0, 9.0]), np.array([1.0, 3.0, 0.5])
    d = D.Gamma(_t(a), _t(rate))
    ref = st.gamma(a, scale=1 / rate)
    np.testing.assert_allclose(_np(d.log_prob(_t(X))), ref.logpdf(X), rtol=1e-13)
    np.testing.assert_allclose(_np(d.entropy()), ref.entropy(), rtol=1e-13)
    np.testing.assert_allclose(_np(d.cdf(_t(X))), ref.cdf(X), rtol=1e-13)
    np.testing.assert_allclose(_np(d.mean), ref.mean(), rtol=1e-15)
    np.testing.assert_allclose(_np(d.variance), ref.var(), rtol=1e-15)
    np.testing.assert_allclose(_np(d.mode), np.maximum((a - 1) / rate, 0))
    assert d.log_prob(2.0).shape == (3,)  # a Python number is accepted, as in PyTorch


def test_beta_matches_scipy():
    a, b = np.array([0.5, 2.0, 9.0]), np.array([0.7, 3.0, 1.5])
    d = D.Beta(_t(a), _t(b))
    ref = st.beta(a, b)
    x = np.array([0.05, 0.4, 0.97])
    np.testing.assert_allclose(_np(d.log_prob(_t(x))), ref.logpdf(x), rtol=1e-13)
    np.testing.assert_allclose(_np(d.entropy()), ref.entropy(), rtol=1e-12)
    np.testing.assert_allclose(_np(d.mean), ref.mean(), rtol=1e-15)
    np.testing.assert_allclose(_np(d.variance), ref.var(), rtol=1e-14)
    np.testing.assert_allclose(_np(d.mode)[1:], ((a - 1) / (a + b - 2))[1:], rtol=1e-15)
    assert _np(d.mode)[0] == 1.0  # both concentrations below 1: PyTorch's choice
    scalar = D.Beta(2.0, 3.0)
    assert scalar.batch_shape == () and scalar.concentration1.shape == ()


def _spd(rng, n, batch=()):
    b = rng.standard_normal(batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_scipy(param):
    rng = np.random.default_rng(0)
    cov = _spd(rng, 3, (2,))
    loc = rng.standard_normal((2, 3))
    given = {
        "covariance_matrix": cov,
        "precision_matrix": np.linalg.inv(cov),
        "scale_tril": np.linalg.cholesky(cov),
    }[param]
    d = D.MultivariateNormal(_t(loc), **{param: _t(given)})
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = rng.standard_normal((4, 2, 3))
    for i in range(2):
        ref = st.multivariate_normal(loc[i], cov[i])
        np.testing.assert_allclose(_np(d.log_prob(_t(x)))[:, i], ref.logpdf(x[:, i]), rtol=1e-12)
        np.testing.assert_allclose(_np(d.entropy())[i], ref.entropy(), rtol=1e-13)
    np.testing.assert_allclose(_np(d.covariance_matrix), cov, rtol=1e-12)
    np.testing.assert_allclose(_np(d.precision_matrix), np.linalg.inv(cov), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(_np(d.scale_tril), np.linalg.cholesky(cov), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_np(d.variance), np.diagonal(cov, axis1=-2, axis2=-1), rtol=1e-12)


def test_multivariate_normal_broadcasts_loc_against_the_matrix():
    rng = np.random.default_rng(1)
    cov = _spd(rng, 2)
    loc = rng.standard_normal((4, 2))
    d = D.MultivariateNormal(_t(loc), covariance_matrix=_t(cov))
    assert d.batch_shape == (4,) and tuple(d.covariance_matrix.shape) == (4, 2, 2)
    x = rng.standard_normal((4, 2))
    np.testing.assert_allclose(
        _np(d.log_prob(_t(x))),
        [st.multivariate_normal(m, cov).logpdf(v) for m, v in zip(loc, x)],
        rtol=1e-12,
    )


# ---- shapes ---------------------------------------------------------------------------------


def test_sample_shapes_and_expand():
    cases = [
        (D.Normal(_t([0.0, 1.0]), 1.0), (2,), ()),
        (D.Uniform(0.0, _t([[1.0], [2.0]])), (2, 1), ()),
        (D.Bernoulli(_t([0.2, 0.4])), (2,), ()),
        (D.Categorical(_t([[0.5, 0.5], [0.1, 0.9]])), (2,), ()),
        (D.OneHotCategorical(_t([[0.5, 0.5], [0.1, 0.9]])), (2,), (2,)),
        (D.Gamma(_t([1.0, 2.0]), 1.0), (2,), ()),
        (D.Beta(_t([1.0, 2.0]), 3.0), (2,), ()),
        (
            D.MultivariateNormal(ct.zeros(2, 3, dtype=ct.float64), scale_tril=_t(np.eye(3))),
            (2,),
            (3,),
        ),
    ]
    for d, batch, event in cases:
        name = type(d).__name__
        assert d.batch_shape == batch and d.event_shape == event, name
        assert tuple(d.sample().shape) == batch + event, name
        assert tuple(d.sample((4, 5)).shape) == (4, 5) + batch + event, name
        big = d.expand((3,) + batch)
        assert type(big) is type(d) and big.batch_shape == (3,) + batch, name
        assert tuple(big.sample((2,)).shape) == (2, 3) + batch + event, name
        assert tuple(big.entropy().shape) == (3,) + batch, name
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(D.Normal(0.0, 1.0).sample_n(3).shape) == (3,)


def test_has_rsample_and_the_error_without_it():
    assert [
        c.has_rsample
        for c in (
            D.Normal,
            D.Uniform,
            D.MultivariateNormal,
            D.Gamma,
            D.Beta,
            D.Bernoulli,
            D.Categorical,
            D.OneHotCategorical,
        )
    ] == [True] * 5 + [False] * 3
    with pytest.raises(NotImplementedError, match="Categorical has no reparameterized sampler"):
        D.Categorical(_t([0.5, 0.5])).rsample()


# ---- argument validation --------------------------------------------------------------------


def test_invalid_parameters_raise_with_pytorch_message():
    with pytest.raises(
        ValueError,
        match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of "
        r"distribution Normal\(loc: .*\) to satisfy the "
        r"constraint GreaterThan\(lower_bound=0.0\), but found "
        r"invalid values",
    ):
        D.Normal(_t([0.0, 0.0]), _t([1.0, -1.0]))
    with pytest.raises(ValueError, match="constraint Simplex\\(\\)"):
        D.Categorical(probs=_t([0.5, -0.5, 1.0]))
    with pytest.raises(
        ValueError, match="constraint Interval\\(lower_bound=0.0, upper_bound=1.0\\)"
    ):
        D.Bernoulli(_t([1.5]))
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        D.Gamma(_t([-1.0]), _t([1.0]))
    with pytest.raises(ValueError, match="Expected parameter low .* LessThan"):
        D.Uniform(_t([1.0]), _t([0.0]))
    with pytest.raises(ValueError, match="constraint PositiveDefinite\\(\\)"):
        D.MultivariateNormal(ct.zeros(2), covariance_matrix=ct.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="constraint LowerCholesky\\(\\)"):
        D.MultivariateNormal(ct.zeros(2), scale_tril=ct.tensor([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(
        ValueError, match="Either `probs` or `logits` must be specified, but not both."
    ):
        D.Categorical(_t([0.5, 0.5]), _t([0.0, 0.0]))
    with pytest.raises(
        ValueError,
        match="Exactly one of covariance_matrix or precision_matrix "
        "or scale_tril may be specified.",
    ):
        D.MultivariateNormal(ct.zeros(2))
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional."):
        D.Categorical(_t(0.5))
    # validate_args=False skips the checks
    assert D.Normal(_t([0.0]), _t([-1.0]), validate_args=False).scale.item() == -1.0


def test_invalid_values_raise_in_log_prob():
    d = D.Normal(_t([0.0, 1.0]), _t([1.0, 1.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        d.log_prob(0.5)
    with pytest.raises(
        ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"
    ):
        d.log_prob(_t([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="to be within the support \\(Boolean\\(\\)\\)"):
        D.Bernoulli(_t([0.3])).log_prob(_t([0.5]))
    with pytest.raises(ValueError, match="IntegerInterval\\(lower_bound=0, upper_bound=1\\)"):
        D.Categorical(_t([0.5, 0.5])).log_prob(ct.tensor(2))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.MultivariateNormal(ct.zeros(3), scale_tril=ct.eye(3)).log_prob(ct.zeros(2))


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        assert D.Normal(_t([0.0]), _t([-1.0])).scale.item() == -1.0
        with pytest.raises(ValueError, match="Expected parameter scale"):
            D.Normal(_t([0.0]), _t([-1.0]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(_t([0.0]), _t([-1.0]))
    with pytest.raises(ValueError, match="expected True or False"):
        D.Distribution.set_default_validate_args("yes")


def test_constraints():
    assert constraints.positive.check(_t([1.0, 0.0, -1.0])).tolist() == [True, False, False]
    assert constraints.real.check(_t([1.0, math.nan])).tolist() == [True, False]
    assert constraints.simplex.check(_t([[0.2, 0.8], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 2).check(_t([0.0, 1.5, 3.0])).tolist() == [
        True,
        False,
        False,
    ]
    assert constraints.real_vector.check(_t([[1.0, math.nan], [1.0, 2.0]])).tolist() == [
        False,
        True,
    ]
    assert constraints.real_vector.event_dim == 1 and constraints.one_hot.is_discrete
    spd = _t([[2.0, 0.5], [0.5, 1.0]])
    assert constraints.positive_definite.check(spd).item()
    assert constraints.positive_semidefinite.check(_t([[1.0, 1.0], [1.0, 1.0]])).item()
    assert not constraints.positive_definite.check(_t([[1.0, 1.0], [1.0, 1.0]])).item()
    assert constraints.is_dependent(D.Uniform(0.0, 1.0).arg_constraints["low"]) is False
    assert constraints.is_dependent(constraints.dependent)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(_t([1.0]))
    assert repr(constraints.independent(constraints.real, 1)) == "IndependentConstraint(Real(), 1)"


# ---- sampling statistics (fixed seeds; tolerances of 6 standard errors or more) --------------

N = 40000


def _check_moments(samples: np.ndarray, mean, var, z: float = 6.0) -> None:
    mean, var = np.broadcast_to(mean, samples.shape[1:]), np.broadcast_to(var, samples.shape[1:])
    np.testing.assert_array_less(np.abs(samples.mean(0) - mean), z * np.sqrt(var / len(samples)))
    # the sample variance's standard error, with a generous kurtosis allowance
    np.testing.assert_array_less(np.abs(samples.var(0) - var), z * 3 * var / np.sqrt(len(samples)))


def test_sampling_statistics():
    ct.manual_seed(0)
    cases = [
        (D.Normal(_t([0.0, 3.0]), _t([1.0, 0.5])), [0.0, 3.0], [1.0, 0.25]),
        (D.Uniform(_t([-1.0]), _t([3.0])), 1.0, 16 / 12),
        (D.Gamma(_t([0.5, 4.0]), _t([1.0, 2.0])), [0.5, 2.0], [0.5, 1.0]),
        (D.Beta(_t([0.5, 5.0]), _t([0.5, 2.0])), [0.5, 5 / 7], [0.25 / 2, 10 / (49 * 8)]),
        (D.Bernoulli(_t([0.1, 0.7])), [0.1, 0.7], [0.09, 0.21]),
    ]
    for d, mean, var in cases:
        _check_moments(_np(d.sample((N,))), mean, var)
    for d in (D.Gamma(_t([3.0]), 1.0), D.Beta(_t([2.0]), _t([5.0]))):
        ref = st.gamma(3.0) if isinstance(d, D.Gamma) else st.beta(2.0, 5.0)
        assert st.kstest(_np(d.sample((N,)))[:, 0], ref.cdf).pvalue > 1e-4
    p = np.array([0.1, 0.0, 0.6, 0.3])
    counts = np.bincount(_np(D.Categorical(_t(p)).sample((N,))), minlength=4)
    assert counts[1] == 0  # a category of probability 0 is never drawn
    np.testing.assert_array_less(np.abs(counts / N - p), 6 * np.sqrt(p * (1 - p) / N) + 1e-12)
    rng = np.random.default_rng(2)
    cov = _spd(rng, 3)
    x = _np(D.MultivariateNormal(_t([1.0, 2.0, 3.0]), covariance_matrix=_t(cov)).sample((N,)))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=6 * np.sqrt(2 / N) * np.abs(cov).max())
    np.testing.assert_array_less(np.abs(x.mean(0) - [1, 2, 3]), 6 * np.sqrt(np.diag(cov) / N))


def test_sampling_is_reproducible_with_a_seed():
    d = D.Gamma(_t([0.7, 2.0]), _t([1.0, 1.0]))
    ct.manual_seed(123)
    a = _np(d.sample((5,)))
    ct.manual_seed(123)
    np.testing.assert_array_equal(a, _np(d.sample((5,))))


# ---- gradients of rsample: finite differences at a fixed draw --------------------------------


def _rsample_fd(make, params: list, seed: int, h: float = 1e-6, rtol: float = 1e-6) -> None:
    """d(sum of rsample)/d(param) by autograd against central differences, with the random
    draw fixed by re-seeding."""
    leaves = [_t(p, requires_grad=True) for p in params]
    ct.manual_seed(seed)
    make(*leaves).rsample((3,)).sum().backward()
    for i, p in enumerate(params):
        p = np.asarray(p, dtype=np.float64)
        fd = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            vals = []
            for sign in (1, -1):
                q = p.copy()
                q[idx] += sign * h
                args = [_t(q) if j == i else _t(params[j]) for j in range(len(params))]
                ct.manual_seed(seed)
                vals.append(_np(make(*args).rsample((3,))).sum())
            fd[idx] = (vals[0] - vals[1]) / (2 * h)
        np.testing.assert_allclose(_np(leaves[i].grad), fd, rtol=rtol, atol=1e-8)


def test_rsample_gradients_match_finite_differences():
    _rsample_fd(D.Normal, [[0.5, -1.0], [1.5, 0.2]], seed=1)
    _rsample_fd(D.Uniform, [[0.0, -1.0], [2.0, 0.5]], seed=2)
    _rsample_fd(
        lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril.tril()),
        [[0.5, -1.0], [[1.5, 0.0], [0.3, 0.7]]],
        seed=3,
    )
    _rsample_fd(
        lambda loc, c: D.MultivariateNormal(loc, covariance_matrix=c @ c.mT),
        [[0.0, 0.0], [[1.5, 0.1], [0.3, 0.7]]],
        seed=4,
    )
    _rsample_fd(D.Gamma, [[0.6, 3.0], [1.0, 2.5]], seed=5, rtol=1e-5)
    _rsample_fd(D.Beta, [[0.8, 3.0], [2.0, 0.5]], seed=6, rtol=1e-4)


def test_log_prob_gradients_match_finite_differences():
    from coretorch.autograd import gradcheck

    x = _t([0.3, 0.6])
    assert gradcheck(
        lambda a, b: D.Beta(a, b).log_prob(x), (_t([0.8, 2.0], True), _t([1.5, 0.7], True))
    )
    assert gradcheck(
        lambda a, r: D.Gamma(a, r).entropy(), (_t([0.8, 2.0], True), _t([1.5, 0.7], True))
    )
    assert gradcheck(
        lambda loc, c: D.MultivariateNormal(
            loc, covariance_matrix=c @ c.mT + _t(np.eye(2))
        ).log_prob(x),
        (_t([0.1, 0.2], True), _t([[1.0, 0.2], [0.3, 0.5]], True)),
    )


# ---- the same values as PyTorch ---------------------------------------------------------------


def _torch_pairs(torch):
    td = torch.distributions
    f64 = dict(dtype=torch.float64)
    cov = np.array([[2.0, 0.3], [0.3, 0.5]])
    return [
        (D.Normal(_t(LOC), _t(SCALE)), td.Normal(torch.tensor(LOC), torch.tensor(SCALE)), X),
        (
            D.Beta(_t([0.5, 2.0, 9.0]), _t([0.7, 3.0, 1.5])),
            td.Beta(torch.tensor([0.5, 2.0, 9.0], **f64), torch.tensor([0.7, 3.0, 1.5], **f64)),
            np.array([0.05, 0.4, 0.97]),
        ),
        (
            D.Gamma(_t([0.5, 2.0, 9.0]), _t([1.0, 3.0, 0.5])),
            td.Gamma(torch.tensor([0.5, 2.0, 9.0], **f64), torch.tensor([1.0, 3.0, 0.5], **f64)),
            X,
        ),
        (
            D.Bernoulli(logits=_t([-2.0, 0.0, 3.0])),
            td.Bernoulli(logits=torch.tensor([-2.0, 0.0, 3.0], **f64)),
            np.array([1.0, 0.0, 1.0]),
        ),
        (
            D.Categorical(logits=_t([[0.1, 2.0, -1.0]])),
            td.Categorical(logits=torch.tensor([[0.1, 2.0, -1.0]], **f64)),
            np.array([2]),
        ),
        (
            D.Uniform(_t([0.0]), _t([3.0])),
            td.Uniform(torch.tensor([0.0], **f64), torch.tensor([3.0], **f64)),
            np.array([1.0]),
        ),
        (
            D.MultivariateNormal(_t([1.0, 0.0]), precision_matrix=_t(cov)),
            td.MultivariateNormal(
                torch.tensor([1.0, 0.0], **f64), precision_matrix=torch.tensor(cov)
            ),
            np.array([0.3, -0.2]),
        ),
    ]


def test_values_match_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs, x in _torch_pairs(torch):
        name = type(ours).__name__
        value = x.astype(np.int64) if name == "Categorical" else x
        np.testing.assert_allclose(
            _np(ours.log_prob(ct.tensor(value))),
            theirs.log_prob(torch.tensor(value)).numpy(),
            rtol=1e-12,
            err_msg=name,
        )
        np.testing.assert_allclose(
            _np(ours.entropy()), theirs.entropy().numpy(), rtol=1e-12, err_msg=name
        )
        for attr in ("mean", "variance", "mode"):
            np.testing.assert_allclose(
                _np(getattr(ours, attr)).astype(np.float64),
                getattr(theirs, attr).numpy().astype(np.float64),
                rtol=1e-12,
                err_msg=f"{name}.{attr}",
            )
        assert set(ours.arg_constraints) == set(theirs.arg_constraints), name
        assert repr(ours.support).replace("coretorch.", "torch.") == repr(theirs.support), name
        assert ours.has_rsample == theirs.has_rsample, name
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape), name
