"""cpu_numba backend kernels against PyTorch (the oracle): every elementwise family over dtypes,
strides, broadcasting, 0-d and zero-size tensors, out= and in-place; factories; copy; errors."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import coretorch as ct

torch = pytest.importorskip("torch")

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "float32", "float64"]


def values(dtype: str, shape=(3, 4), seed=0) -> np.ndarray:
    """Test data with the awkward values of each kind (NaN, inf, -0.0, negatives, zero)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.random(n).reshape(shape) < 0.5
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else -6
        return rng.integers(lo, 7, n).astype(dtype).reshape(shape)
    v = rng.standard_normal(n) * 3
    special = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -2.5, 1.0]
    v[: min(n, len(special))] = special[: min(n, len(special))]
    return v.astype(dtype).reshape(shape)


def ct_t(a: np.ndarray):
    return ct.tensor(a)


def to_np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x.numpy()


def tol(dtype) -> dict:
    name = dtype if isinstance(dtype, str) else dtype.name
    if "float16" in name:
        return dict(rtol=2e-3, atol=2e-3)
    if "float32" in name:
        return dict(rtol=3e-6, atol=1e-6)
    return dict(rtol=1e-12, atol=1e-12)


def check(got, want, dtype_name=None) -> None:
    """Same dtype (by name) and values equal within the dtype's tolerance; NaNs equal."""
    g = to_np(got)
    w = to_np(want)
    assert got.dtype.__repr__().split(".")[-1] == str(want.dtype).split(".")[-1], (
        got.dtype,
        want.dtype,
    )
    assert g.shape == w.shape
    if w.dtype.kind == "f":
        np.testing.assert_allclose(
            g.astype(np.float64), w.astype(np.float64), equal_nan=True, **tol(str(w.dtype))
        )
    else:
        np.testing.assert_array_equal(g, w)


def torch_of(a: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def run_both(ct_fn, torch_fn, *arrays, **kwargs):
    """Run both sides; if PyTorch raises, coretorch must raise too (returns None)."""
    try:
        want = torch_fn(
            *[torch_of(a) if isinstance(a, np.ndarray) else a for a in arrays], **kwargs
        )
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError, ValueError)):
            ct_fn(*[ct_t(a) if isinstance(a, np.ndarray) else a for a in arrays], **kwargs)
        return None, None
    got = ct_fn(*[ct_t(a) if isinstance(a, np.ndarray) else a for a in arrays], **kwargs)
    return got, want


# ---- unary ------------------------------------------------------------------------------------

_TORCH_UNARY = {"positive": torch.positive, "rsqrt": torch.rsqrt}
_ACTIVATIONS = {
    "silu": torch.nn.functional.silu,
    "mish": torch.nn.functional.mish,
    "hardsigmoid": torch.nn.functional.hardsigmoid,
    "hardswish": torch.nn.functional.hardswish,
    "relu": torch.relu,
}
# ops whose float result dtype for integer inputs PyTorch refuses (coretorch's meta computes in
# the default float dtype instead): compared on float inputs only
_FLOAT_ONLY_IN_TORCH = {"silu", "mish", "hardsigmoid", "hardswish", "erfinv"}
# coretorch's meta keeps bool for square (PyTorch promotes to int64): values compared after cast
_DTYPE_DIFFERS = {"square"}

UNARY = (
    "abs",
    "neg",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "frac",
    "relu",
    "square",
    "positive",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "erf",
    "erfc",
    "erfinv",
    "reciprocal",
    "silu",
    "mish",
    "hardsigmoid",
    "hardswish",
    "logical_not",
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "signbit",
    "bitwise_not",
)


