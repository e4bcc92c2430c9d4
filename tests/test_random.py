"""Random kernels of the cpu backend: reproducible for a seed (within and across processes, and
equal to numpy's PCG64 stream), correct ranges and distributions, independent generators."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import coretorch as ct


def test_same_seed_same_numbers():
    for make in (
        lambda: ct.rand(100),
        lambda: ct.randn(3, 7),
        lambda: ct.randint(0, 10, (50,)),
        lambda: ct.randperm(20),
        lambda: ct.empty(64).bernoulli_(0.3),
        lambda: ct.nn.functional.dropout(ct.ones(64), 0.5),
    ):
        ct.manual_seed(1234)
        a = make().numpy().copy()
        ct.manual_seed(1234)
        b = make().numpy().copy()
        np.testing.assert_array_equal(a, b)
        c = make().numpy()
        assert not np.array_equal(a, c)  # the stream moved on


def test_stream_is_numpy_pcg64():
    ct.manual_seed(7)
    got = ct.rand(10).numpy()
    want = np.random.Generator(np.random.PCG64(7)).random(10, dtype=np.float32)
    np.testing.assert_array_equal(got, want)
    ct.manual_seed(7)
    got = ct.randn(5, dtype=ct.float64).numpy()
    np.testing.assert_array_equal(got, np.random.Generator(np.random.PCG64(7)).standard_normal(5))


def test_same_seed_same_numbers_across_processes():
    code = (
        "import coretorch as ct; ct.manual_seed(99); "
        "print(ct.rand(4).tolist(), ct.randint(0, 1000, (4,)).tolist(), "
        "ct.randperm(6).tolist())"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].strip()
    ct.manual_seed(99)
    here = f"{ct.rand(4).tolist()} {ct.randint(0, 1000, (4,)).tolist()} {ct.randperm(6).tolist()}"
    assert runs[0].strip() == here


def test_explicit_generator_is_independent_of_the_default():
    g = ct.Generator().manual_seed(5)
    a = ct.rand(8, generator=g).numpy().copy()
    ct.manual_seed(0)
    ct.rand(100)  # default stream use doesn't touch g
    g2 = ct.Generator().manual_seed(5)
    np.testing.assert_array_equal(a, ct.rand(8, generator=g2).numpy())


@pytest.mark.parametrize("dtype", [ct.float16, ct.float32, ct.float64])
def test_uniform_and_normal_distributions(dtype):
    ct.manual_seed(0)
    u = ct.empty(20000, dtype=dtype).uniform_(-2.0, 3.0).numpy().astype(np.float64)
    assert u.min() >= -2.0 and u.max() <= 3.0
    assert abs(u.mean() - 0.5) < 0.05 and abs(u.std() - 5 / np.sqrt(12)) < 0.05
    z = ct.empty(20000, dtype=dtype).normal_(1.0, 2.0).numpy().astype(np.float64)
    assert abs(z.mean() - 1.0) < 0.06 and abs(z.std() - 2.0) < 0.06


def test_random_fills_strided_views_only():
    x = ct.zeros(4, 6)
    x[:, ::2].uniform_()
    a = x.numpy()
    assert (a[:, 1::2] == 0).all() and (a[:, ::2] > 0).any()


@pytest.mark.parametrize("dtype", [ct.uint8, ct.int8, ct.int32, ct.int64, ct.float32])
def test_randint_range_and_dtype(dtype):
    r = ct.randint(-3 if dtype is not ct.uint8 else 0, 5, (5000,), dtype=dtype)
    assert r.dtype is dtype
    v = r.numpy()
    lo = -3 if dtype is not ct.uint8 else 0
    assert v.min() == lo and v.max() == 4


def test_randint_out_of_dtype_range_and_bad_bounds():
    with pytest.raises(RuntimeError, match="range"):
        ct.randint(0, 300, (3,), dtype=ct.uint8)
    with pytest.raises(RuntimeError, match="from"):
        ct.randint(5, 5, (3,))


def test_randperm_is_a_permutation():
    p = ct.randperm(1000).numpy()
    assert sorted(p.tolist()) == list(range(1000))


def test_bernoulli_probabilities():
    ct.manual_seed(3)
    m = ct.empty(20000).bernoulli_(0.25).numpy()
    assert set(np.unique(m)) <= {0.0, 1.0} and abs(m.mean() - 0.25) < 0.02
    probs = ct.tensor([0.0, 1.0, 0.5]).expand(4000, 3)
    s = ct.bernoulli(probs).numpy()
    assert (s[:, 0] == 0).all() and (s[:, 1] == 1).all() and abs(s[:, 2].mean() - 0.5) < 0.05
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        ct.empty(3).bernoulli_(1.5)


def test_dropout_mask_scale_and_rate():
    ct.manual_seed(0)
    y = ct.nn.functional.dropout(ct.ones(10000), 0.2).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1.25)}
    assert abs((y == 0).mean() - 0.2) < 0.02


def test_uniform_on_integer_tensor_raises():
    with pytest.raises(NotImplementedError, match="uniform_"):
        ct.zeros(3, dtype=ct.int64).uniform_()
    with pytest.raises(RuntimeError, match="std"):
        ct.zeros(3).normal_(0.0, -1.0)


def test_distribution_fills_have_their_distributions_moments():
    """exponential_, log_normal_, geometric_, cauchy_: sample statistics of 200k draws match
    the distributions' (analytic values; Cauchy has no mean, so its quartiles)."""
    ct.manual_seed(0)
    n = 200_000
    x = ct.empty(n, dtype=ct.float64)
    e = x.exponential_(4.0).numpy()
    assert abs(e.mean() - 0.25) < 0.005 and abs(e.std() - 0.25) < 0.005
    ln = np.log(x.log_normal_(1.0, 0.5).numpy())
    assert abs(ln.mean() - 1.0) < 0.01 and abs(ln.std() - 0.5) < 0.01
    g = ct.empty(n, dtype=ct.int64).geometric_(0.2).numpy()
    assert g.min() == 1 and abs(g.mean() - 5.0) < 0.05  # mean 1/p
    assert abs((g == 1).mean() - 0.2) < 0.005  # P(first trial succeeds) = p
    c = x.cauchy_(2.0, 3.0).numpy()
    q1, q2, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert abs(q2 - 2.0) < 0.05 and abs((q3 - q1) / 2 - 3.0) < 0.1  # median, scale
