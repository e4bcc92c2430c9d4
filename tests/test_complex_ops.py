"""Complex-number ops: real/imag/view_as_real/view_as_complex are views sharing memory, conj is
materialized, ops without a complex meaning refuse complex tensors by name."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F


def _z(device="cpu"):
    return ct.tensor([[1 + 2j, 3 - 4j], [0.5j, -1]], device=device)


def test_real_imag_are_views(device):
    z = _z(device)
    re, im = z.real, z.imag
    assert re.dtype is ct.float32 and im.dtype is ct.float32
    assert re.stride() == (4, 2) and im.storage_offset() == 1
    assert ct.view_as_real(z).shape == (2, 2, 2) and ct.view_as_real(z).stride() == (4, 2, 1)
    if device == "meta":
        return
    re.mul_(10)
    im[0, 0] = 7
    assert z.tolist() == [[10 + 7j, 30 - 4j], [0.5j, -10]]
    back = ct.view_as_complex(ct.view_as_real(z))
    back[1, 1] = 2j
    assert z[1, 1].item() == 2j


def test_views_of_views_and_real_tensors():
    z = ct.randn(4, 3, dtype=ct.complex128)
    np.testing.assert_array_equal(z.t().real.numpy(), z.numpy().T.real)
    np.testing.assert_array_equal(z[:, 1].imag.numpy(), z.numpy()[:, 1].imag)
    x = ct.ones(3)
    assert x.real is x or x.real.data_ptr() == x.data_ptr()
    with pytest.raises(
        RuntimeError,
        match=r"imag\(\): is not implemented for tensors with "
        r"non-complex dtypes",
    ):
        x.imag


def test_conj_is_materialized():
    z = _z()
    c = z.conj()
    assert c.data_ptr() != z.data_ptr() and not c.is_conj()
    np.testing.assert_array_equal(c.numpy(), np.conj(z.numpy()))
    assert c.resolve_conj() is c


def test_angle_polar_complex():
    z = ct.tensor([1 + 1j, -1, -2j], dtype=ct.complex128)
    np.testing.assert_allclose(ct.angle(z).numpy(), np.angle(z.numpy()))
    assert ct.angle(z).dtype is ct.float64
    r = ct.polar(ct.tensor([2.0, 1.0]), ct.tensor([0.0, np.pi / 2]))
    np.testing.assert_allclose(r.numpy(), [2, 1j], atol=1e-7)
    c = ct.complex(ct.ones(2, dtype=ct.float64), ct.arange(3.0, dtype=ct.float64).view(3, 1))
    assert c.shape == (3, 2) and c.dtype is ct.complex128
    assert ct.is_complex(c) and not ct.is_complex(c.real)
    np.testing.assert_allclose(ct.sgn(z).numpy(), z.numpy() / np.abs(z.numpy()))


@pytest.mark.parametrize(
    "call",
    [
        ("lt", lambda z: z < z),
        ("gt", lambda z: z > 1),
        ("le", lambda z: z.le(z)),
        ("ge", lambda z: z >= z),
        ("maximum", lambda z: ct.maximum(z, z)),
        ("max", lambda z: z.max()),
        ("amax", lambda z: z.amax(0)),
        ("argmax", lambda z: z.argmax()),
        ("clamp", lambda z: z.clamp(0, 1)),
        ("relu", lambda z: F.relu(z)),
        ("sort", lambda z: z.sort()),
        ("topk", lambda z: z.topk(1)),
        ("floor", lambda z: z.floor()),
        ("sign", lambda z: z.sign()),
        ("remainder", lambda z: z % 2),
        ("atan2", lambda z: z.atan2(z)),
        ("erf", lambda z: z.erf()),
    ],
    ids=lambda c: c[0],
)
def test_ops_without_complex_meaning_refuse(call, device):
    name, fn = call
    with pytest.raises(
        RuntimeError,
        match=rf"{name}\(\): not supported for complex tensors "
        rf"\(got complex64\)",
    ):
        fn(_z(device))


def test_arithmetic_matches_numpy():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    x, y = ct.tensor(a), ct.tensor(b)
    np.testing.assert_allclose((x @ y).numpy(), a @ b)
    np.testing.assert_allclose((x**0.5).numpy(), a**0.5)
    np.testing.assert_allclose((2**x).numpy(), 2**a)
    np.testing.assert_allclose((x - 1j).numpy(), a - 1j)
    np.testing.assert_allclose(x.mean(1).numpy(), a.mean(1))
    np.testing.assert_allclose((x * 2.5).sum().item(), (a * 2.5).sum())