def _torch_unary(name):
    return _TORCH_UNARY.get(name) or _ACTIVATIONS.get(name) or getattr(torch, name)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name, dtype):
    if name in _FLOAT_ONLY_IN_TORCH and dtype not in FLOATS:
        pytest.skip("PyTorch has no integer kernel to compare with")
    a = values(dtype)
    got, want = run_both(getattr(ct, name), _torch_unary(name), a)
    if got is None:
        return
    if name in _DTYPE_DIFFERS and got.dtype.name != str(want.dtype).split(".")[-1]:
        want = want.to(getattr(torch, got.dtype.name))
    check(got, want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_noncontiguous_out_and_inplace(dtype):
    a = values(dtype, (4, 6))
    x = ct_t(a).t()[::2]  # transposed and strided
    want = np.exp(a.T[::2].astype(np.float64))
    np.testing.assert_allclose(
        ct.exp(x).numpy().astype(np.float64), want, **tol(dtype), equal_nan=True
    )
    out = ct.empty(3, 4, dtype=ct.float64)
    res = ct.sin(x, out=out)
    assert res is out and out.dtype is ct.float64
    with np.errstate(invalid="ignore"):
        want_sin = np.sin(a.T[::2]).astype(np.float64)
    np.testing.assert_allclose(out.numpy(), want_sin, **tol(dtype), equal_nan=True)
    y = ct_t(a)
    view = y[:, 1::2]
    view.sigmoid_()
    ref = a.copy().astype(np.float64)
    ref[:, 1::2] = 1 / (1 + np.exp(-ref[:, 1::2]))
    np.testing.assert_allclose(y.numpy().astype(np.float64), ref, **tol(dtype), equal_nan=True)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "sigmoid", "gelu", "tanh", "exp"])
def test_unary_zero_size_and_0d(name):
    fn = getattr(ct, name)
    assert fn(ct.empty(0, 3)).shape == (0, 3)
    v = 0.3
    got = fn(ct.tensor(v)).item()
    want = (
        _torch_unary(name)(torch.tensor(v)).item()
        if name != "gelu"
        else torch.nn.functional.gelu(torch.tensor(v)).item()
    )
    assert got == pytest.approx(want, rel=1e-6)


def test_erfinv_accuracy_float64():
    y = np.linspace(-0.999999, 0.999999, 1001)
    got = ct.erfinv(ct.tensor(y)).numpy()
    np.testing.assert_allclose(
        got, torch.erfinv(torch.from_numpy(y)).numpy(), rtol=1e-12, atol=1e-12
    )
    edge = ct.erfinv(ct.tensor([1.0, -1.0, 1.5, math.nan], dtype=ct.float64)).numpy()
    assert edge[0] == math.inf and edge[1] == -math.inf and np.isnan(edge[2:]).all()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "call",
    [
        ("leaky_relu", dict(negative_slope=0.2)),
        ("gelu", dict(approximate="tanh")),
        ("gelu", {}),
        ("softplus", dict(beta=2.0, threshold=3.0)),
        ("elu", dict(alpha=1.5)),
        ("hardtanh", dict(min_val=-0.5, max_val=2.0)),
        ("round", dict(decimals=2)),
        ("round", dict(decimals=-1)),
        ("nan_to_num", dict(nan=1.0)),
        ("nan_to_num", {}),
        ("sigmoid", {}),
    ],
)
def test_parametrized_unary(call, dtype):
    name, kw = call
    a = values(dtype, (5, 7), seed=3)
    if name == "gelu":
        a[0, :3] = 0.5  # PyTorch's vectorized float32 gelu gives NaN for +-inf; the limit is exact
    in_torch = name in ("round", "nan_to_num", "sigmoid")
    tfn = getattr(torch, name) if in_torch else getattr(torch.nn.functional, name)
    got, want = run_both(getattr(ct, name), tfn, a, **kw)
    if name == "gelu" and dtype == "float32":  # PyTorch's vectorized erf is good to ~2e-5
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=5e-5, atol=1e-6)
    else:
        check(got, want, dtype)


def test_hardtanh_int_and_unsupported_dtypes():
    check(
        ct.hardtanh(ct.tensor([-3, 0, 3])), torch.nn.functional.hardtanh(torch.tensor([-3, 0, 3]))
    )
    with pytest.raises(NotImplementedError, match="frac"):
        ct.frac(ct.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="abs"):
        ct.abs(ct.tensor([True]))
    with pytest.raises(RuntimeError, match="relu"):
        ct.relu(ct.tensor([True]))
    with pytest.raises(NotImplementedError, match="round"):
        ct.round(ct.tensor([15]), decimals=-1)


# ---- binary -----------------------------------------------------------------------------------

BINARY = (
    "add",
    "sub",
    "div",
    "pow",
    "mul",
    "maximum",
    "minimum",
    "remainder",
    "fmod",
    "floor_divide",
    "fmax",
    "fmin",
    "atan2",
    "hypot",
    "logaddexp",
    "xlogy",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
)


