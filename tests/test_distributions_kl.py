"""kl_divergence: each registered pair against numerical integration (scipy.integrate.quad of
p log(p/q) with scipy.stats densities) or a closed form written in numpy, infinite pairs,
the register_kl dispatch, and the values PyTorch gives when it is installed."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.integrate
import scipy.stats as st

import coretorch as ct
import coretorch.distributions as D
from coretorch.autograd import gradcheck
from coretorch.distributions import kl as kl_module


def _t(a, requires_grad=False):
    return ct.tensor(np.asarray(a, dtype=np.float64), dtype=ct.float64, requires_grad=requires_grad)


def _kl_quad(p, q, lo, hi) -> float:
    """∫ p log(p / q) over [lo, hi] for frozen scipy distributions."""

    def f(x):
        lp = p.logpdf(x)
        return 0.0 if lp == -np.inf else math.exp(lp) * (lp - q.logpdf(x))

    value, _ = scipy.integrate.quad(f, lo, hi, limit=200, epsabs=1e-12, epsrel=1e-10)
    return value


# (name, coretorch p, coretorch q, scipy p, scipy q, integration range)
CONTINUOUS = [
    (
        "normal-normal",
        D.Normal(_t(0.3), _t(1.2)),
        D.Normal(_t(-1.0), _t(0.7)),
        st.norm(0.3, 1.2),
        st.norm(-1.0, 0.7),
        (-np.inf, np.inf),
    ),
    (
        "gamma-gamma",
        D.Gamma(_t(2.5), _t(1.5)),
        D.Gamma(_t(0.8), _t(0.4)),
        st.gamma(2.5, scale=1 / 1.5),
        st.gamma(0.8, scale=1 / 0.4),
        (0, np.inf),
    ),
    (
        "beta-beta",
        D.Beta(_t(2.0), _t(3.5)),
        D.Beta(_t(0.7), _t(1.3)),
        st.beta(2.0, 3.5),
        st.beta(0.7, 1.3),
        (0, 1),
    ),
    (
        "uniform-uniform",
        D.Uniform(_t(0.5), _t(1.5)),
        D.Uniform(_t(0.0), _t(4.0)),
        st.uniform(0.5, 1.0),
        st.uniform(0.0, 4.0),
        (0.5, 1.5),
    ),
    (
        "uniform-normal",
        D.Uniform(_t(-1.0), _t(2.0)),
        D.Normal(_t(0.5), _t(2.0)),
        st.uniform(-1.0, 3.0),
        st.norm(0.5, 2.0),
        (-1.0, 2.0),
    ),
    (
        "uniform-gamma",
        D.Uniform(_t(0.5), _t(2.0)),
        D.Gamma(_t(2.0), _t(1.3)),
        st.uniform(0.5, 1.5),
        st.gamma(2.0, scale=1 / 1.3),
        (0.5, 2.0),
    ),
    (
        "uniform-beta",
        D.Uniform(_t(0.2), _t(0.9)),
        D.Beta(_t(1.5), _t(2.5)),
        st.uniform(0.2, 0.7),
        st.beta(1.5, 2.5),
        (0.2, 0.9),
    ),
    (
        "beta-normal",
        D.Beta(_t(2.0), _t(3.0)),
        D.Normal(_t(0.4), _t(0.5)),
        st.beta(2.0, 3.0),
        st.norm(0.4, 0.5),
        (0, 1),
    ),
    (
        "beta-gamma",
        D.Beta(_t(2.0), _t(3.0)),
        D.Gamma(_t(1.5), _t(2.0)),
        st.beta(2.0, 3.0),
        st.gamma(1.5, scale=0.5),
        (0, 1),
    ),
    (
        "beta-uniform",
        D.Beta(_t(2.0), _t(3.0)),
        D.Uniform(_t(-0.5), _t(2.0)),
        st.beta(2.0, 3.0),
        st.uniform(-0.5, 2.5),
        (0, 1),
    ),
    (
        "gamma-normal",
        D.Gamma(_t(3.0), _t(2.0)),
        D.Normal(_t(1.0), _t(1.5)),
        st.gamma(3.0, scale=0.5),
        st.norm(1.0, 1.5),
        (0, np.inf),
    ),
]


@pytest.mark.parametrize("case", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_pairs_match_numerical_integration(case):
    _, p, q, sp, sq, (lo, hi) = case
    np.testing.assert_allclose(
        D.kl_divergence(p, q).item(), _kl_quad(sp, sq, lo, hi), rtol=1e-8, atol=1e-10
    )


INFINITE = [
    (D.Gamma(_t([2.0]), _t([1.0])), D.Beta(_t([2.0]), _t([2.0]))),
    (D.Gamma(_t([2.0]), _t([1.0])), D.Uniform(_t([0.0]), _t([5.0]))),
    (D.Normal(_t([0.0]), _t([1.0])), D.Beta(_t([2.0]), _t([2.0]))),
    (D.Normal(_t([0.0]), _t([1.0])), D.Gamma(_t([2.0]), _t([2.0]))),
    (D.Normal(_t([0.0]), _t([1.0])), D.Uniform(_t([-9.0]), _t([9.0]))),
    (D.Uniform(_t([0.0]), _t([2.0])), D.Uniform(_t([0.5]), _t([3.0]))),
    (D.Uniform(_t([-0.5]), _t([0.5])), D.Beta(_t([2.0]), _t([2.0]))),
    (D.Uniform(_t([-0.5]), _t([0.5])), D.Gamma(_t([2.0]), _t([2.0]))),
    (D.Beta(_t([2.0]), _t([2.0])), D.Uniform(_t([0.1]), _t([2.0]))),
]


@pytest.mark.parametrize(
    "p,q",
    INFINITE,
    ids=[f"{type(p).__name__}-{type(q).__name__}-{i}" for i, (p, q) in enumerate(INFINITE)],
)
def test_pairs_with_disjoint_supports_are_infinite(p, q):
    assert D.kl_divergence(p, q).tolist() == [math.inf]


def test_discrete_pairs_match_numpy():
    p, q = np.array([0.1, 0.0, 0.6, 0.3]), np.array([0.25, 0.25, 0.25, 0.25])
    expected = np.sum(p[p > 0] * np.log(p[p > 0] / q[p > 0]))
    for cls in (D.Categorical, D.OneHotCategorical):
        np.testing.assert_allclose(
            D.kl_divergence(cls(_t(p)), cls(_t(q))).item(), expected, rtol=1e-13
        )
    # q puts no mass where p does: infinite
    assert D.kl_divergence(D.Categorical(_t(q)), D.Categorical(_t(p))).item() == math.inf
    bp, bq = np.array([0.2, 0.0, 1.0, 0.5]), np.array([0.6, 0.3, 0.4, 0.0])
    kl = D.kl_divergence(D.Bernoulli(_t(bp)), D.Bernoulli(_t(bq))).tolist()
    with np.errstate(divide="ignore"):
        ref = [st.entropy([a, 1 - a], [b, 1 - b]) for a, b in zip(bp, bq)]
    np.testing.assert_allclose(kl, ref, rtol=1e-10)
    assert kl[3] == math.inf


def test_multivariate_normal_pair_matches_the_closed_form():
    rng = np.random.default_rng(8)

    def spd(n):
        b = rng.standard_normal((n, n))
        return b @ b.T + n * np.eye(n)

    cp, cq = [spd(3) for _ in range(2)], [spd(3) for _ in range(2)]
    mp, mq = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    p = D.MultivariateNormal(_t(mp), covariance_matrix=_t(np.stack(cp)))
    q = D.MultivariateNormal(_t(mq), precision_matrix=_t(np.linalg.inv(np.stack(cq))))
    kl = D.kl_divergence(p, q).tolist()
    for i in range(2):
        inv = np.linalg.inv(cq[i])
        d = mq[i] - mp[i]
        ref = 0.5 * (
            np.trace(inv @ cp[i])
            + d @ inv @ d
            - 3
            + np.log(np.linalg.det(cq[i]) / np.linalg.det(cp[i]))
        )
        np.testing.assert_allclose(kl[i], ref, rtol=1e-11)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(
            p, D.MultivariateNormal(ct.zeros(2, dtype=ct.float64), scale_tril=_t(np.eye(2)))
        )


def test_bregman_divergence_of_exponential_families():
    # the generic exponential-family formula agrees with the closed forms
    for p, q in (
        (D.Normal(_t([0.3]), _t([1.2])), D.Normal(_t([-1.0]), _t([0.7]))),
        (D.Gamma(_t([2.5]), _t([1.5])), D.Gamma(_t([0.8]), _t([0.4]))),
        (D.Beta(_t([2.0]), _t([3.5])), D.Beta(_t([0.7]), _t([1.3]))),
    ):
        np.testing.assert_allclose(
            kl_module._kl_expfamily_expfamily(p, q).tolist(),
            D.kl_divergence(p, q).tolist(),
            rtol=1e-10,
        )
    with pytest.raises(NotImplementedError, match="different exponential families"):
        kl_module._kl_expfamily_expfamily(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))


def test_kl_gradients_match_finite_differences():
    assert gradcheck(
        lambda a, b: D.kl_divergence(D.Gamma(a, b), D.Gamma(_t([1.2]), _t([0.8]))),
        (_t([2.0], True), _t([1.5], True)),
    )
    assert gradcheck(
        lambda a, b: D.kl_divergence(D.Beta(_t([2.0]), _t([1.0])), D.Beta(a, b)),
        (_t([0.5], True), _t([3.0], True)),
    )


class _MyNormal(D.Normal):
    pass


class _MyGamma(D.Gamma):
    pass


def test_register_kl_dispatches_to_the_most_specific_pair():
    try:

        @D.register_kl(_MyNormal, D.Normal)
        def _special_kl(p, q):
            return ct.zeros(()) + 42.0

        assert D.kl_divergence(_MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
        assert D.kl_divergence(_MyNormal(0.0, 1.0), _MyNormal(0.0, 1.0)).item() == 42.0
        assert D.kl_divergence(D.Normal(0.0, 1.0), _MyNormal(0.0, 2.0)).item() == pytest.approx(
            0.5 * (0.25 - 1 - math.log(0.25))
        )

        @D.register_kl(D.Normal, _MyNormal)
        def _other_kl(p, q):
            return ct.zeros(())

        with pytest.warns(
            RuntimeWarning, match="Ambiguous kl_divergence\\(_MyNormal, _MyNormal\\)"
        ):
            D.kl_divergence(_MyNormal(0.0, 1.0), _MyNormal(0.0, 1.0))
    finally:
        kl_module._KL_REGISTRY.pop((_MyNormal, D.Normal), None)
        kl_module._KL_REGISTRY.pop((D.Normal, _MyNormal), None)
        kl_module._KL_MEMOIZE.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert D.kl_divergence(_MyGamma(1.0, 1.0), D.Gamma(2.0, 1.0)).item() > 0
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Categorical and q type Normal",
    ):
        D.kl_divergence(D.Categorical(_t([0.5, 0.5])), D.Normal(0.0, 1.0))
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_values_match_torch():
    torch = pytest.importorskip("torch")
    td = torch.distributions

    def to_torch(d):
        params = {
            k: torch.tensor(v.detach().numpy())
            for k, v in d.__dict__.items()
            if k in d.arg_constraints and hasattr(v, "numpy")
        }
        return getattr(td, type(d).__name__)(**params)

    for name, p, q, *_ in CONTINUOUS:
        np.testing.assert_allclose(
            D.kl_divergence(p, q).item(),
            td.kl_divergence(to_torch(p), to_torch(q)).item(),
            rtol=1e-12,
            err_msg=name,
        )
    for p, q in INFINITE:
        assert td.kl_divergence(to_torch(p), to_torch(q)).tolist() == [math.inf]
