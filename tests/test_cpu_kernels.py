"""cpu backend kernels for reductions, linalg, shape, indexing and nn ops, checked against PyTorch
(the reference, skipped without it) or numpy, over dtypes, strides, dims and edge cases."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch_cpu_numba.numpy_view import as_numpy

torch = pytest.importorskip("torch")

FLOATS = (np.float16, np.float32, np.float64)
INTS = (np.uint8, np.int8, np.int16, np.int32, np.int64)
ALL = (np.bool_,) + INTS + FLOATS
LAYOUTS = ("contiguous", "transposed", "sliced")
_RTOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-10}


def _rand(shape, dtype, rng) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -4
        return rng.integers(lo, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def make(shape, dtype, layout="contiguous", seed=0) -> np.ndarray:
    """A random numpy array of `shape` with the given memory layout (non-contiguous ones share
    memory with a larger buffer)."""
    rng = np.random.default_rng(seed)
    if layout == "transposed" and len(shape) >= 2:
        return _rand(shape[::-1], dtype, rng).T
    if layout == "sliced" and len(shape) >= 1:
        big = _rand(shape[:-1] + (2 * shape[-1],), dtype, rng)
        return big[..., ::2]
    return _rand(shape, dtype, rng)


def ct_(a: np.ndarray):
    return ct.from_numpy(a)


def th(a: np.ndarray):
    return torch.from_numpy(np.array(a, order="C"))


def assert_same(got, want, rtol=None, atol=None) -> None:
    """`got` (coretorch) equals `want` (torch tensor or numpy array): shape, dtype and values."""
    g = as_numpy(got)
    w = want.numpy() if hasattr(want, "numpy") and not isinstance(want, np.ndarray) else want
    w = np.asarray(w)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if g.dtype.kind == "f":
        r = _RTOL.get(g.dtype.type, 1e-6) if rtol is None else rtol
        a = r if atol is None else atol
        np.testing.assert_allclose(
            g.astype(np.float64), w.astype(np.float64), rtol=r, atol=a, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(g, w)


# ---- reductions ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "dim,keepdim",
    [(None, False), (0, False), (-1, True), ((0, 2), False), ([], True), ((1,), True)],
)
def test_sum(dtype, layout, dim, keepdim):
    a = make((3, 4, 5), dtype, layout)
    got = ct_(a).sum(dim, keepdim) if dim is not None else ct_(a).sum()
    want = th(a).sum(dim, keepdim) if dim is not None else th(a).sum()
    assert_same(got, want, rtol=5e-3 if dtype == np.float16 else None)


def test_sum_dtype_arg_and_out():
    a = make((4, 6), np.int32)
    assert_same(ct_(a).sum(1, dtype=ct.float64), th(a).sum(1, dtype=torch.float64))
    out = ct.empty(4, dtype=ct.float32)
    ct.sum(ct_(a), 1, out=out)
    assert_same(out, th(a).sum(1).float())


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_sum_large_parallel_is_accurate(dtype):
    a = np.random.default_rng(1).random(1 << 19).astype(dtype)
    got = float(as_numpy(ct_(a).sum()))
    assert got == pytest.approx(a.astype(np.float64).sum(), rel=1e-6)
    # the kernel lets LLVM reorder the additions; IEEE results for NaN and ±Inf must survive
    a[-1] = np.inf
    assert as_numpy(ct_(a).sum()) == np.inf
    a[7] = -np.inf
    assert np.isnan(as_numpy(ct_(a).sum()))
    a[7] = 1.0
    a[12345] = np.nan
    assert np.isnan(as_numpy(ct_(a).sum()))
    # non-contiguous large input takes the numpy path
    b = np.random.default_rng(2).random(1 << 20).astype(dtype)[::2]
    assert float(as_numpy(ct_(b).sum())) == pytest.approx(b.astype(np.float64).sum(), rel=1e-6)


def test_sum_zero_size_and_zero_dim():
    assert_same(ct_(np.zeros((0, 3), np.float32)).sum(), torch.zeros(0, 3).sum())
    assert_same(ct_(np.zeros((0, 3), np.float32)).sum(0), torch.zeros(0, 3).sum(0))
    assert_same(ct_(np.array(2.5, np.float32)).sum(), torch.tensor(2.5).sum())
    assert_same(ct_(np.array(7, np.int16)).sum(0), torch.tensor(7, dtype=torch.int16).sum(0))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod(dtype, dim):
    a = make((3, 4), dtype, "transposed")
    got = ct_(a).prod() if dim is None else ct_(a).prod(dim, keepdim=True)
    want = th(a).prod() if dim is None else th(a).prod(dim, keepdim=True)
    assert_same(got, want, rtol=1e-2 if dtype == np.float16 else None)


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim,keepdim", [((), False), (1, True), ((0, -1), False)])
def test_amax_amin(op, dtype, dim, keepdim):
    a = make((3, 4, 2), dtype, "sliced")
    assert_same(getattr(ct_(a), op)(dim, keepdim), getattr(th(a), op)(dim, keepdim))


@pytest.mark.parametrize("op", ["amax", "amin", "max", "min"])
def test_minmax_nan_propagates(op):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]], np.float32)
    if op in ("amax", "amin"):
        assert_same(getattr(ct_(a), op)(1), getattr(th(a), op)(1))
        assert_same(getattr(ct_(a), op)(), getattr(th(a), op)())
    else:
        got, want = getattr(ct_(a), op)(1), getattr(th(a), op)(1)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
        assert_same(getattr(ct_(a), op)(), getattr(th(a), op)())


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max_min_dim(op, dtype, layout):
    a = make((4, 6), dtype, layout)  # small integer range: ties, first occurrence wins
    for dim, keepdim in ((0, False), (-1, True)):
        got = getattr(ct_(a), op)(dim, keepdim)
        want = getattr(th(a), op)(dim, keepdim)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", INTS + FLOATS)  # PyTorch has no bool argmax
def test_argmax_argmin(op, dtype):
    a = make((5, 3), dtype, "transposed")
    for kw in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": None, "keepdim": True}):
        assert_same(getattr(ct_(a), op)(**kw), getattr(th(a), op)(**kw))


def test_argmax_picks_first_nan_and_first_tie():
    a = np.array([1.0, 3.0, np.nan, 3.0, np.nan], np.float64)
    assert_same(ct_(a).argmax(), th(a).argmax())
    assert_same(ct_(a).argmin(), th(a).argmin())
    b = np.array([2, 7, 7, 1, 1], np.int64)
    assert int(as_numpy(ct_(b).argmax())) == 1
    assert int(as_numpy(ct_(b).argmin())) == 3


def test_zero_dim_minmax():
    a = np.array(3.5, np.float32)
    assert_same(ct_(a).amax(), th(a).amax())
    assert_same(ct_(a).argmax(), th(a).argmax())
    got = ct_(a).max(0)
    assert_same(got.values, th(a).max(0).values)
    assert_same(got.indices, th(a).max(0).indices)


def test_minmax_errors_on_empty():
    e = ct_(np.zeros((0, 3), np.float32))
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero"):
        e.amax(0)
    # PyTorch's types: RuntimeError for a full reduction, IndexError for argmax and a dim
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        e.amax()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0"):
        e.max(0)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        e.argmax()
    assert_same(e.amax(1), torch.zeros(0, 3).amax(1))
    assert_same(e.argmax(1), torch.zeros(0, 3).argmax(1))


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("dtype", (np.bool_, np.uint8, np.int32, np.float32))
def test_all_any(op, dtype):
    a = make((3, 4), dtype, "transposed")
    for args in ((), (0,), (1, True)):
        assert_same(getattr(ct_(a), op)(*args), getattr(th(a), op)(*args))
    e = np.zeros((0, 2), dtype)
    assert_same(getattr(ct_(e), op)(), getattr(th(e), op)())


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, -1])
def test_cumsum_cumprod(op, dtype, dim):
    a = make((4, 5), dtype, "sliced")
    rtol = 1e-2 if dtype == np.float16 else None
    assert_same(getattr(ct_(a), op)(dim), getattr(th(a), op)(dim), rtol=rtol)
    assert_same(
        getattr(ct_(a), op)(dim, dtype=ct.float64), getattr(th(a), op)(dim, dtype=torch.float64)
    )


def test_cumsum_zero_dim_empty_and_inplace():
    assert_same(ct_(np.array(3.0, np.float32)).cumsum(0), torch.tensor(3.0).cumsum(0))
    assert_same(
        ct_(np.zeros((0, 2), np.int32)).cumsum(1), torch.zeros(0, 2, dtype=torch.int32).cumsum(1)
    )
    a = make((3, 4), np.float64, "transposed")
    t = ct_(a.copy())
    t.cumsum_(1)
    assert_same(t, th(a).cumsum(1))


# ---- linalg ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.float64, np.int32, np.int64))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mm(dtype, layout):
    a, b = make((5, 7), dtype, layout, 1), make((7, 3), dtype, layout, 2)
    rtol = 1e-2 if dtype == np.float16 else None
    assert_same(ct.mm(ct_(a), ct_(b)), torch.mm(th(a), th(b)), rtol=rtol)


def test_mm_zero_size_and_out():
    assert_same(
        ct.mm(ct_(np.ones((3, 0), np.float32)), ct_(np.ones((0, 2), np.float32))), torch.zeros(3, 2)
    )
    a, b = make((4, 4), np.float64), make((4, 4), np.float64, "transposed")
    out = ct.empty(4, 4, dtype=ct.float64).t()  # non-contiguous out
    ct.mm(ct_(a), ct_(b), out=out)
    assert_same(out, torch.mm(th(a), th(b)))


def test_mm_errors():
    a32, a64 = ct_(np.ones((2, 2), np.float32)), ct_(np.ones((2, 2), np.float64))
    with pytest.raises(RuntimeError, match="float32 != float64"):
        ct.mm(a32, a64)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ct.mm(a32, ct_(np.ones((3, 2), np.float32)))


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int64))
def test_bmm_and_matmul(dtype):
    a, b = make((3, 4, 5), dtype, "transposed", 1), make((3, 5, 2), dtype, "sliced", 2)
    assert_same(ct.bmm(ct_(a), ct_(b)), torch.bmm(th(a), th(b)))
    c = make((2, 1, 4, 5), dtype, "contiguous", 3)
    assert_same(ct.matmul(ct_(c), ct_(b)), torch.matmul(th(c), th(b)))
    v = make((5,), dtype, "contiguous", 4)
    assert_same(ct.matmul(ct_(a), ct_(v)), torch.matmul(th(a), th(v)))


def test_matmul_large_float32_matches_numpy():
    a = make((256, 300), np.float32, "contiguous", 5)
    b = make((300, 128), np.float32, "transposed", 6)
    assert_same(
        ct.mm(ct_(a), ct_(b)), (a.astype(np.float64) @ b).astype(np.float32), rtol=1e-4, atol=1e-4
    )


# ---- shape -----------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(layout, dim):
    a = make((2, 3), np.float32, layout, 1)
    b = make((2, 3), np.float32, layout, 2)
    assert_same(ct.cat([ct_(a), ct_(b)], dim), torch.cat([th(a), th(b)], dim))


def test_cat_promotes_and_skips_empty_1d():
    a, b = make((2, 3), np.int32), make((2, 3), np.float64, "transposed")
    assert_same(ct.cat([ct_(a), ct_(b)], 1), torch.cat([th(a), th(b)], 1))
    e = np.zeros(0, np.float32)
    c = make((2, 3), np.float32)
    assert_same(ct.cat([ct_(e), ct_(c), ct_(e)]), torch.cat([th(e), th(c), th(e)]))
    assert_same(ct.cat([ct_(e), ct_(e)]), torch.cat([th(e), th(e)]))
    bools = make((3,), np.bool_)
    assert_same(ct.cat([ct_(bools), ct_(bools)]), torch.cat([th(bools), th(bools)]))


@pytest.mark.parametrize("dtype", (np.bool_, np.int64, np.float32))
@pytest.mark.parametrize("dims", [[0], [-1], [0, 2], []])
def test_flip(dtype, dims):
    a = make((2, 3, 4), dtype, "transposed")
    assert_same(ct_(a).flip(dims), th(a).flip(dims))
    assert_same(ct_(np.array(1.5)).flip([]), torch.tensor(1.5, dtype=torch.float64).flip([]))


@pytest.mark.parametrize("op", ["triu", "tril"])
@pytest.mark.parametrize("diagonal", [0, 1, -2, 10])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 3), (0, 3)])
def test_triu_tril(op, diagonal, shape):
    a = make(shape, np.float32, "transposed")
    assert_same(getattr(ct_(a), op)(diagonal), getattr(th(a), op)(diagonal))
    t = ct_(a.copy())
    getattr(t, op + "_")(diagonal)
    assert_same(t, getattr(th(a), op)(diagonal))


# ---- indexing --------------------------------------------------------------------------------


def _idx(values, dtype=np.int64) -> np.ndarray:
    return np.asarray(values, dtype)


@pytest.mark.parametrize("dtype", (np.bool_, np.int32, np.float16, np.float64))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dtype, layout, dim):
    a = make((3, 4), dtype, layout)
    i = _idx([2, 0, 2, 1])[: a.shape[dim] if dim == 0 else 4] % a.shape[dim]
    assert_same(ct_(a).index_select(dim, ct_(i)), th(a).index_select(dim, th(i)))
    i32 = i.astype(np.int32)
    assert_same(ct_(a).index_select(dim, ct_(i32)), th(a).index_select(dim, th(i32)))


def test_index_select_edge_cases():
    s = np.array(4.0, np.float32)
    assert_same(ct_(s).index_select(0, ct_(_idx([0]))), th(s).index_select(0, th(_idx([0]))))
    a = make((3, 2), np.float32)
    e = _idx([])
    assert_same(ct_(a).index_select(0, ct_(e)), th(a).index_select(0, th(e)))
    with pytest.raises(IndexError, match="index out of range in self"):
        ct_(a).index_select(0, ct_(_idx([5])))
    with pytest.raises(IndexError, match="index out of range in self"):
        ct_(a).index_select(0, ct_(_idx([-1])))


@pytest.mark.parametrize("dtype", (np.bool_, np.int64, np.float32))
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dtype, dim):
    a = make((4, 5), dtype, "transposed")
    rng = np.random.default_rng(3)
    # index smaller than self in the other dim, as PyTorch allows
    shape = (3, 4)
    i = rng.integers(0, a.shape[dim], shape)
    assert_same(ct_(a).gather(dim, ct_(i)), th(a).gather(dim, th(i)))
    it = np.ascontiguousarray(i.T).T  # non-contiguous index
    assert_same(ct_(a).gather(dim, ct_(it)), th(a).gather(dim, th(it)))


def test_gather_edge_cases_and_errors():
    s = np.array(2.0)
    assert_same(ct_(s).gather(0, ct_(_idx(0))), th(s).gather(0, th(_idx(0))))
    a = make((3, 4), np.float32)
    e = np.zeros((0, 4), np.int64)
    assert_same(ct_(a).gather(0, ct_(e)), th(a).gather(0, th(e)))
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ct_(a).gather(0, ct_(_idx([[5]])))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
        ct_(a).gather(1, ct_(_idx([[-1]])))


@pytest.mark.parametrize("dtype", (np.int32, np.float32, np.float64))
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_and_scatter_add(dtype, dim):
    a = make((4, 5), dtype, "sliced")
    src = make((4, 6), dtype, "contiguous", 7)
    # unique targets along `dim` for scatter (duplicates are unordered), duplicates for scatter_add
    rows = [np.random.default_rng(k).permutation(a.shape[dim])[:3] for k in range(3)]
    perm = np.stack(rows, axis=1 - dim)
    assert_same(ct_(a).scatter(dim, ct_(perm), ct_(src)), th(a).scatter(dim, th(perm), th(src)))
    dup = np.zeros((3, 3), np.int64)
    dup[1, 1] = 2
    assert_same(
        ct_(a).scatter_add(dim, ct_(dup), ct_(src)), th(a).scatter_add(dim, th(dup), th(src))
    )
    value = 3 if dtype == np.int32 else 2.5
    assert_same(ct_(a).scatter(dim, ct_(perm), value), th(a).scatter(dim, th(perm), value))


def test_scatter_inplace_out_and_errors():
    a = make((3, 4), np.float64)
    t = ct_(a.copy())
    i = _idx([[0, 1, 2, 0]])
    src = make((2, 4), np.float64, "transposed", 1)
    r = t.scatter_add_(0, ct_(i), ct_(src))
    assert r is t
    assert_same(t, th(a).scatter_add(0, th(i), th(src)))
    out = ct.empty(3, 4, dtype=ct.float64)
    ct.scatter(ct_(a), 0, ct_(i), ct_(src), out=out)
    assert_same(out, th(a).scatter(0, th(i), th(src)))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        ct_(a).scatter_(0, ct_(_idx([[3]])), 1.0)
    before = as_numpy(t).copy()
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.scatter_add_(1, ct_(_idx([[0, 9]])), ct_(src))
    np.testing.assert_array_equal(as_numpy(t), before)  # nothing written on error


@pytest.mark.parametrize("dtype", (np.int64, np.float32))
@pytest.mark.parametrize("dim", [0, -1])
def test_index_add_accumulates_duplicates(dtype, dim):
    a = make((4, 4), dtype, "transposed")
    i = _idx([1, 1, 3, 0, 1])
    shape = (5, 4) if dim == 0 else (4, 5)
    src = make(shape, dtype, "contiguous", 2)
    assert_same(ct_(a).index_add(dim, ct_(i), ct_(src)), th(a).index_add(dim, th(i), th(src)))
    assert_same(
        ct_(a).index_add(dim, ct_(i), ct_(src), alpha=2),
        th(a).index_add(dim, th(i), th(src), alpha=2),
    )
    t = ct_(a.copy())
    t.index_add_(dim, ct_(i), ct_(src))
    assert_same(t, th(a).index_add(dim, th(i), th(src)))
    with pytest.raises(IndexError, match="index out of range in self"):
        ct_(a).index_add(dim, ct_(_idx([0, 0, 0, 0, 7])), ct_(src))


@pytest.mark.parametrize("dtype", (np.bool_, np.int16, np.float32))
def test_masked_fill(dtype):
    a = make((3, 4), dtype, "transposed")
    m = make((4,), np.bool_, "contiguous", 5)  # broadcasts along rows
    value = True if dtype == np.bool_ else 7
    assert_same(ct_(a).masked_fill(ct_(m), value), th(a).masked_fill(th(m), value))
    v0 = np.array(value, dtype)
    assert_same(ct_(a).masked_fill(ct_(m), ct_(v0)), th(a).masked_fill(th(m), th(v0)))
    t = ct_(a.copy())
    t.masked_fill_(ct_(m), value)
    assert_same(t, th(a).masked_fill(th(m), value))
    if dtype == np.float32:
        assert_same(ct_(a).masked_fill(ct_(m), float("nan")), th(a).masked_fill(th(m), np.nan))


@pytest.mark.parametrize("shape", [(3, 4), (5,), (), (0, 2), (2, 3, 2)])
def test_nonzero(shape):
    a = make(shape, np.int32, "contiguous")
    assert_same(ct.nonzero(ct_(a)), torch.nonzero(th(a)))
    for got, want in zip(ct.nonzero(ct_(a), as_tuple=True), torch.nonzero(th(a), as_tuple=True)):
        assert_same(got, want)


@pytest.mark.parametrize(
    "key",
    [
        lambda i, j: (i,),
        lambda i, j: (slice(None), j),
        lambda i, j: (i, j),
        lambda i, j: (i, slice(None), j),  # separated: result dims go first
        lambda i, j: (slice(None), i, j),
        lambda i, j: (i[:, None], j[None, :]),  # broadcasting index shapes
        lambda i, j: (slice(1, None), j, slice(None, None, 2)),
    ],
)
def test_advanced_indexing(key):
    a = make((4, 5, 6), np.float32, "transposed")
    i, j = _idx([3, -1, 0]), _idx([[1, 2, 2], [0, -2, 4]])[0]
    k_ct = tuple(ct_(x) if isinstance(x, np.ndarray) else x for x in key(i, j))
    k_th = tuple(th(x) if isinstance(x, np.ndarray) else x for x in key(i, j))
    assert_same(ct_(a)[k_ct], th(a)[k_th])


def test_indexing_bool_mask_and_bounds():
    a = make((3, 4), np.int64, "sliced")
    m = make((3, 4), np.bool_, "contiguous", 9)
    assert_same(ct_(a)[ct_(m)], th(a)[th(m)])
    r = make((3,), np.bool_, "contiguous", 4)
    assert_same(ct_(a)[ct_(r)], th(a)[th(r)])
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ct_(a)[ct_(_idx([5]))]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        ct_(a)[ct_(_idx([-4]))]


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    a = make((4, 3), np.float64, "transposed")
    i = _idx([0, 2, 2, 3]) if accumulate else _idx([0, 2, 3])
    v = make((len(i), 3), np.float64, "contiguous", 3)
    t = ct_(a.copy())
    t.index_put_((ct_(i),), ct_(v), accumulate=accumulate)
    want = th(a).index_put_((th(i),), th(v), accumulate=accumulate)
    assert_same(t, want)
    # values broadcast; second dim indexed
    j = _idx([1, 1]) if accumulate else _idx([1, 0])
    t2 = ct_(a.copy())
    t2.index_put_((None, ct_(j)), ct_(np.array(2.0)), accumulate=accumulate)
    want2 = a.copy()
    if accumulate:
        np.add.at(want2, (slice(None), j), 2.0)
    else:
        want2[:, j] = 2.0
    assert_same(t2, want2)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        t.index_put_((ct_(_idx([4])),), ct_(np.array(1.0)), accumulate=accumulate)


def test_setitem_with_mask_and_indices():
    a = make((3, 4), np.float32)
    t, w = ct_(a.copy()), th(a).clone()
    m = make((3, 4), np.bool_, "contiguous", 1)
    t[ct_(m)] = 0.5
    w[th(m)] = 0.5
    assert_same(t, w)
    t[ct_(_idx([2, 0]))] = ct_(np.ones(4, np.float32))
    w[th(_idx([2, 0]))] = torch.ones(4)
    assert_same(t, w)


def test_masked_select():
    a = make((3, 4), np.float32, "transposed")
    m = make((4,), np.bool_, "contiguous", 3)
    assert_same(ct.masked_select(ct_(a), ct_(m)), torch.masked_select(th(a), th(m)))


# ---- nn --------------------------------------------------------------------------------------

F = torch.nn.functional


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shape,dim",
    [
        ((3, 4, 5), 0),
        ((3, 4, 5), 1),
        ((3, 4, 5), -1),
        ((), 0),
        ((2, 0), 1),
        ((64, 1100), 1),
        ((300, 70), 0),
    ],
)
def test_softmax(op, dtype, shape, dim):
    a = make(shape, dtype, "transposed")
    rtol = 2e-3 if dtype == np.float16 else (2e-6 if dtype == np.float32 else 1e-12)
    assert_same(getattr(ct, op)(ct_(a), dim), getattr(torch, op)(th(a), dim), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_stability_nan_inf_and_dtype(op):
    a = np.array(
        [
            [1000.0, 0.0, -1000.0],
            [1.0, np.nan, 2.0],
            [-np.inf, 0.0, -np.inf],
            [-np.inf, -np.inf, -np.inf],
            [-200.0, -100.0, 0.0],
        ],
        np.float32,
    )
    assert_same(getattr(ct, op)(ct_(a), 1), getattr(torch, op)(th(a), 1), atol=1e-6)
    i = make((3, 4), np.int64)
    assert_same(
        getattr(ct, op)(ct_(i), 1, dtype=ct.float64),
        getattr(torch, op)(th(i), 1, dtype=torch.float64),
    )
    with pytest.raises(NotImplementedError, match=op):
        getattr(ct, op)(ct_(i), 1)


CONV_CASES = [  # N, C_in, H, W, C_out, kh, kw, stride, padding, dilation, groups
    (2, 3, 7, 6, 4, 3, 2, 1, 0, 1, 1),
    (2, 4, 9, 8, 6, 3, 3, 2, 1, 1, 2),
    (1, 2, 8, 8, 2, 3, 3, (2, 1), (1, 2), (2, 1), 2),
    (2, 3, 7, 6, 4, 3, 2, 1, "same", 1, 1),
    (2, 3, 7, 6, 4, 4, 2, 1, "same", (1, 2), 1),
    (2, 3, 5, 5, 4, 3, 3, 1, "valid", 1, 1),
    (1, 6, 5, 5, 6, 3, 3, 1, 1, 1, 6),  # depthwise
    # products over one sample too large for one BLAS thread: the batch-wide column layout
    (2, 16, 18, 18, 32, 3, 3, 1, 1, 1, 1),
    (3, 8, 40, 40, 32, 3, 3, (2, 1), 1, 1, 2),
    (2, 16, 48, 48, 8, 3, 3, 1, 1, 1, 1),  # columns over 1 MB a sample: one sample at a time
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_conv2d(case, dtype):
    n, cin, h, w, cout, kh, kw, stride, padding, dilation, groups = case
    x = make((n, cin, h, w), dtype, "transposed", 1)
    wt = make((cout, cin // groups, kh, kw), dtype, "contiguous", 2)
    b = make((cout,), dtype, "contiguous", 3)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert_same(
        ct.conv2d(ct_(x), ct_(wt), ct_(b), stride, padding, dilation, groups),
        F.conv2d(th(x), th(wt), th(b), stride, padding, dilation, groups),
        rtol=tol,
        atol=tol,
    )
    assert_same(
        ct.conv2d(ct_(x[0]), ct_(wt), None, stride, padding, dilation, groups),
        F.conv2d(th(x[0]), th(wt), None, stride, padding, dilation, groups),
        rtol=tol,
        atol=tol,
    )


@pytest.mark.parametrize("case", [c for c in CONV_CASES if not isinstance(c[8], str)])
def test_convolution_backward(case):
    n, cin, h, w, cout, kh, kw, stride, padding, dilation, groups = case
    x = torch.from_numpy(make((n, cin, h, w), np.float64, "contiguous", 1)).requires_grad_()
    wt = torch.from_numpy(make((cout, cin // groups, kh, kw), np.float64, "sliced", 2))
    wt.requires_grad_()
    b = torch.zeros(cout, dtype=torch.float64, requires_grad=True)
    y = F.conv2d(x, wt, b, stride, padding, dilation, groups)
    g = torch.from_numpy(make(tuple(y.shape), np.float64, "transposed", 3))
    y.backward(g)

    def p(v):
        return (v, v) if isinstance(v, int) else v

    gi, gw, gb = ct.convolution_backward(
        ct_(g.numpy()),
        ct_(x.detach().numpy()),
        ct_(wt.detach().numpy()),
        p(stride),
        p(padding),
        p(dilation),
        groups,
    )
    for got, want in ((gi, x.grad), (gw, wt.grad), (gb, b.grad)):
        assert_same(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mask", [(False, True, True), (True, False, False), (False, False, True)])
@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[-2]])
def test_convolution_backward_output_mask(case, mask):
    """Left-out gradients are empty; the others equal the unmasked ones."""
    n, cin, h, w, cout, kh, kw, stride, padding, dilation, groups = case
    x = ct_(make((n, cin, h, w), np.float64, seed=1))
    wt = ct_(make((cout, cin // groups, kh, kw), np.float64, seed=2))
    params = tuple((v, v) if isinstance(v, int) else v for v in (stride, padding, dilation))
    out = F.conv2d(th(as_numpy(x)), th(as_numpy(wt)), None, *params, groups)
    g = ct_(make(tuple(out.shape), np.float64, "transposed", 3))
    full = ct.convolution_backward(g, x, wt, *params, groups)
    part = ct.convolution_backward(g, x, wt, *params, groups, mask)
    for got, want, m in zip(part, full, mask):
        if m:
            assert_same(got, as_numpy(want), rtol=0, atol=0)
        else:
            assert got.shape == (0,)


MAXPOOL_CASES = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 7, 8), 3, None, 1, 1, False),
    ((2, 3, 7, 8), 3, 2, 1, 1, True),
    ((1, 2, 9, 9), (3, 2), (2, 1), (1, 0), (2, 1), True),
    ((3, 6, 5), 2, 2, 0, 1, True),
    ((3, 6, 5), 2, 3, 1, 1, True),
]


@pytest.mark.parametrize("case", MAXPOOL_CASES)
@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int64))
def test_max_pool2d_with_indices(case, dtype):
    shape, k, s, p, d, ceil = case
    x = (make(shape, np.float64, "transposed") * 10).astype(dtype)
    if dtype != np.int64:
        x[..., 0, 1, 2] = np.nan  # NaN wins its windows
        x[..., -1, 0, 0] = -np.inf
    got_v, got_i = ct.max_pool2d(ct_(x), k, s, p, d, ceil, return_indices=True)
    want_v, want_i = F.max_pool2d(th(x), k, s, p, d, ceil, return_indices=True)
    assert_same(got_v, want_v)
    assert_same(got_i, want_i)


def test_max_pool2d_ties_and_all_nan_window():
    x = np.array([[[[1.0, 1.0, 2.0, 2.0], [np.nan, np.nan, 0.0, 0.0]]]], np.float32)
    got = ct.max_pool2d(ct_(x), 2, return_indices=True)
    want = F.max_pool2d(th(x), 2, return_indices=True)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


AVGPOOL_CASES = [  # shape, kernel, stride, padding, ceil_mode
    ((2, 3, 7, 8), 3, None, 1, False),
    ((2, 3, 7, 8), 3, 2, 1, True),
    ((1, 2, 9, 9), (3, 2), (2, 1), (1, 0), True),
    ((3, 6, 5), 2, 3, 1, True),
]


@pytest.mark.parametrize("case", AVGPOOL_CASES)
@pytest.mark.parametrize("count_include_pad,divisor", [(True, None), (False, None), (True, 5)])
@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int64))
def test_avg_pool2d_and_backward(case, count_include_pad, divisor, dtype):
    shape, k, s, p, ceil = case
    x = (make(shape, np.float64, "sliced") * 10).astype(dtype)
    assert_same(
        ct.avg_pool2d(ct_(x), k, s, p, ceil, count_include_pad, divisor),
        F.avg_pool2d(th(x), k, s, p, ceil, count_include_pad, divisor),
    )
    if dtype == np.int64:
        return
    xt = th(x).requires_grad_()
    y = F.avg_pool2d(xt, k, s, p, ceil, count_include_pad, divisor)
    g = torch.from_numpy(make(tuple(y.shape), dtype, "transposed", 4))
    y.backward(g)
    got = ct.avg_pool2d_backward(
        ct_(g.numpy()), ct_(x), k, s if s is not None else k, p, ceil, count_include_pad, divisor
    )
    assert_same(got, xt.grad)


def test_softmax_into_noncontiguous_out_and_inplace_alias():
    a = make((5, 6), np.float32, "contiguous")
    out = ct.empty(6, 5, dtype=ct.float32).t()
    ct.softmax(ct_(a), 1, out=out)
    assert_same(out, torch.softmax(th(a), 1))
    x = ct_(a.copy())
    ct.log_softmax(x, 0, out=x)  # output aliases the input
    assert_same(x, torch.log_softmax(th(a), 0))


def test_conv2d_half_and_zero_batch():
    x = make((2, 3, 6, 6), np.float16, "contiguous", 1)
    w = make((4, 3, 3, 3), np.float16, "contiguous", 2)
    assert_same(
        ct.conv2d(ct_(x), ct_(w), None, 1, 1),
        F.conv2d(th(x), th(w), None, 1, 1),
        rtol=1e-2,
        atol=1e-2,
    )
    e = np.zeros((0, 3, 6, 6), np.float32)
    w32 = w.astype(np.float32)
    assert_same(ct.conv2d(ct_(e), ct_(w32)), F.conv2d(th(e), th(w32)))


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.parametrize("shape", [(2, 3, 6, 8), (64, 8, 15, 13), (1, 1, 5, 5)])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool_2x2_matches_torch_with_nans_ties_and_infinities(dtype, shape, ceil_mode):
    # the 2x2 stride-2 pool has its own kernel (serial and, past 65536 elements, parallel)
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, shape).astype(dtype)  # many ties
    flat = x.reshape(-1)
    for value in (np.nan, np.inf, -np.inf):
        flat[rng.integers(0, flat.size, max(1, flat.size // 20))] = value
    out, idx = ct.nn.functional.max_pool2d(
        ct.tensor(x), 2, ceil_mode=ceil_mode, return_indices=True
    )
    tout, tidx = torch.nn.functional.max_pool2d(
        torch.from_numpy(x), 2, ceil_mode=ceil_mode, return_indices=True
    )
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