def _binary_values(name, dtype, shape, seed):
    a = values(dtype, shape, seed)
    if name == "pow" and dtype in INTS:
        a = np.clip(a, 0 if dtype == "uint8" else -3, 4).astype(dtype)
    if name.startswith("bitwise_") and "shift" in name and dtype != "bool":
        a = np.clip(a, 0, 6).astype(dtype)
    return a


def _divisor_safe(name, dtype, b):
    if name in ("remainder", "fmod", "floor_divide") and dtype in INTS + ["bool"]:
        b = np.where(b == 0, 1, b).astype(b.dtype)
    return b


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_torch_with_broadcasting(name, dtype):
    if name in ("hypot", "logaddexp") and dtype not in FLOATS:
        pytest.skip("PyTorch has no integer kernel to compare with")
    a = _binary_values(name, dtype, (3, 1, 4), 1)
    b = _divisor_safe(name, dtype, _binary_values(name, dtype, (5, 1), 2))
    got, want = run_both(getattr(ct, name), getattr(torch, name), a, b)
    if got is not None:
        check(got, want, dtype)


_REFLECTED = {
    "add": lambda s, t: s + t,
    "sub": lambda s, t: s - t,
    "mul": lambda s, t: s * t,
    "div": lambda s, t: s / t,
    "remainder": lambda s, t: s % t,
    "floor_divide": lambda s, t: s // t,
    "pow": lambda s, t: s**t,
    "eq": lambda s, t: s == t,
    "lt": lambda s, t: s < t,
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "name",
    [
        "add",
        "sub",
        "mul",
        "div",
        "remainder",
        "floor_divide",
        "maximum",
        "eq",
        "lt",
        "pow",
        "atan2",
        "bitwise_and",
    ],
)
@pytest.mark.parametrize("scalar", [2, -1, 2.5, True])
def test_binary_with_python_scalar_on_either_side(name, dtype, scalar):
    a = _binary_values(name, dtype, (2, 5), 4)
    fn_ct, fn_t = getattr(ct, name), getattr(torch, name)
    if name in ("maximum", "atan2"):  # PyTorch takes tensors only: a 0-d tensor promotes alike
        fn_t = lambda x, s, f=fn_t: f(x, torch.tensor(s))  # noqa: E731
    got, want = run_both(fn_ct, fn_t, a, scalar)
    if got is not None:
        check(got, want)
    if name not in _REFLECTED:
        return  # PyTorch has no Scalar-first form of these
    a = _divisor_safe(name, dtype, a)
    try:
        want = _REFLECTED[name](scalar, torch_of(a))
    except (RuntimeError, TypeError, NotImplementedError):
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            fn_ct(scalar, ct_t(a))
        return
    check(fn_ct(scalar, ct_t(a)), want)


