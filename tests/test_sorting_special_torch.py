"""Sorting, searching, scans and special functions against PyTorch where the OpInfo samples do not
reach: ties, NaN and signed zeros, unsorted search sequences, bin edges, gradients at the edges
of a function's domain, and the torch.special namespace."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _pair(values, dtype="float64"):
    return ct.tensor(values, dtype=getattr(ct, dtype)), torch.tensor(
        values, dtype=getattr(torch, dtype)
    )


def _same(a, b, **kw):
    """coretorch result(s) `a` equal torch result(s) `b` (NaN equal to NaN, dtypes too)."""
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, **kw)
        return
    want = b.detach().numpy()
    got = np.asarray(a.detach())
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, equal_nan=True, **kw)


def _grads_match(fn, data, **tol):
    """``fn(module, x).sum()`` differentiated at `data` gives the same gradient in coretorch
    (module ct) as in PyTorch (module torch)."""
    c = ct.tensor(data, dtype=ct.float64, requires_grad=True)
    t = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    fn(ct, c).sum().backward()
    fn(torch, t).sum().backward()
    _same(c.grad, t.grad, **tol)


# ---- sorting and order statistics ----------------------------------------------------------------

TIES = [
    [2.0, NAN, -0.0, 1.0, 0.0, NAN, 1.0, -INF, 2.0, INF],
    [1.0, 1.0, 1.0, NAN, 0.5, 0.5, -1.0, -0.0, 0.0, 3.0],
]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_stable_sort_matches_torch_on_ties_nan_and_signed_zeros(descending, dim):
    c, t = _pair(TIES)
    _same(
        ct.sort(c, dim, descending, stable=True),
        torch.sort(t, dim=dim, descending=descending, stable=True),
    )
    _same(c.argsort(dim, descending), t.argsort(dim=dim, descending=descending, stable=True))
    _same(ct.msort(c), torch.msort(t))


def test_topk_and_kthvalue_values_on_ties_and_nan():
    # PyTorch leaves the index of a tie unspecified: the values must match and the indices
    # must point at them
    c, t = _pair(TIES)
    for k in (1, 3, 10):
        for largest in (True, False):
            got = ct.topk(c, k, 1, largest)
            _same(got.values, torch.topk(t, k, 1, largest).values)
            _same(c.gather(1, got.indices), got.values)
            assert all(len(set(r)) == k for r in got.indices.tolist())
    for k in range(1, 11):
        got = ct.kthvalue(c, k, 1)
        _same(got.values, torch.kthvalue(t, k, 1).values)
        _same(c.gather(1, got.indices.unsqueeze(1)).squeeze(1), got.values)


def test_median_nanmedian_mode_with_nan():
    c, t = _pair(TIES)
    _same(ct.median(c), torch.median(t))
    _same(ct.nanmedian(c), torch.nanmedian(t))
    _same(ct.median(c, 1), torch.median(t, 1))  # NaN rows: the first NaN's index
    _same(ct.nanmedian(c, 1).values, torch.nanmedian(t, 1).values)
    # (PyTorch's mode sorts with NaN compared as unordered: its answer there is arbitrary)
    f, tf = _pair(
        [[2.0, -0.0, 1.0, 0.0, 1.0, -INF, 2.0, INF], [1.0, 0.5, 0.5, 3.0, 3.0, 3.0, -1.0, 0.5]]
    )
    _same(ct.mode(f, 1), torch.mode(tf, 1))
    i, ti = _pair([[3, 1, 3, 2, 1, 3, 2, 1], [0, 0, 5, 5, 5, 0, 4, 4]], "int64")
    _same(ct.mode(i, 1), torch.mode(ti, 1))  # the last occurrence
    _same(ct.median(i, 1).values, torch.median(ti, 1).values)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_modes_and_nan(interpolation):
    c, t = _pair(TIES)
    qc, qt = _pair([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    for dim in (None, 1):
        _same(
            ct.quantile(c, qc, dim, interpolation=interpolation),
            torch.quantile(t, qt, dim, interpolation=interpolation),
            rtol=1e-12,
        )
        _same(
            ct.nanquantile(c, qc, dim, True, interpolation=interpolation),
            torch.nanquantile(t, qt, dim, True, interpolation=interpolation),
            rtol=1e-12,
        )
    # halfway ranks: 'nearest' rounds half to even, as torch.round
    h, th = _pair([0.0, 1.0, 2.0, 3.0, 4.0])
    for q in (0.125, 0.375, 0.625):
        _same(
            ct.quantile(h, q, interpolation=interpolation),
            torch.quantile(th, q, interpolation=interpolation),
        )


def test_gradients_of_order_statistics_match_torch():
    data = np.random.default_rng(0).normal(size=(3, 6))
    checks = [
        lambda m, x: x.sort(1, True)[0] * torch_weights(x),
        lambda m, x: x.topk(2, 1)[0] * 3.0,
        lambda m, x: x.kthvalue(2, 1)[0] * 2.0,
        lambda m, x: x.median(1)[0],
        lambda m, x: x.nanmedian(),
        lambda m, x: x.quantile(0.3, 1),
        lambda m, x: x.cummax(1)[0] * torch_weights(x),
        lambda m, x: x.cummin(0)[0] * torch_weights(x),
        lambda m, x: x.logcumsumexp(1) * torch_weights(x),
        lambda m, x: x.mode(1)[0],
    ]
    for fn in checks:
        _grads_match(fn, data, rtol=1e-10, atol=1e-12)


def torch_weights(x):
    """Fixed weights of x's shape on x's own library (so each output gets a distinct gradient)."""
    w = np.arange(1.0, 1.0 + x.numel()).reshape(tuple(x.shape))
    return torch.tensor(w) if isinstance(x, torch.Tensor) else ct.tensor(w)


def test_cummax_cummin_nan_and_ties_match_torch():
    c, t = _pair([[1.0, 3.0, 3.0, NAN, 5.0, NAN, 2.0], [2.0, 2.0, 1.0, 1.0, -INF, 0.0, -INF]])
    for dim in (0, 1):
        _same(ct.cummax(c, dim), torch.cummax(t, dim))
        _same(ct.cummin(c, dim), torch.cummin(t, dim))
    i, ti = _pair([[3, 1, 1, 2, 0, 0], [True, False, True, True, False, False]], "int64")
    _same(ct.cummin(i, 1), torch.cummin(ti, 1))
    _same(ct.cummax(i.bool(), 1), torch.cummax(ti.bool(), 1))


def test_logcumsumexp_infinities_and_wide_range():
    c, t = _pair([[-INF, -INF, 0.0, -1000.0, 1000.0, INF], [NAN, 1.0, -INF, 2.0, 3.0, 4.0]])
    _same(ct.logcumsumexp(c, 1), torch.logcumsumexp(t, 1), rtol=1e-12)


# ---- searching and counting ----------------------------------------------------------------------


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_follows_torch_binary_search(right):
    # NaN in the sequence or the values, and an unsorted sequence, give PyTorch's answers
    seqs = [
        [1.0, 2.0, 2.0, 3.0, NAN],
        [NAN, NAN, 1.0, 0.0, 2.0],
        [3.0, 1.0, 2.0, 2.0, 0.0],
        [-INF, -0.0, 0.0, INF, INF],
    ]
    values = [NAN, 2.0, 0.0, 5.0, 3.0, -0.0, INF, -INF, 1.5]
    for s in seqs:
        cs, ts = _pair(s)
        cv, tv = _pair(values)
        _same(ct.searchsorted(cs, cv, right=right), torch.searchsorted(ts, tv, right=right))
        _same(
            ct.bucketize(cv, cs, right=right, out_int32=True),
            torch.bucketize(tv, ts, right=right, out_int32=True),
        )
        for v in (2.0, NAN):
            _same(ct.searchsorted(cs, v, right=right), torch.searchsorted(ts, v, right=right))
    cs, ts = _pair([[5.0, 1.0, 3.0, 2.0], [0.0, 4.0, 4.0, 1.0]])
    cv, tv = _pair([[3.0, 0.5], [4.0, 9.0]])
    order = cs.argsort(1)
    _same(
        ct.searchsorted(cs, cv, right=right, sorter=order),
        torch.searchsorted(ts, tv, right=right, sorter=torch.argsort(ts, dim=1, stable=True)),
    )


def test_unique_and_unique_consecutive_match_torch():
    c, t = _pair([2.0, NAN, 1.0, -0.0, 2.0, NAN, 0.0, 1.0, 3.0])
    _same(
        ct.unique(c, return_inverse=True, return_counts=True),
        torch.unique(t, return_inverse=True, return_counts=True),
    )
    _same(
        ct.unique_consecutive(c, return_inverse=True, return_counts=True),
        torch.unique_consecutive(t, return_inverse=True, return_counts=True),
    )
    m, tm = _pair([[1, 2, 0], [0, 5, 0], [1, 2, 0], [0, 1, 1]], "int64")
    for dim in (0, 1):
        _same(
            ct.unique(m, dim=dim, return_inverse=True, return_counts=True),
            torch.unique(tm, dim=dim, return_inverse=True, return_counts=True),
        )
        _same(
            m.unique_consecutive(return_counts=True, dim=dim),
            tm.unique_consecutive(return_counts=True, dim=dim),
        )
    b, tb = _pair([[True, False], [True, True]], "bool")
    _same(ct.unique(b, return_counts=True), torch.unique(tb, return_counts=True))


def test_histograms_on_bin_edges_match_torch():
    c, t = _pair([0.0, 1.0, 2.0, 3.0, 4.0, 4.0, 0.5, -1.0, 5.0, NAN], "float32")
    for bins, lo, hi in ((4, 0, 4), (3, 0, 4), (8, 0.5, 4.0), (5, 0, 0)):
        finite = c[~c.isnan()] if lo == hi else c
        _same(
            ct.histc(finite, bins, lo, hi),
            torch.histc(t[~t.isnan()] if lo == hi else t, bins, lo, hi),
        )
    x, tx = _pair([0.0, 1.0, 2.0, 3.0, 4.0, 4.0, 0.5, 2.25], "float32")
    for bins in (4, 7):
        _same(ct.histogram(x, bins), torch.histogram(tx, bins))
        _same(
            ct.histogram(x, bins, range=(1.0, 3.0), density=True),
            torch.histogram(tx, bins, range=(1.0, 3.0), density=True),
        )
    e, te = _pair([0.0, 1.0, 2.25, 4.0], "float32")
    _same(ct.histogram(x, e, weight=x), torch.histogram(tx, te, weight=tx))
    i, ti = _pair([1, 3, 1, 0, 7], "int64")
    _same(ct.bincount(i, minlength=10), torch.bincount(ti, minlength=10))
    for dtype in ("float16", "float32", "float64", "int32"):
        w, tw = _pair([0.5, 1.0, 2.0, 1.0, 3.0], dtype)
        _same(ct.bincount(i, w), torch.bincount(ti, tw))


def test_multinomial_frequencies():
    ct.manual_seed(0)
    p = ct.tensor([0.1, 0.0, 0.6, 0.3])
    draws = ct.multinomial(p, 20000, replacement=True)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.015)
    # without replacement: the first draw follows p, later ones exclude the drawn
    first = np.bincount(ct.multinomial(p.expand(20000, 4), 2)[:, 0].numpy(), minlength=4)
    np.testing.assert_allclose(first / 20000, [0.1, 0.0, 0.6, 0.3], atol=0.015)


# ---- special functions ------------------------------------------------------------------------

SPECIAL_VALUES = [
    NAN,
    INF,
    -INF,
    0.0,
    -0.0,
    1.0,
    -1.0,
    -2.0,
    -2.5,
    0.5,
    3.7,
    30.0,
    -30.5,
    1e-30,
    1e-3,
    170.0,
]


@pytest.mark.parametrize(
    "name",
    [
        "lgamma",
        "digamma",
        "i0",
        "sinc",
        "special.i0e",
        "special.i1",
        "special.i1e",
        "special.erfcx",
        "special.ndtr",
        "special.log_ndtr",
        "special.entr",
        "special.expit",
        "special.spherical_bessel_j0",
        "special.scaled_modified_bessel_k0",
        "special.modified_bessel_k1",
    ],
)
def test_special_values_match_torch(name):
    c, t = _pair(SPECIAL_VALUES)

    def get(mod):
        for part in name.split("."):
            mod = getattr(mod, part)
        return mod

    # atol: PyTorch's ndtr underflows to 0 below about -27 (the true value is ~1e-204)
    _same(get(ct)(c), get(torch)(t), rtol=1e-6, atol=1e-200)


def test_polygamma_zeta_gammainc_match_torch():
    c, t = _pair([0.5, 1.0, 3.7, 30.0, -2.5, 1e-3])
    for n in range(5):
        _same(ct.polygamma(n, c), torch.polygamma(n, t), rtol=1e-9)
        _same(c.polygamma(n), t.polygamma(n), rtol=1e-9)
    for p in (1, 3):
        x, tx = _pair([2.0, 3.5, 10.0])
        _same(ct.mvlgamma(x, p), torch.mvlgamma(tx, p), rtol=1e-12)
    q, tq = _pair([0.5, 1.0, 2.0, 7.5, 1e-3, 30.0])
    _same(ct.special.zeta(3.0, q), torch.special.zeta(3.0, tq), rtol=1e-9)
    a, ta = _pair([0.5, 1.0, 2.0, 7.5, 1e-3, 30.0])
    _same(ct.special.gammainc(a, q), torch.special.gammainc(ta, tq), rtol=1e-9)
    _same(ct.special.gammaincc(a, q), torch.special.gammaincc(ta, tq), rtol=1e-9)


def test_special_gradients_match_torch():
    data = [0.3, 0.9, 2.5, 7.0]
    fns = [
        lambda m, x: m.lgamma(x),
        lambda m, x: m.digamma(x),
        lambda m, x: m.polygamma(2, x),
        lambda m, x: m.i0(x),
        lambda m, x: m.special.i0e(x),
        lambda m, x: m.special.i1(x),
        lambda m, x: m.special.i1e(x),
        lambda m, x: m.special.erfcx(x),
        lambda m, x: m.special.log_ndtr(x),
        lambda m, x: m.special.entr(x),
        lambda m, x: m.special.ndtri(x / 10),
        lambda m, x: m.sinc(x),
        lambda m, x: m.special.xlog1py(x, x * 2),
        lambda m, x: m.logit(x / 10),
        lambda m, x: m.frexp(x * 3).mantissa,
        lambda m, x: m.copysign(x, -1.0),
        lambda m, x: m.special.zeta(3.0, x),
        lambda m, x: m.special.gammainc(x.detach(), x),
        lambda m, x: m.mvlgamma(x + 2, 3),
        lambda m, x: m.ldexp(x, m.tensor([1, 2, 0, 3])),
        lambda m, x: m.float_power(x, 2.5),
        lambda m, x: m.trapezoid(x * x),
        lambda m, x: m.cumulative_trapezoid(x * x, x * 2),
    ]
    for fn in fns:
        _grads_match(fn, data, rtol=1e-8)


def test_gradients_at_domain_edges_match_torch():
    x = [0.0, -0.0, 1e-12, 1.0, -1.5]
    for fn in (
        lambda m, v: m.sinc(v),
        lambda m, v: m.special.i1(v),
        lambda m, v: m.special.i1e(v),
        lambda m, v: m.logit(v),
        lambda m, v: m.logit(v, eps=0.25),
        lambda m, v: m.nextafter(v, v * 0 + 1.0),
    ):
        _grads_match(fn, x, rtol=1e-8)


def test_ldexp_gradient_with_negative_integer_exponents():
    # PyTorch answers 0 here (it raises 2 to the exponent in integers); the derivative of
    # x * 2 ** e in x is 2 ** e
    x = ct.tensor([0.3, 2.0, -1.5], dtype=ct.float64, requires_grad=True)
    ct.ldexp(x, ct.tensor([-1, -3, 2])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.125, 4.0])
    assert ct.autograd.gradcheck(lambda v: ct.ldexp(v, ct.tensor([-1, -3, 2])), (x,))


def test_which_outputs_are_differentiable():
    c = ct.tensor([0.5, 2.0], requires_grad=True)
    for fn in (
        ct.special.bessel_j0,
        ct.special.airy_ai,
        ct.special.modified_bessel_k0,
        lambda x: ct.special.chebyshev_polynomial_t(x, 3),
        ct.histc,
        ct.special.spherical_bessel_j0,
    ):
        assert not fn(c).requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for 'heaviside'"):
        ct.heaviside(c, c.detach()).sum().backward()
    with pytest.raises(NotImplementedError, match="special_zeta"):
        ct.special.zeta(c, 2.0).sum().backward()


def test_arithmetic_edges_match_torch():
    c, t = _pair([INF, -INF, NAN, 0.0, -0.0, 1e-310, -3.0, 0.75, 1024.0])
    _same(ct.frexp(c), torch.frexp(t))
    _same(ct.copysign(c, -0.0), torch.copysign(t, -0.0))
    _same(ct.nextafter(c, c.flip([0])), torch.nextafter(t, t.flip([0])))
    _same(ct.heaviside(c, c.flip([0])), torch.heaviside(t, t.flip([0])))
    a, ta = _pair([0, -4, 6, 12, -9, 7, 0], "int64")
    b, tb = _pair([0, 6, -4, 18, 6, 0, 5], "int64")
    _same(ct.gcd(a, b), torch.gcd(ta, tb))
    _same(ct.lcm(a, b), torch.lcm(ta, tb))
    _same(ct.float_power(a, 2), torch.float_power(ta, 2))
    _same(ct.true_divide(a, 4), torch.true_divide(ta, 4))


@pytest.mark.parametrize(
    "name",
    [
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
    ],
)
def test_polynomials_at_edges_match_torch(name):
    # (no NaN x: some of PyTorch's loops return an uninitialized value for it)
    x = [-1.0, 1.0, 0.0, 0.5, 0.999, -0.3, 1.5, -2.0, -1.0]
    n = [0.0, 1.0, 2.0, 7.0, 9.5, 25.0, -1.0, 3.0, NAN]
    c, t = _pair(x)
    cn, tn = _pair(n)
    _same(
        getattr(ct.special, name)(c, cn), getattr(torch.special, name)(t, tn), rtol=1e-9, atol=1e-12
    )


def test_namespace_and_return_types():
    public = {
        n
        for n in dir(torch.special)
        if not n.startswith("_") and callable(getattr(torch.special, n)) and n != "Tensor"
    }
    assert public <= set(dir(ct.special)), sorted(public - set(dir(ct.special)))
    x = ct.tensor([[1.0, 2.0], [3.0, 0.0]])
    for result, fields in (
        (ct.sort(x), ("values", "indices")),
        (ct.topk(x, 1), ("values", "indices")),
        (ct.median(x, 1), ("values", "indices")),
        (ct.aminmax(x), ("min", "max")),
        (ct.frexp(x), ("mantissa", "exponent")),
        (ct.histogram(x, 2), ("hist", "bin_edges")),
        (ct.cummax(x, 0), ("values", "indices")),
    ):
        assert result._fields == fields
        assert type(result).__module__ == "coretorch.return_types"
    assert isinstance(ct.var_mean(x, 1), tuple) and len(ct.var_mean(x, 1)) == 2
    _same(ct.aminmax(x, dim=0), torch.aminmax(torch.tensor([[1.0, 2.0], [3.0, 0.0]]), dim=0))
