"""complex64 / complex128: the dtype objects, promotion (PyTorch's rules, checked against
PyTorch's own table when it is installed), factories, printing, serialization, and the cpu,
meta and (emulated) cuda backends."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest

import coretorch as ct
from coretorch import dtypes as dt
from coretorch.device import device_types

COMPLEX = (ct.complex64, ct.complex128)


def test_dtype_objects():
    assert ct.complex64.itemsize == 8 and ct.complex128.itemsize == 16
    assert ct.cfloat is ct.complex64 and ct.cdouble is ct.complex128
    for d in COMPLEX:
        assert d.is_complex and not d.is_floating_point and d.is_signed
        assert d.to_complex() is d
    assert ct.complex64.to_real() is ct.float32 and ct.complex128.to_real() is ct.float64
    assert ct.float64.to_complex() is ct.complex128 and ct.float32.to_complex() is ct.complex64
    assert ct.float16.to_complex() is ct.complex64  # no complex32 here
    assert not ct.float32.is_complex and ct.float32.to_real() is ct.float32
    with pytest.raises(RuntimeError, match="to_complex"):
        ct.int64.to_complex()
    assert ct.finfo(ct.complex64).eps == ct.finfo(ct.float32).eps
    assert dt.from_numpy_dtype(np.complex128) is ct.complex128


def test_promotion_rules():
    P = ct.promote_types
    assert P(ct.float64, ct.complex64) is ct.complex128  # the wider float wins
    assert P(ct.float32, ct.complex64) is ct.complex64
    assert P(ct.float16, ct.complex64) is ct.complex64
    assert P(ct.int64, ct.complex64) is ct.complex64
    assert P(ct.bool, ct.complex128) is ct.complex128
    assert P(ct.complex64, ct.complex128) is ct.complex128
    x32, x64 = ct.ones(2), ct.ones(2, dtype=ct.float64)
    assert (x32 + 1j).dtype is ct.complex64 and (x64 + 1j).dtype is ct.complex128
    assert (ct.arange(2) + 1j).dtype is ct.complex64  # int + complex -> default
    assert ct.result_type(ct.ones(2, dtype=ct.complex64), 2.5) is ct.complex64
    assert ct.result_type(x64, ct.tensor(1j)) is ct.complex128  # 0-d complex keeps x's float
    ct.set_default_dtype(ct.float64)
    try:
        assert (ct.arange(2) + 1j).dtype is ct.complex128
        assert ct.tensor([1j]).dtype is ct.complex128
    finally:
        ct.set_default_dtype(ct.float32)


def test_promotion_table_matches_pytorch():
    torch = pytest.importorskip("torch")
    for a, b in itertools.product(dt.all_dtypes, repeat=2):
        if not (a.is_complex or b.is_complex):
            continue
        want = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
        if want is torch.complex32:  # PyTorch's complex half; coretorch uses complex64
            want = torch.complex64
        assert ct.promote_types(a, b).name == str(want).split(".")[1], (a, b)
    for tdt, scalar in itertools.product(
        ("int32", "float16", "float32", "float64", "complex64", "complex128"), (1j, 2.5, 3)
    ):
        t = torch.ones(2, dtype=getattr(torch, tdt))
        want = (t + scalar).dtype
        if want is torch.complex32:
            want = torch.complex64
        got = (ct.ones(2, dtype=getattr(ct, tdt)) + scalar).dtype
        assert got.name == str(want).split(".")[1], (tdt, scalar)


def test_factories():
    assert ct.tensor([1 + 2j, 3]).dtype is ct.complex64
    assert ct.tensor(1j).shape == ()
    a = np.array([[1 + 1j, 2], [3j, -4]])
    t = ct.tensor(a)
    assert t.dtype is ct.complex128 and np.array_equal(t.numpy(), a)
    assert ct.tensor(a.astype(np.complex64)).dtype is ct.complex64
    assert ct.from_numpy(a).dtype is ct.complex128
    assert ct.tensor([1, 2], dtype=ct.complex64).tolist() == [1 + 0j, 2 + 0j]
    assert ct.tensor([1j]).item() == 1j
    for d in COMPLEX:
        assert ct.zeros(2, 3, dtype=d).numpy().dtype == d.numpy
        assert np.all(ct.ones(3, dtype=d).numpy() == 1)
        assert ct.empty(4, dtype=d).dtype is d
        assert ct.full((2,), 1 - 2j, dtype=d).tolist() == [1 - 2j, 1 - 2j]
    assert ct.full((2,), 1 + 1j).dtype is ct.complex64
    assert ct.zeros(2, dtype=complex).dtype is ct.complex64


def test_randn_complex_has_unit_variance():
    ct.manual_seed(0)
    z = ct.randn(20000, dtype=ct.complex128).numpy()
    # PyTorch's complex normal: each part N(0, 1/2), so E|z|^2 = 1
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.05
    assert abs(np.var(z.real) - 0.5) < 0.03 and abs(np.var(z.imag) - 0.5) < 0.03
    u = ct.rand(1000, dtype=ct.complex64).numpy()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_printing_matches_pytorch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    cases = [
        np.array([1 + 2j, 3 - 4j]),
        rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)),
        np.array(1.5 - 0.0j),
        np.array([1e-5 + 1j, 1e5 - 2j]),
        np.array([np.nan + 1j, complex(np.inf, -np.inf), -0.0 - 0.0j]),
        rng.standard_normal(2000) * 1j,
        np.zeros((0, 2), complex),
    ]
    for a in cases:
        a = a.astype(dtype)
        want = repr(torch.tensor(a)).replace("torch.", "coretorch.")
        assert repr(ct.tensor(a)) == want


def test_printing_suffixes():
    assert repr(ct.tensor([1j])) == "tensor([0.+1.j])"
    assert (
        repr(ct.tensor([1j], dtype=ct.complex128)) == "tensor([0.+1.j], dtype=coretorch.complex128)"
    )


def _roundtrip(obj):
    buf = io.BytesIO()
    ct.save(obj, buf)
    buf.seek(0)
    return ct.load(buf), buf.getvalue()


def test_serialization_roundtrip():
    y = ct.randn(3, 4, dtype=ct.complex128)
    obj = {
        "a": ct.tensor([1 + 2j, -3j]),
        "y": y,
        "yt": y.t(),
        "row": y[1],
        "empty": ct.zeros(0, 2, dtype=ct.complex128),
    }
    back, raw = _roundtrip(obj)
    for k, v in obj.items():
        assert back[k].dtype is v.dtype and back[k].shape == v.shape
        assert np.array_equal(back[k].numpy(), v.numpy())
    assert back["yt"].stride() == y.t().stride()
    back["row"].add_(1)  # the views still share one storage
    assert np.array_equal(back["y"][1].numpy(), back["row"].numpy())


def test_serialization_file_is_plain_safetensors():
    """complex64 has safetensors' C64 code; complex128 (no code) is stored as float64 pairs, so
    any safetensors reader opens the file."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    y = ct.randn(2, 3, dtype=ct.complex128)
    _, raw = _roundtrip({"a": ct.tensor([1j]), "y": y})
    arrays = safetensors_numpy.load(raw)
    kinds = sorted((a.dtype.str, a.shape) for a in arrays.values())
    assert kinds == [("<c8", (1,)), ("<f8", (2, 3, 2))]
    pairs = next(a for a in arrays.values() if a.dtype == np.float64)
    assert np.array_equal(pairs[..., 0] + 1j * pairs[..., 1], y.numpy())


