"""bfloat16: the dtype (ml_dtypes' numpy type), conversions, printing, the cpu and meta backends,
modules and safetensors files (BF16)."""

import json
import struct

import ml_dtypes
import numpy as np
import pytest

import coretorch as ct

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_dtype_object():
    b = ct.bfloat16
    assert b.name == "bfloat16" and b.itemsize == 2 and b.is_floating_point and b.is_signed
    assert b.numpy == BF16 and repr(b) == "coretorch.bfloat16"
    assert ct.dtypes.from_numpy_dtype(BF16) is b
    assert ct.dtypes.opmath_dtype(b) is ct.float32 and ct.dtypes.opmath_dtype(ct.int8) is ct.int8


@pytest.mark.parametrize("other,want", [(1, "bfloat16"), (2.5, "bfloat16"), (True, "bfloat16")])
def test_python_scalars_keep_bfloat16(other, want):
    x = ct.tensor([1.0, 2.0], dtype=ct.bfloat16)
    assert (x + other).dtype.name == want and (x * other).dtype.name == want


def test_tensor_promotion():
    x = ct.ones(2, dtype=ct.bfloat16)
    assert (x + ct.ones(2, dtype=ct.float16)).dtype is ct.float32
    assert (x + ct.ones(2, dtype=ct.int64)).dtype is ct.bfloat16
    assert (x + ct.ones(2, dtype=ct.float32)).dtype is ct.float32
    assert (x + ct.tensor(1.0, dtype=ct.float64)).dtype is ct.bfloat16  # 0-d: same category
    assert (ct.arange(3) * 0.5).dtype is ct.float32


def test_conversions_round_to_nearest_even():
    x = ct.tensor([1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.14159, -1e-3], dtype=ct.float32)
    b = x.to(ct.bfloat16)
    want = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.14159, -1e-3], np.float32).astype(BF16)
    assert b.dtype is ct.bfloat16 and b.numpy().dtype == BF16
    np.testing.assert_array_equal(b.numpy(), want)
    assert b.tolist() == [1.0, 1.015625, 3.140625, -0.00099945068359375]
    assert x.bfloat16().dtype is ct.bfloat16 and b.float().dtype is ct.float32
    assert b.type() == "torch.BFloat16Tensor" and x.type("torch.BFloat16Tensor").dtype is b.dtype
    assert isinstance(b, ct.BFloat16Tensor)
    assert ct.from_numpy(want).dtype is ct.bfloat16
    assert b.to(ct.int64).tolist() == [1, 1, 3, 0]


def test_printing_matches_torch():
    torch = pytest.importorskip("torch")
    vals = [[1.5, -2.25, 1e-3], [300.0, 0.0, 7.0]]
    got = repr(ct.tensor(vals, dtype=ct.bfloat16))
    want = repr(torch.tensor(vals, dtype=torch.bfloat16))
    assert got.replace("coretorch.", "torch.") == want


def test_finfo():
    f = ct.finfo(ct.bfloat16)
    assert (f.bits, f.eps, f.tiny) == (16, 2.0**-7, 2.0**-126)
    assert f.max == float(ml_dtypes.finfo(BF16).max)


def test_cpu_kernels_compute_in_float32_and_round_once():
    # 1 + 2^-8 is not a bfloat16, but (1 + 2^-8) * 2 - 1 computed in float32 is exact before the
    # final rounding; a kernel that rounded every step would lose it
    a = ct.tensor([1.0, 256.0], dtype=ct.bfloat16)
    b = ct.tensor([2**-8, 1.0], dtype=ct.bfloat16)
    assert ct.addcmul(a, b, ct.tensor([1.0, 1.0], dtype=ct.bfloat16)).tolist() == [1.0, 257.0 - 1]
    x = ct.linspace(-3, 3, 50).bfloat16()
    for fn in (ct.exp, ct.tanh, ct.sigmoid, lambda t: t.softmax(0), ct.nn.functional.gelu):
        got = fn(x)
        want = fn(x.float()).bfloat16()
        assert got.dtype is ct.bfloat16
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_module_to_bfloat16_trains():
    ct.manual_seed(0)
    m = ct.nn.Sequential(
        ct.nn.Conv2d(2, 3, 3), ct.nn.ReLU(), ct.nn.Flatten(), ct.nn.Linear(12, 4)
    ).bfloat16()
    assert all(p.dtype is ct.bfloat16 for p in m.parameters())
    x = ct.randn(5, 2, 4, 4).bfloat16()
    loss = ct.nn.functional.cross_entropy(m(x), ct.tensor([0, 1, 2, 3, 0]))
    assert loss.dtype is ct.bfloat16
    loss.backward()
    assert all(p.grad.dtype is ct.bfloat16 for p in m.parameters())


def test_meta_backend_keeps_dtype():
    x = ct.empty(2, 3, dtype=ct.bfloat16, device="meta")
    assert (x @ ct.empty(3, 4, dtype=ct.bfloat16, device="meta")).dtype is ct.bfloat16
    assert (x + ct.empty(2, 3, dtype=ct.float16, device="meta")).dtype is ct.float32
    assert x.sum().dtype is ct.bfloat16 and x.float().dtype is ct.float32


def test_safetensors_file_stores_bf16(tmp_path):
    x = ct.randn(3, 4).bfloat16()
    path = tmp_path / "w.safetensors"
    ct.save({"x": x}, path)
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    assert [v["dtype"] for k, v in header.items() if k != "__metadata__"] == ["BF16"]
    y = ct.load(path)["x"]
    assert y.dtype is ct.bfloat16
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_safetensors_interop_with_the_safetensors_package(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    t = torch.randn(4, 5).bfloat16()
    save_file({"t": t}, str(tmp_path / "a.safetensors"))
    got = ct.load(tmp_path / "a.safetensors")["t"]
    assert got.dtype is ct.bfloat16 and got.tolist() == t.tolist()
    ct.save({"u": got * 2}, tmp_path / "b.safetensors")
    [back] = load_file(str(tmp_path / "b.safetensors")).values()  # the one stored buffer
    assert back.dtype == torch.bfloat16 and back.tolist() == (t * 2).tolist()
