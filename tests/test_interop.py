"""numpy and DLPack interop of cpu tensors: memory is shared both ways, never copied."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct


def test_numpy_shares_memory_both_ways():
    t = ct.zeros(2, 3)
    a = t.numpy()
    a[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t.add_(1)
    assert a[0, 1] == 6.0 and a[1, 2] == 1.0
    assert np.shares_memory(a, t.numpy())


def test_numpy_of_views_is_strided_and_shared():
    t = ct.arange(12.0).reshape(3, 4)
    v = t.t()[1:, ::2]
    a = v.numpy()
    assert a.shape == (3, 2) and not a.flags.c_contiguous
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4).T[1:, ::2])
    a[0, 0] = -1
    assert t[0, 1].item() == -1


def test_from_numpy_shares_memory_and_keeps_dtype():
    for dtype in (
        np.bool_,
        np.uint8,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
    ):
        a = np.zeros(4, dtype=dtype)
        t = ct.from_numpy(a)
        assert t.dtype.name == np.dtype(dtype).name
        t.fill_(1)
        assert a.tolist() == np.ones(4, dtype=dtype).tolist()


def test_from_numpy_non_contiguous_and_offset():
    base = np.arange(24, dtype=np.int64).reshape(4, 6)
    a = base[1:, ::2].T  # offset, strides (16 bytes, 48 bytes), transposed
    t = ct.from_numpy(a)
    assert t.shape == (3, 3) and t.stride() == (2, 6)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal((t * 2).numpy(), a * 2)
    t.mul_(10)
    assert base[1, 0] == 60 and base[1, 1] == 7  # written through, gaps untouched


def test_from_numpy_rejects_negative_strides_and_odd_dtypes():
    with pytest.raises(ValueError, match="negative"):
        ct.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="float128"):
        ct.from_numpy(np.zeros(2, dtype=np.longdouble))
    with pytest.raises(TypeError, match="np.ndarray"):
        ct.from_numpy([1, 2])


def test_from_numpy_read_only_array_can_be_read_not_written():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = ct.from_numpy(a)
    np.testing.assert_array_equal((t + 1).numpy(), a + 1)
    with pytest.raises(ValueError, match="read-only"):
        t.add_(1)
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_from_numpy_zero_size_and_0d():
    t = ct.from_numpy(np.zeros((0, 3), dtype=np.float32))
    assert t.shape == (0, 3) and (t + 1).shape == (0, 3)
    s = ct.from_numpy(np.array(2.5))
    assert s.shape == () and s.item() == 2.5


def test_array_protocol():
    t = ct.arange(6).reshape(2, 3)
    a = np.asarray(t)
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.add(t, 1).tolist() == [[1, 2, 3], [4, 5, 6]]


def test_numpy_refuses_requires_grad_and_other_devices():
    w = ct.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        w.numpy()
    m = ct.ones(2, device="meta")
    with pytest.raises(TypeError, match="meta"):
        m.numpy()


def test_dlpack_round_trip_with_numpy_shares_memory():
    t = ct.arange(6.0).reshape(2, 3)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    a[1, 2] = 42.0
    assert t[1, 2].item() == 42.0
    b = np.arange(5, dtype=np.int32)
    u = ct.from_dlpack(b)
    assert u.dtype is ct.int32
    u.mul_(3)
    assert b.tolist() == [0, 3, 6, 9, 12]
    back = ct.from_dlpack(t)
    assert back is t


def test_dlpack_strided_tensor():
    t = ct.arange(12.0).reshape(3, 4).t()
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4).T)
    assert np.shares_memory(a, t.numpy())


def test_dlpack_errors():
    with pytest.raises(RuntimeError, match="require gradient"):
        ct.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(NotImplementedError, match="cpu tensors only"):
        ct.ones(2, device="meta").__dlpack__()
    with pytest.raises(TypeError, match="__dlpack__"):
        ct.from_dlpack([1, 2, 3])


def test_dlpack_round_trip_with_torch_shares_memory():
    torch = pytest.importorskip("torch")
    t = ct.arange(8.0)
    tt = torch.from_dlpack(t)
    tt[3] = -5.0
    assert t[3].item() == -5.0
    src = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    c = ct.from_dlpack(src)
    assert c.dtype is ct.int64 and c.shape == (2, 3)
    c.add_(100)
    assert src[1, 2].item() == 105
    tv = torch.arange(12.0).reshape(3, 4).t()  # strided torch view
    cv = ct.from_dlpack(tv)
    np.testing.assert_array_equal(cv.numpy(), tv.numpy())
    tv[0, 0] = 9.0
    assert cv[0, 0].item() == 9.0
