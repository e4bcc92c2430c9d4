"""The location-scale, discrete, gamma-family, transformed, relaxed and mixture distributions:
densities, entropies and moments against scipy.stats and PyTorch (each skipped when missing),
sample moments, reparameterized gradients, KL divergences and argument validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.distributions as D

RNG = np.random.default_rng(3)


def _t(a):
    return ct.tensor(np.asarray(a, dtype=np.float64))


CASES = {
    "Exponential": (lambda m: m.Exponential(_tt(m, [0.5, 2.0])), [[0.3, 1.7], [2.5, 0.1]]),
    "Laplace": (lambda m: m.Laplace(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])), [[-1.0, 1.2]]),
    "Cauchy": (lambda m: m.Cauchy(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])), [[-1.0, 3.2]]),
    "Gumbel": (lambda m: m.Gumbel(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])), [[-1.0, 1.2]]),
    "LogNormal": (lambda m: m.LogNormal(_tt(m, [0.0, 1.0]), _tt(m, [0.5, 0.8])), [[0.4, 2.2]]),
    "StudentT": (
        lambda m: m.StudentT(_tt(m, [3.0, 5.5]), _tt(m, [0.0, 1.0]), _tt(m, [1.0, 2.0])),
        [[0.4, -2.2]],
    ),
    "Chi2": (lambda m: m.Chi2(_tt(m, [3.0, 5.5])), [[0.4, 2.2]]),
    "Poisson": (lambda m: m.Poisson(_tt(m, [0.5, 4.0])), [[0.0, 3.0], [2.0, 7.0]]),
    "Binomial": (lambda m: m.Binomial(_tt(m, [5.0, 5.0]), _tt(m, [0.3, 0.8])), [[0.0, 4.0]]),
    "BinomialLogits": (lambda m: m.Binomial(7, logits=_tt(m, [-1.0, 2.0])), [[3.0, 7.0]]),
    "Geometric": (lambda m: m.Geometric(_tt(m, [0.3, 0.8])), [[0.0, 4.0]]),
    "Dirichlet": (
        lambda m: m.Dirichlet(_tt(m, [[0.5, 2.0, 3.0], [1.0, 1.0, 4.0]])),
        [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]],
    ),
    "Independent": (
        lambda m: m.Independent(m.Normal(_tt(m, [[0.0, 1.0]]), _tt(m, [[1.0, 2.0]])), 1),
        [[[0.3, -1.0]]],
    ),
    "RelaxedBernoulli": (
        lambda m: m.RelaxedBernoulli(_tt(m, 0.7), _tt(m, [0.3, 0.6])),
        [[0.2, 0.9]],
    ),
    "RelaxedOneHotCategorical": (
        lambda m: m.RelaxedOneHotCategorical(_tt(m, 0.7), _tt(m, [0.2, 0.3, 0.5])),
        [[0.1, 0.6, 0.3]],
    ),
    "HalfNormal": (lambda m: m.HalfNormal(_tt(m, [0.5, 2.0])), [[0.3, 1.7]]),
    "HalfCauchy": (lambda m: m.HalfCauchy(_tt(m, [0.5, 2.0])), [[0.3, 1.7]]),
    "Pareto": (lambda m: m.Pareto(_tt(m, [0.5, 1.0]), _tt(m, [3.0, 1.5])), [[0.7, 2.5]]),
    "Weibull": (lambda m: m.Weibull(_tt(m, [0.5, 2.0]), _tt(m, [1.5, 3.0])), [[0.3, 1.7]]),
    "InverseGamma": (
        lambda m: m.InverseGamma(_tt(m, [2.5, 3.5]), _tt(m, [1.0, 2.0])),
        [[0.3, 1.7]],
    ),
    "Kumaraswamy": (lambda m: m.Kumaraswamy(_tt(m, [2.0, 3.0]), _tt(m, [1.5, 4.0])), [[0.3, 0.7]]),
    "FisherSnedecor": (
        lambda m: m.FisherSnedecor(_tt(m, [3.0, 6.0]), _tt(m, [5.0, 9.0])),
        [[0.3, 1.7]],
    ),
    "NegativeBinomial": (
        lambda m: m.NegativeBinomial(_tt(m, [3.0, 5.5]), _tt(m, [0.3, 0.6])),
        [[0.0, 4.0]],
    ),
    "Multinomial": (lambda m: m.Multinomial(6, _tt(m, [0.2, 0.3, 0.5])), [[1.0, 2.0, 3.0]]),
    "ContinuousBernoulli": (
        lambda m: m.ContinuousBernoulli(_tt(m, [0.2, 0.4995, 0.8])),
        [[0.3, 0.6, 0.9]],
    ),
    "ContinuousBernoulliLogits": (
        lambda m: m.ContinuousBernoulli(logits=_tt(m, [-1.0, 2.0])),
        [[0.3, 0.6]],
    ),
    "LogisticNormal": (
        lambda m: m.LogisticNormal(_tt(m, [0.0, 1.0]), _tt(m, [0.5, 2.0])),
        [[0.2, 0.3, 0.5]],
    ),
    "LowRankMultivariateNormal": (
        lambda m: m.LowRankMultivariateNormal(
            _tt(m, [[0.0, 1.0, -1.0], [0.5, 0.5, 0.5]]),
            _tt(m, [[1.0, 0.3], [0.2, -0.5], [0.7, 0.1]]),
            _tt(m, [0.5, 1.0, 2.0]),
        ),
        [[[0.3, 0.2, -0.4], [1.0, 0.0, 2.0]]],
    ),
    "Wishart": (
        lambda m: m.Wishart(
            _tt(m, [4.0, 6.5]),
            covariance_matrix=_tt(m, [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]]),
        ),
        [[[[3.0, 0.5, 0.2], [0.5, 2.0, 0.1], [0.2, 0.1, 4.0]]]],
    ),
    "WishartPrecision": (
        lambda m: m.Wishart(_tt(m, 5.0), precision_matrix=_tt(m, [[2.0, 0.3], [0.3, 1.0]])),
        [[[1.0, 0.2], [0.2, 0.7]]],
    ),
    "MixtureSameFamily": (
        lambda m: m.MixtureSameFamily(
            m.Categorical(_tt(m, [0.3, 0.7])), m.Normal(_tt(m, [-1.0, 2.0]), _tt(m, [0.5, 1.5]))
        ),
        [[0.3], [-1.2]],
    ),
}
MOMENTS = ("mean", "variance")
NO_ENTROPY = {
    "LogNormal",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "MixtureSameFamily",
    "Independent",
    "Poisson",
    "NegativeBinomial",
    "Multinomial",
    "FisherSnedecor",
    "LogisticNormal",
}
NO_MOMENTS = {"RelaxedBernoulli", "RelaxedOneHotCategorical", "HalfCauchy", "LogisticNormal"}


def _tt(module, v):
    """A float64 tensor of `module` (coretorch or torch)."""
    return module.tensor(v, dtype=module.float64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    build, values = CASES[name]
    ours_d = build(_Namespace(D, ct))
    theirs_d = build(_Namespace(torch.distributions, torch))
    assert tuple(ours_d.batch_shape) == tuple(theirs_d.batch_shape)
    assert tuple(ours_d.event_shape) == tuple(theirs_d.event_shape)
    for v in values:
        np.testing.assert_allclose(
            ours_d.log_prob(_t(v)).numpy(),
            theirs_d.log_prob(torch.tensor(v, dtype=torch.float64)).numpy(),
            rtol=1e-9,
            atol=1e-12,
        )
    if name not in NO_ENTROPY:
        np.testing.assert_allclose(ours_d.entropy().numpy(), theirs_d.entropy().numpy(), rtol=1e-9)
    if name not in NO_MOMENTS:
        for attr in MOMENTS:
            np.testing.assert_allclose(
                getattr(ours_d, attr).numpy(), getattr(theirs_d, attr).numpy(), rtol=1e-9
            )
    s = ours_d.sample((4,))
    assert tuple(s.shape) == (4,) + tuple(theirs_d.batch_shape) + tuple(theirs_d.event_shape)
    expanded = ours_d.expand((3,) + tuple(ours_d.batch_shape))
    assert tuple(expanded.batch_shape) == (3,) + tuple(theirs_d.batch_shape)


class _Namespace:
    """`dists` with `tensor`/`float64` of `lib` so CASES build coretorch or torch objects."""

    def __init__(self, dists, lib):
        self._d, self.tensor, self.float64 = dists, lib.tensor, lib.float64

    def __getattr__(self, name):
        return getattr(self._d, name)


SCIPY = [
    (
        "Exponential",
        lambda: D.Exponential(_t([0.5, 2.0])),
        lambda st: st.expon(scale=[2.0, 0.5]),
        [0.3, 1.7],
    ),
    (
        "Laplace",
        lambda: D.Laplace(_t([0.0, 1.0]), _t([2.0, 0.5])),
        lambda st: st.laplace([0.0, 1.0], [2.0, 0.5]),
        [-1.0, 1.2],
    ),
    (
        "Cauchy",
        lambda: D.Cauchy(_t([0.0, 1.0]), _t([2.0, 0.5])),
        lambda st: st.cauchy([0.0, 1.0], [2.0, 0.5]),
        [-1.0, 3.2],
    ),
    (
        "Gumbel",
        lambda: D.Gumbel(_t([0.0, 1.0]), _t([2.0, 0.5])),
        lambda st: st.gumbel_r([0.0, 1.0], [2.0, 0.5]),
        [-1.0, 1.2],
    ),
    (
        "LogNormal",
        lambda: D.LogNormal(_t([0.0, 1.0]), _t([0.5, 0.8])),
        lambda st: st.lognorm([0.5, 0.8], scale=np.exp([0.0, 1.0])),
        [0.4, 2.2],
    ),
    (
        "StudentT",
        lambda: D.StudentT(_t([3.0, 5.5]), _t([0.0, 1.0]), _t([1.0, 2.0])),
        lambda st: st.t([3.0, 5.5], [0.0, 1.0], [1.0, 2.0]),
        [0.4, -2.2],
    ),
    ("Chi2", lambda: D.Chi2(_t([3.0, 5.5])), lambda st: st.chi2([3.0, 5.5]), [0.4, 2.2]),
    ("Poisson", lambda: D.Poisson(_t([0.5, 4.0])), lambda st: st.poisson([0.5, 4.0]), [0.0, 3.0]),
    (
        "Binomial",
        lambda: D.Binomial(_t([5.0, 9.0]), _t([0.3, 0.8])),
        lambda st: st.binom([5, 9], [0.3, 0.8]),
        [2.0, 7.0],
    ),
    (
        "Geometric",
        lambda: D.Geometric(_t([0.3, 0.8])),
        lambda st: st.geom([0.3, 0.8], loc=-1),
        [0.0, 4.0],
    ),
]


@pytest.mark.parametrize("name,ours,ref,values", SCIPY, ids=[c[0] for c in SCIPY])
def test_matches_scipy(name, ours, ref, values):
    st = pytest.importorskip("scipy.stats")
    d, r = ours(), ref(st)
    discrete = name in ("Poisson", "Binomial", "Geometric")
    want = r.logpmf(values) if discrete else r.logpdf(values)
    np.testing.assert_allclose(d.log_prob(_t(values)).numpy(), want, rtol=1e-9)
    if name != "Cauchy":
        np.testing.assert_allclose(d.mean.numpy(), r.mean(), rtol=1e-9)
        np.testing.assert_allclose(d.variance.numpy(), r.var(), rtol=1e-9)
    if name not in ("LogNormal", "Binomial", "Poisson"):
        np.testing.assert_allclose(d.entropy().numpy(), r.entropy(), rtol=1e-7)


@pytest.mark.parametrize("name,ours,ref,values", SCIPY, ids=[c[0] for c in SCIPY])
def test_sample_moments(name, ours, ref, values):
    ct.manual_seed(0)
    d = ours()
    s = d.sample((20000,)).numpy()
    if name == "Cauchy":
        np.testing.assert_allclose(np.median(s, 0), d.loc.numpy(), atol=0.1)
        return
    np.testing.assert_allclose(s.mean(0), d.mean.numpy(), rtol=0.06, atol=0.03)
    if name in ("Poisson", "Binomial", "Geometric"):
        assert (s == np.round(s)).all() and (s >= 0).all()


def test_dirichlet_samples_and_rsample_gradients():
    ct.manual_seed(1)
    conc = _t([0.5, 2.0, 3.0]).requires_grad_()
    d = D.Dirichlet(conc)
    s = d.rsample((4000,))
    np.testing.assert_allclose(s.sum(-1).detach().numpy(), 1.0, rtol=1e-9)
    np.testing.assert_allclose(s.mean(0).detach().numpy(), d.mean.detach().numpy(), atol=0.02)
    s[:, 0].mean().backward()
    assert conc.grad is not None and np.isfinite(conc.grad.numpy()).all()


@pytest.mark.parametrize(
    "make",
    [
        lambda p: D.Exponential(p),
        lambda p: D.Laplace(p, p),
        lambda p: D.Cauchy(p, p),
        lambda p: D.Gumbel(p, p),
        lambda p: D.LogNormal(p, p),
        lambda p: D.StudentT(p + 2, p, p),
        lambda p: D.RelaxedBernoulli(p, probs=p / 2),
        lambda p: D.RelaxedOneHotCategorical(p[0], probs=p / p.sum()),
    ],
)
def test_rsample_is_differentiable(make):
    p = _t([0.7, 1.3]).requires_grad_()
    d = make(p)
    assert d.has_rsample
    d.rsample((5,)).sum().backward()
    assert p.grad is not None and np.isfinite(p.grad.numpy()).all()


KL_PAIRS = [
    (
        "Exponential",
        lambda m: (m.Exponential(_tt(m, [0.5, 2.0])), m.Exponential(_tt(m, [1.5, 0.2]))),
    ),
    (
        "Laplace",
        lambda m: (
            m.Laplace(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])),
            m.Laplace(_tt(m, [0.4, -1.0]), _tt(m, [1.0, 1.5])),
        ),
    ),
    (
        "Gumbel",
        lambda m: (
            m.Gumbel(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])),
            m.Gumbel(_tt(m, [0.4, -1.0]), _tt(m, [1.0, 1.5])),
        ),
    ),
    ("Poisson", lambda m: (m.Poisson(_tt(m, [0.5, 4.0])), m.Poisson(_tt(m, [1.5, 2.0])))),
    ("Geometric", lambda m: (m.Geometric(_tt(m, [0.3, 0.8])), m.Geometric(_tt(m, [0.5, 0.4])))),
    ("Binomial", lambda m: (m.Binomial(5, _tt(m, [0.3, 0.8])), m.Binomial(5, _tt(m, [0.5, 0.4])))),
    (
        "Dirichlet",
        lambda m: (m.Dirichlet(_tt(m, [0.5, 2.0, 3.0])), m.Dirichlet(_tt(m, [1.0, 1.0, 4.0]))),
    ),
    (
        "Exponential-Normal",
        lambda m: (
            m.Exponential(_tt(m, [0.5, 2.0])),
            m.Normal(_tt(m, [0.0, 1.0]), _tt(m, [1.0, 2.0])),
        ),
    ),
    (
        "Laplace-Normal",
        lambda m: (
            m.Laplace(_tt(m, [0.0, 1.0]), _tt(m, [2.0, 0.5])),
            m.Normal(_tt(m, [0.0, 1.0]), _tt(m, [1.0, 2.0])),
        ),
    ),
    (
        "Independent",
        lambda m: (
            m.Independent(m.Normal(_tt(m, [0.0, 1.0]), _tt(m, [1.0, 2.0])), 1),
            m.Independent(m.Normal(_tt(m, [1.0, 1.0]), _tt(m, [2.0, 2.0])), 1),
        ),
    ),
    (
        "LogNormal",
        lambda m: (
            m.LogNormal(_tt(m, [0.0, 1.0]), _tt(m, [1.0, 2.0])),
            m.LogNormal(_tt(m, [1.0, 1.0]), _tt(m, [2.0, 2.0])),
        ),
    ),
]


@pytest.mark.parametrize("name,build", KL_PAIRS, ids=[c[0] for c in KL_PAIRS])
def test_kl_divergence_matches_torch(name, build):
    torch = pytest.importorskip("torch")
    p, q = build(_Namespace(D, ct))
    tp, tq = build(_Namespace(torch.distributions, torch))
    np.testing.assert_allclose(
        D.kl_divergence(p, q).numpy(), torch.distributions.kl_divergence(tp, tq).numpy(), rtol=1e-9
    )


def test_transforms_round_trip_and_jacobians():
    x = _t([-1.5, 0.2, 2.0])
    for t in (
        D.ExpTransform(),
        D.SigmoidTransform(),
        D.TanhTransform(),
        D.AffineTransform(1.0, -2.0),
        D.ComposeTransform([D.AffineTransform(0.5, 3.0), D.ExpTransform()]),
    ):
        y = t(x)
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-12)
        # log |dy/dx| by central differences
        h = 1e-6
        num = np.log(np.abs((t(x + h).numpy() - t(x - h).numpy()) / (2 * h)))
        np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).numpy(), num, rtol=1e-5)
    assert D.identity_transform(x) is x
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform().inv.inv == D.ExpTransform()


def test_transformed_distribution_of_affine_normal_is_normal():
    base = D.Normal(_t([0.0, 1.0]), _t([1.0, 2.0]))
    td = D.TransformedDistribution(base, [D.AffineTransform(3.0, 2.0)])
    direct = D.Normal(_t([3.0, 5.0]), _t([2.0, 4.0]))
    v = _t([0.3, 4.0])
    np.testing.assert_allclose(td.log_prob(v).numpy(), direct.log_prob(v).numpy(), rtol=1e-12)
    np.testing.assert_allclose(td.cdf(v).numpy(), direct.cdf(v).numpy(), rtol=1e-12)


def test_mixture_moments_and_samples():
    ct.manual_seed(2)
    mix = D.MixtureSameFamily(
        D.Categorical(_t([0.3, 0.7])), D.Normal(_t([-1.0, 2.0]), _t([0.5, 1.5]))
    )
    s = mix.sample((20000,)).numpy()
    np.testing.assert_allclose(s.mean(), float(mix.mean), atol=0.05)
    np.testing.assert_allclose(s.var(), float(mix.variance), rtol=0.05)
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(
            D.Categorical(_t([0.3, 0.7])), D.Normal(_t([0.0, 1.0, 2.0]), _t([1.0, 1.0, 1.0]))
        )


def test_multinomial_and_negative_binomial_samples():
    ct.manual_seed(4)
    m = D.Multinomial(10, _t([0.2, 0.3, 0.5]))
    s = m.sample((3000,)).numpy()
    assert (s.sum(-1) == 10).all()
    np.testing.assert_allclose(s.mean(0), [2.0, 3.0, 5.0], atol=0.15)
    nb = D.NegativeBinomial(_t([3.0]), _t([0.4]))
    s = nb.sample((20000,)).numpy()
    np.testing.assert_allclose(s.mean(), float(nb.mean), rtol=0.05)


def test_argument_validation():
    with pytest.raises(ValueError, match="rate"):
        D.Exponential(_t([-1.0]))
    with pytest.raises(ValueError, match="scale"):
        D.Laplace(_t([0.0]), _t([0.0]))
    with pytest.raises(ValueError, match="be positive"):
        D.Geometric(_t([0.0, 0.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Binomial(3)
    with pytest.raises(ValueError, match="support"):
        D.Poisson(_t([1.0])).log_prob(_t([1.5]))
    with pytest.raises(ValueError, match="concentration"):
        D.Dirichlet(_t([1.0, -1.0]))
    with pytest.raises(ValueError, match="transforms must be a Transform"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    assert math.isnan(float(D.StudentT(_t(1.0)).mean))


def test_more_transforms_round_trip_and_jacobians():
    x = ct.tensor(RNG.standard_normal((3, 4)))
    cases = [
        D.SoftplusTransform(),
        D.StickBreakingTransform(),
        D.ReshapeTransform((4,), (2, 2)),
        D.IndependentTransform(D.SoftplusTransform(), 1),
        D.CatTransform([D.SoftplusTransform(), D.ExpTransform()], dim=1, lengths=[1, 3]),
        D.StackTransform([D.SoftplusTransform(), D.ExpTransform()] * 2, dim=1),
        D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)),
    ]
    for t in cases:
        y = t(x)
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-12)
    simplex = D.StickBreakingTransform()(x)
    np.testing.assert_allclose(simplex.sum(-1).numpy(), 1.0, rtol=1e-12)
    h = 1e-6
    for t in (D.SoftplusTransform(), D.CumulativeDistributionTransform(D.Normal(0.0, 1.0))):
        num = np.log(np.abs((t(x + h).numpy() - t(x - h).numpy()) / (2 * h)))
        np.testing.assert_allclose(t.log_abs_det_jacobian(x, t(x)).numpy(), num, rtol=1e-5)
    lower = D.LowerCholeskyTransform()(ct.tensor(RNG.standard_normal((2, 3, 3))))
    assert bool(D.constraints.lower_cholesky.check(lower).all())
    pd = D.PositiveDefiniteTransform()(ct.tensor(RNG.standard_normal((3, 3))))
    assert bool(D.constraints.positive_definite.check(pd))


def test_stick_breaking_matches_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 4))
    ours, theirs = D.StickBreakingTransform(), torch.distributions.StickBreakingTransform()
    y, ty = ours(ct.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        ours.log_abs_det_jacobian(ct.tensor(x), y).numpy(),
        theirs.log_abs_det_jacobian(torch.tensor(x), ty).numpy(),
        rtol=1e-10,
    )


def test_biject_to_and_transform_to():
    C = D.constraints
    x = ct.tensor(RNG.standard_normal((5, 3)))
    for c in (
        C.real,
        C.positive,
        C.greater_than(2.0),
        C.less_than(1.0),
        C.interval(-1.0, 3.0),
        C.unit_interval,
        C.simplex,
        C.independent(C.positive, 1),
    ):
        for registry in (D.biject_to, D.transform_to):
            t = registry(c)
            y = t(x)
            assert bool(c.check(y).all()), (c, t)
            if registry is D.biject_to:
                np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-8, atol=1e-10)
    assert isinstance(D.transform_to(C.simplex), D.SoftmaxTransform)
    assert isinstance(D.biject_to(C.simplex), D.StickBreakingTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.biject_to(C.boolean)


def test_von_mises_against_scipy_and_samples():
    st = pytest.importorskip("scipy.stats")
    loc, kappa = np.array([0.5, -2.0, 1.0]), np.array([0.3, 4.0, 200.0])
    d = D.VonMises(_t(loc), _t(kappa))
    v = np.array([0.1, -1.5, 1.02])
    np.testing.assert_allclose(
        d.log_prob(_t(v)).numpy(), st.vonmises(kappa, loc).logpdf(v), rtol=1e-9
    )
    ct.manual_seed(5)
    s = d.sample((20000,)).numpy()
    assert (np.abs(s) <= np.pi).all()
    mean_dir = np.angle(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(mean_dir[1:], loc[1:], atol=0.03)
    resultant = np.abs(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(1 - resultant, d.variance.numpy(), atol=0.02)


def test_generalized_pareto_against_scipy_and_torch():
    st = pytest.importorskip("scipy.stats")
    loc, scale, conc = [0.1, 0.0, 1.0], [2.0, 1.0, 0.5], [0.4, 0.0, -0.3]
    d = D.GeneralizedPareto(_t(loc), _t(scale), _t(conc))
    ref = st.genpareto(conc, loc, scale)
    v = np.array([0.5, 1.3, 1.2])
    np.testing.assert_allclose(d.log_prob(_t(v)).numpy(), ref.logpdf(v), rtol=1e-9)
    np.testing.assert_allclose(d.cdf(_t(v)).numpy(), ref.cdf(v), rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-9)
    np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-9)
    np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-9)
    torch = pytest.importorskip("torch")
    # PyTorch's GeneralizedPareto only runs in float32 (its isclose mixes dtypes)
    f32 = D.GeneralizedPareto(ct.tensor(loc), ct.tensor(scale), ct.tensor(conc))
    theirs = torch.distributions.GeneralizedPareto(
        torch.tensor(loc), torch.tensor(scale), torch.tensor(conc)
    )
    v32 = v.astype(np.float32)
    np.testing.assert_allclose(
        f32.log_prob(ct.tensor(v32)).numpy(), theirs.log_prob(torch.tensor(v32)).numpy(), rtol=1e-5
    )
    np.testing.assert_allclose(
        f32.icdf(ct.tensor([0.2, 0.5, 0.9])).numpy(),
        theirs.icdf(torch.tensor([0.2, 0.5, 0.9])).numpy(),
        rtol=1e-5,
    )


def test_lowrank_mvn_matches_full_mvn_and_torch_matrices():
    loc = _t([[0.0, 1.0, -1.0]])
    W = _t([[1.0, 0.3], [0.2, -0.5], [0.7, 0.1]])
    Dg = _t([0.5, 1.0, 2.0])
    low = D.LowRankMultivariateNormal(loc, W, Dg)
    full = D.MultivariateNormal(loc, covariance_matrix=low.covariance_matrix)
    v = _t([[0.3, 0.2, -0.4]])
    np.testing.assert_allclose(low.log_prob(v).numpy(), full.log_prob(v).numpy(), rtol=1e-10)
    np.testing.assert_allclose(low.entropy().numpy(), full.entropy().numpy(), rtol=1e-10)
    st = low.scale_tril.numpy()
    np.testing.assert_allclose(
        st @ np.swapaxes(st, -1, -2), low.covariance_matrix.numpy(), rtol=1e-10
    )
    ct.manual_seed(6)
    s = low.sample((20000,)).numpy()
    np.testing.assert_allclose(np.cov(s[:, 0].T), low.covariance_matrix.numpy()[0], atol=0.08)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(loc, _t([[1.0], [2.0]]), Dg)


def test_corr_cholesky_transform_and_lkj_match_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 6))
    ours, theirs = D.CorrCholeskyTransform(), torch.distributions.CorrCholeskyTransform()
    y, ty = ours(ct.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.inv(y).numpy(), x, rtol=1e-9)
    np.testing.assert_allclose(
        ours.log_abs_det_jacobian(ct.tensor(x), y).numpy(),
        theirs.log_abs_det_jacobian(torch.tensor(x), ty).numpy(),
        rtol=1e-10,
    )
    assert bool(D.constraints.corr_cholesky.check(y).all())
    lkj, tlkj = (
        D.LKJCholesky(4, _t([0.5, 2.0])),
        torch.distributions.LKJCholesky(4, torch.tensor([0.5, 2.0], dtype=torch.float64)),
    )
    v = ty[:1].expand(2, 4, 4)
    np.testing.assert_allclose(
        lkj.log_prob(ct.tensor(v.numpy())).numpy(), tlkj.log_prob(v).numpy(), rtol=1e-10
    )
    ct.manual_seed(7)
    s = lkj.sample((200,))
    assert tuple(s.shape) == (200, 2, 4, 4)
    assert bool(D.constraints.corr_cholesky.check(s).all())
    corr = (s @ s.transpose(-2, -1)).numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-9)
    assert isinstance(D.biject_to(D.constraints.corr_cholesky), D.CorrCholeskyTransform)


def test_wishart_samples_and_rsample_gradient():
    ct.manual_seed(8)
    cov = _t([[2.0, 0.3], [0.3, 1.0]])
    w = D.Wishart(_t(5.0), covariance_matrix=cov)
    s = w.sample((20000,))
    assert bool(D.constraints.positive_definite.check(s).all())
    np.testing.assert_allclose(s.numpy().mean(0), w.mean.numpy(), rtol=0.05, atol=0.05)
    df = _t(5.0).requires_grad_()
    D.Wishart(df, covariance_matrix=cov).rsample((3,)).sum().backward()
    assert df.grad is not None and np.isfinite(df.grad.numpy())
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1"):
        D.Wishart(_t(0.5), covariance_matrix=cov)