def test_scalar_first_dunders():
    x = ct.tensor([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 / x).numpy(), [2.0, 1.0, 0.5])
    np.testing.assert_allclose((1 - x).numpy(), [0.0, -1.0, -3.0])
    np.testing.assert_allclose((2**x).numpy(), [2.0, 4.0, 16.0])
    np.testing.assert_allclose(ct.div(2, x).numpy(), [2.0, 1.0, 0.5])


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize(
    "dtype", ["int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
)
def test_div_rounding_modes(mode, dtype):
    if dtype != "uint8":
        a = np.array([-7, 7, -7, 7, 5, -5, 0, 3], dtype=dtype)
        b = np.array([2, -2, -2, 2, 3, 3, 5, 7], dtype=dtype)
    else:
        a = np.array([7, 7, 0, 9, 5, 5, 0, 3], dtype=dtype)
        b = np.array([2, 3, 2, 2, 3, 3, 5, 7], dtype=dtype)
    got, want = run_both(ct.div, torch.div, a, b, rounding_mode=mode)
    check(got, want, dtype)
    if dtype.startswith("float"):
        z = np.array([5.0, -5.0, 0.0], dtype=dtype)
        got, want = run_both(ct.div, torch.div, z, np.zeros(3, dtype), rounding_mode=mode)
        check(got, want, dtype)


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_sign_semantics_of_modulo_ops(name, dtype):
    a = np.array([-7, 7, -7, 7, 0, -1], dtype=dtype)
    b = np.array([2, -2, -2, 2, 3, 5], dtype=dtype)
    got, want = run_both(getattr(ct, name), getattr(torch, name), a, b)
    check(got, want, dtype)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
        lambda m, a, b: m.div(a, b, rounding_mode="floor"),
        lambda m, a, b: m.remainder(a, b),
        lambda m, a, b: m.fmod(a, b),
        lambda m, a, b: m.floor_divide(a, b),
    ],
)
def test_integer_division_by_zero_raises(call):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        call(torch, torch.tensor([5]), torch.tensor([0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        call(ct, ct.tensor([5]), ct.tensor([0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        call(ct, ct.tensor([5]), 0)


def test_integer_pow_semantics():
    a = np.array([2, -1, 1, 0, 3, -2, 7], dtype=np.int64)
    b = np.array([-1, -3, -2, -1, 0, 3, 30], dtype=np.int64)
    check(ct.pow(ct.tensor(a), ct.tensor(b)), torch.pow(torch.tensor(a), torch.tensor(b)))
    check(ct.tensor([2], dtype=ct.int8) ** 9, torch.tensor([2], dtype=torch.int8) ** 9)
    check(ct.pow(2, ct.tensor([-1, 0, 3])), torch.pow(2, torch.tensor([-1, 0, 3])))
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ct.pow(ct.tensor([2, 3]), -1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_pow_of_negative_bases_to_huge_exponents(dtype):
    # every float of magnitude >= 2**53 is an even integer: (-0.5) ** 1e30 is 0, (-2) ** 1e30
    # inf; 2**53 - 1 is the largest odd one a float64 holds
    x = np.array([-0.5, -2.0, -1.0, 0.5, -0.0, -1.5], dtype)
    exps = [1e30, -1e30, 1e300, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, -(2.0**70)]
    if dtype == "float64":
        exps += [2.0**53 - 1, -(2.0**53 - 1)]
    with np.errstate(all="ignore"):
        for e in exps:
            want = np.power(x, np.array(e, dtype))
            np.testing.assert_array_equal((ct.tensor(x) ** e).numpy(), want, err_msg=f"** {e}")
        y = np.array(exps[: len(x)], dtype)
        np.testing.assert_array_equal(
            (ct.tensor(x) ** ct.tensor(y)).numpy(), np.power(x, y), err_msg="tensor exponents"
        )


def test_nan_propagation_in_maximum_minimum_and_comparisons():
    a = ct.tensor([math.nan, 1.0, 2.0])
    b = ct.tensor([0.0, math.nan, 1.0])
    assert np.isnan(ct.maximum(a, b).numpy()[:2]).all()
    assert np.isnan(ct.minimum(a, b).numpy()[:2]).all()
    np.testing.assert_array_equal(ct.fmax(a, b).numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal((a == a).numpy(), [False, True, True])
    np.testing.assert_array_equal((a != a).numpy(), [True, False, False])


def test_integer_wraparound_like_torch():
    check(ct.tensor([1, 2], dtype=ct.int8) + 1000, torch.tensor([1, 2], dtype=torch.int8) + 1000)
    check(ct.tensor([3], dtype=ct.uint8) - 5, torch.tensor([3], dtype=torch.uint8) - 5)
    check(ct.tensor([255], dtype=ct.uint8) == -1, torch.tensor([255], dtype=torch.uint8) == -1)
    check(ct.neg(ct.tensor([1], dtype=ct.uint8)), torch.neg(torch.tensor([1], dtype=torch.uint8)))


def test_shifts_out_of_range():
    for dtype in ("int8", "int64", "uint8"):
        a = np.array([1, 5, 100, 3], dtype=dtype)
        b = np.array([9, 1, 64, 0], dtype=dtype)
        for name in ("bitwise_left_shift", "bitwise_right_shift"):
            got, want = run_both(getattr(ct, name), getattr(torch, name), a, b)
            check(got, want)
    x, s = ct.tensor([1, -8]), ct.tensor([-1, 64])
    tx, ts = torch.tensor([1, -8]), torch.tensor([-1, 64])
    check(x >> s, tx >> ts)
    check(x << s, tx << ts)


@pytest.mark.parametrize("alpha", [2, 0.5, -1])
def test_add_sub_alpha(alpha):
    a, b = values("float32", (4, 3)), values("float32", (3,), 5)
    for name in ("add", "sub"):
        got, want = run_both(getattr(ct, name), getattr(torch, name), a, b, alpha=alpha)
        check(got, want)
    ai, bi = values("int64", (4, 3)), values("int64", (3,), 5)
    if isinstance(alpha, int):
        check(
            ct.add(ct_t(ai), ct_t(bi), alpha=alpha),
            torch.add(torch_of(ai), torch_of(bi), alpha=alpha),
        )
    else:
        with pytest.raises(RuntimeError, match="alpha"):
            ct.add(ct_t(ai), ct_t(bi), alpha=alpha)


def test_binary_noncontiguous_and_0d_operands():
    a = values("float64", (6, 4))
    b = values("float64", (4, 6), 7)
    x, y = ct_t(a)[::2], ct_t(b).t()[::2]  # both strided, one transposed
    np.testing.assert_allclose((x * y).numpy(), a[::2] * b.T[::2], equal_nan=True)
    s = ct.tensor(2.0, dtype=ct.float64)  # 0-d tensor operand: broadcasts, doesn't promote
    r = ct.tensor([1, 2], dtype=ct.float32) * s
    assert r.dtype is ct.float32 and r.numpy().tolist() == [2.0, 4.0]
    r0 = ct.tensor(3) + ct.tensor(4)
    assert r0.shape == () and r0.item() == 7
    z = ct.empty(0, 4) + ct.ones(4)
    assert z.shape == (0, 4)


def test_binary_out_with_castable_dtype_and_resize():
    a, b = ct.tensor([1, 2, 3]), ct.tensor([4, 5, 6])
    out = ct.empty(3, dtype=ct.float64)
    assert ct.add(a, b, out=out) is out
    assert out.numpy().tolist() == [5.0, 7.0, 9.0]
    out = ct.empty(3, dtype=ct.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ct.div(a, b, out=out)
    out2 = ct.empty(2, 3)
    ct.mul(ct.ones(3), ct.full((3,), 2.0), out=out2)
    assert out2.shape == (3,) and out2.numpy().tolist() == [2.0, 2.0, 2.0]
    cmp_out = ct.empty(3, dtype=ct.float32)
    ct.lt(a, 2.5, out=cmp_out)
    assert cmp_out.numpy().tolist() == [1.0, 1.0, 0.0]


def test_inplace_binary_with_overlapping_views():
    x = ct.arange(10.0)
    x[1:] += x[:-1]  # reads overlap the destination
    ref = np.arange(10.0, dtype=np.float32)
    ref[1:] += ref[:-1].copy()
    np.testing.assert_array_equal(x.numpy(), ref)
    y = ct.arange(6.0).reshape(2, 3)
    y.mul_(ct.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3) * [1, 2, 3])
    i = ct.tensor([5, 6, 7])
    i.floor_divide_(2)
    assert i.numpy().tolist() == [2, 3, 3]
    with pytest.raises(RuntimeError):
        i.div_(2)  # float result into an int tensor


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_parallel_paths(name, dtype):
    n = (1 << 18) + 3
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype) + 4
    fn = getattr(ct, name)
    np.testing.assert_allclose(
        fn(ct_t(a), ct_t(b)).numpy(),
        getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide"}[name])(
            a, b
        ),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        fn(ct_t(a), 1.5).numpy(), getattr(torch, name)(torch.from_numpy(a), 1.5).numpy(), rtol=1e-6
    )
    x = ct_t(a)
    getattr(x, name + "_")(ct_t(b))
    np.testing.assert_allclose(
        x.numpy(), getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy(), rtol=1e-6
    )


# ---- ternary ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
def test_where(dtype):
    c = values("bool", (3, 4), 9)
    a, b = values(dtype, (3, 4), 1), values(dtype, (4,), 2)
    got, want = run_both(ct.where, torch.where, c, a, b)
    check(got, want, dtype)
    check(ct.where(ct_t(c), 1, 2.5), torch.where(torch_of(c), 1, 2.5))
    check(ct.where(ct_t(c), ct_t(a), 0), torch.where(torch_of(c), torch_of(a), 0))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float16", "float32", "float64"])
def test_clamp_scalar_and_tensor_bounds(dtype):
    a = values(dtype, (4, 5), 3)
    for lo, hi in ((1, 4), (None, 2), (-1, None), (2.5, 7), (5, 2)):
        got, want = run_both(ct.clamp, torch.clamp, a, lo, hi)
        check(got, want, dtype)
    lo_t = values(dtype, (5,), 4)
    hi_t = (lo_t.astype(np.float64) + 3).astype(dtype)
    got, want = run_both(ct.clamp, torch.clamp, a, lo_t, hi_t)
    check(got, want, dtype)
    x = ct_t(a)
    x.clamp_(0, 3)
    check(x, torch.clamp(torch_of(a), 0, 3))


@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp_addcmul_addcdiv(dtype):
    a, b = values(dtype, (3, 4), 1), values(dtype, (4,), 2)
    w = np.abs(values(dtype, (3, 1), 3))
    for weight in (0.25, 0.75, w):
        got, want = run_both(ct.lerp, torch.lerp, a, b, weight)
        check(got, want, dtype)
    for name in ("addcmul", "addcdiv"):
        got, want = run_both(getattr(ct, name), getattr(torch, name), a, b, w, value=0.5)
        check(got, want, dtype)
    x = ct_t(a)
    x.addcmul_(ct_t(b), ct_t(b), value=2)
    check(x, torch.addcmul(torch_of(a), torch_of(b), torch_of(b), value=2), dtype)


def test_addcmul_int_and_lerp_int_errors():
    a, b = np.arange(6).reshape(2, 3), np.arange(3)
    check(
        ct.addcmul(ct_t(a), ct_t(b), ct_t(b), value=3),
        torch.addcmul(torch_of(a), torch_of(b), torch_of(b), value=3),
    )
    with pytest.raises(NotImplementedError, match="lerp"):
        ct.lerp(ct_t(a), ct_t(a), 0.5)
    with pytest.raises(RuntimeError, match="addcdiv"):
        ct.addcdiv(ct_t(a), ct_t(b), ct_t(b))


# ---- factories and copy -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,kw",
    [
        ((10,), {}),
        ((0, 1, 0.1), {}),
        ((10, 0, -3), {}),
        ((1, 2.5, 0.5), {}),
        ((-3, 3), dict(dtype=ct.float64)),
        ((0, 1, 1 / 3), dict(dtype=ct.float64)),
        ((5,), dict(dtype=ct.int8)),
        ((0.5, 5), dict(dtype=ct.int32)),
    ],
)
def test_arange_matches_torch(args, kw):
    tkw = {k: getattr(torch, v.name) for k, v in kw.items()}
    check(ct.arange(*args, **kw), torch.arange(*args, **tkw))


@pytest.mark.parametrize(
    "args,dtype",
    [
        ((0, 1, 5), None),
        ((-1, 1, 7), "int64"),
        ((0, 10, 1), None),
        ((3, -2, 11), "float64"),
        ((0, 1, 0), None),
        ((1, 1000, 777), "float32"),
        ((0, 1, 9), "float16"),
    ],
)
def test_linspace_matches_torch(args, dtype):
    got = ct.linspace(*args, dtype=None if dtype is None else getattr(ct, dtype))
    want = torch.linspace(*args, dtype=None if dtype is None else getattr(torch, dtype))
    check(got, want)


@pytest.mark.parametrize("dtype", ALL)
def test_fill_and_full(dtype):
    v = True if dtype == "bool" else (3 if dtype in INTS else 2.5)
    check(
        ct.full((2, 3), v, dtype=getattr(ct, dtype)),
        torch.full((2, 3), v, dtype=getattr(torch, dtype)),
    )
    x = ct.zeros(4, 4, dtype=getattr(ct, dtype))
    x.t()[::2].fill_(ct.tensor(1))
    ref = np.zeros((4, 4), dtype)
    ref.T[::2] = 1
    np.testing.assert_array_equal(x.numpy(), ref)


def test_fill_overflow_raises():
    with pytest.raises(RuntimeError, match="overflow"):
        ct.zeros(2, dtype=ct.int8).fill_(1000)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ["bool", "uint8", "int32", "float16", "float64"])
def test_copy_casts_and_broadcasts(src, dst):
    a = values(src, (1, 4), 5)
    if dst in INTS + ["bool"] and src in FLOATS:
        a = np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-2.0)  # float->int of NaN is undefined
    if dst == "uint8":
        a = np.abs(a)
    x = ct.empty(3, 4, dtype=getattr(ct, dst))
    x.copy_(ct_t(a))
    want = torch.empty(3, 4, dtype=getattr(torch, dst)).copy_(torch_of(a))
    check(x, want)
    y = ct.empty(4, 3, dtype=getattr(ct, dst)).t()  # non-contiguous destination
    y.copy_(ct_t(a))
    check(y.contiguous(), want)


def test_clone_and_to_keep_values():
    a = ct_t(values("float32", (3, 4)))
    b = a.t().clone()
    np.testing.assert_array_equal(b.numpy(), a.numpy().T)
    assert b.is_contiguous()
    c = a.to(ct.float64)
    np.testing.assert_array_equal(c.numpy(), a.numpy().astype(np.float64))


# ---- errors -----------------------------------------------------------------------------------


def test_no_numba_traceback_reaches_the_user():
    from coretorch_cpu_numba.elementwise import jit_apply
    from coretorch_cpu_numba.registry import guarded

    def bad(out, x):  # a loop asked for a type numba cannot compile (a string)
        jit_apply("sigmoid", out, (np.array(["a", "b"]),), np.dtype("U1"))

    k = guarded("sigmoid", bad)
    with pytest.raises(RuntimeError, match=r"sigmoid\(\): the cpu kernel does not support") as e:
        k(ct.empty(2), ct.empty(2))
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_shape_and_device_errors_come_from_meta_rules():
    with pytest.raises(RuntimeError, match=r"add\(\).*size of tensor a \(3\)"):
        ct.ones(3) + ct.ones(4)
    with pytest.raises(RuntimeError, match=r"same device"):
        ct.ones(3) + ct.ones(3, device="meta")


def test_no_numpy_warnings_for_ieee_results():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ct.tensor([1.0, 0.0, -1.0])
        assert np.isinf((x / 0).numpy()[0])
        ct.log(x)
        ct.exp(ct.tensor([1000.0]))
        ct.tensor([3e38]) * 10
        ct.tensor([math.nan]).to(ct.int32)


# ---- allocator --------------------------------------------------------------------------------


def test_allocations_are_64_byte_aligned():
    for n in (0, 1, 3, 7, 17, 1000, 4097, 1 << 20):
        for dtype in (ct.uint8, ct.float16, ct.float64):
            t = ct.empty(n, dtype=dtype)
            assert t.data_ptr() % 64 == 0
            if n:
                assert t.numpy().ctypes.data == t.data_ptr()


def test_allocator_stats_and_memory_events():
    import gc

    from coretorch.tensor.storage import add_memory_hook, remove_memory_hook
    from coretorch_cpu_numba.allocator import allocator

    events = []
    hook = add_memory_hook(events.append)
    try:
        gc.collect()
        before = allocator.stats()
        t = ct.empty(1000, dtype=ct.float32)
        mid = allocator.stats()
        assert mid["allocated_bytes"] - before["allocated_bytes"] == 4000
        assert mid["num_allocs"] == before["num_allocs"] + 1
        assert mid["peak_bytes"] >= mid["allocated_bytes"]
        addr = t.data_ptr()
        del t
        gc.collect()
        after = allocator.stats()
        assert after["allocated_bytes"] == before["allocated_bytes"]
        assert after["num_frees"] == before["num_frees"] + 1
    finally:
        remove_memory_hook(hook)
    mine = [e for e in events if e.address == addr]
    assert [e.nbytes for e in mine] == [4000, -4000]
    assert str(mine[0].device) == "cpu"
    allocator.reset_peak_stats()
    assert allocator.stats()["peak_bytes"] == allocator.stats()["allocated_bytes"]


def test_views_do_not_allocate():
    from coretorch_cpu_numba.allocator import allocator

    t = ct.empty(10, 10)
    n = allocator.num_allocs
    t.t()[::2].unsqueeze(0)
    t[1:3].view(20)
    assert allocator.num_allocs == n


def test_small_allocations_never_overlap():
    ts = [ct.full((1 + i % 37,), i, dtype=ct.int16 if i % 2 else ct.float64) for i in range(300)]
    for i, t in enumerate(ts):
        assert (t.numpy() == i).all()
        assert t.data_ptr() % 64 == 0
    spans = sorted((t.data_ptr(), t.data_ptr() + t.nbytes) for t in ts)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


_POOL_PROBE = """
import os, coretorch, numba
from numba.np.ufunc import parallel
print(parallel._is_initialized, os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("user", [None, "ACTIVE"])
def test_numba_pool_starts_at_load_and_leaves_the_environment_as_it_was(user):
    # the spin setting reaches numba's libgomp only; child processes and PyTorch's own libgomp
    # see the user's environment (OMP_WAIT_POLICY, when set, is the user's choice: no override)
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if user:
        env["OMP_WAIT_POLICY"] = user
    r = subprocess.run(
        [sys.executable, "-c", _POOL_PROBE], env=env, capture_output=True, text=True, check=True
    )
    assert r.stdout.split() == ["True", "None", str(user)]