def test_backends_compute_complex(device):
    a = np.array([[1 + 2j, 3 - 4j], [0.5j, -1]])
    b = np.array([[2 - 1j, 1j], [1, 1 + 1j]])
    x, y = ct.tensor(a, device=device), ct.tensor(b, device=device)
    results = {
        "add": (x + y, a + b),
        "mul": (x * y, a * b),
        "div": (x / y, a / b),
        "exp": (x.exp(), np.exp(a)),
        "log": (x.log(), np.log(a)),
        "sqrt": (x.sqrt(), np.sqrt(a)),
        "pow": (x**2, a**2),
        "pow-t": (x.pow(y), a**b),
        "sum": (x.sum(0), a.sum(0)),
        "mean": (x.mean(), a.mean()),
        "matmul": (x @ y, a @ b),
        "neg": (-x, -a),
        "abs": (x.abs(), np.abs(a)),
        "contiguous": (x.t().contiguous(), a.T),
        "cat": (ct.cat([x, y]), np.concatenate([a, b])),
        "to": (ct.arange(3, device=device).to(ct.complex64), np.arange(3).astype(np.complex64)),
    }
    for name, (got, want) in results.items():
        assert got.dtype.name == want.dtype.name, name
        assert tuple(got.shape) == want.shape, name
        if device_types()[device].has_data:
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, err_msg=name)
