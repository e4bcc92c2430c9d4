"""Half precision follows PyTorch's compute-type rules: a Python scalar (or a 0-d "wrapped
number") takes part in type promotion only by category and is applied in float32, the compute
type of float16; reductions of float16 accumulate in float32 and round once at the end.

Expected values come from numpy float32 computations rounded to float16, and from PyTorch where
it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F

H = ct.float16
_F32, _F16 = np.float32, np.float16

# values whose products/quotients with the scalars below are representable in float16 only when
# computed in float32 first (70000 itself is out of float16's range, 1e-5 is a float16 subnormal)
_X = [1e-4, 2.0, 35000.0, -3.0, 0.5]
_SCALARS = [70000, 70000.0, 1e-5, 1 / 70000, 3e-8]

_BINARY = {
    "mul": (lambda x, s: x * s, np.multiply),
    "rmul": (lambda x, s: s * x, lambda a, b: np.multiply(b, a)),
    "div": (lambda x, s: x / s, np.divide),
    # PyTorch's ``s / x`` is ``x.reciprocal() * s``: the reciprocal rounds to float16 first
    "rdiv": (lambda x, s: s / x, lambda a, b: np.multiply(_f16(1 / a).astype(_F32), b)),
    "mul_": (lambda x, s: x.clone().mul_(s), np.multiply),
    "div_": (lambda x, s: x.clone().div_(s), np.divide),
}


def _f16(a) -> np.ndarray:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return np.asarray(a).astype(_F16)


def _np(t) -> np.ndarray:
    return np.asarray(t.to(ct.float32).tolist(), dtype=_F32)


@pytest.mark.parametrize("h", [ct.float16, ct.bfloat16], ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(_BINARY))
@pytest.mark.parametrize("scalar", _SCALARS, ids=str)
def test_python_scalar_is_applied_in_float32(name, scalar, h, data_device):
    fn, ref = _BINARY[name]
    x = ct.tensor(_X, dtype=h, device=data_device)
    got = fn(x, scalar)
    assert got.dtype is h
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # the reference: the half inputs widened to float32, one float32 op, rounded once
        # (for float16 `_BINARY`'s rdiv reference rounds its reciprocal to float16 as PyTorch)
        x32 = np.asarray(_X, dtype=h.numpy).astype(_F32)
        want = np.asarray(ref(x32, _F32(scalar))).astype(h.numpy)
    if h is ct.float16:
        np.testing.assert_array_equal(_np(got), want.astype(_F32))
    else:  # bfloat16: one rounding of the float32 result (rdiv rounds twice: one ulp)
        np.testing.assert_allclose(_np(got), want.astype(_F32), rtol=8e-3)


def test_issue_examples(data_device):
    x = ct.tensor([35000.0], dtype=H, device=data_device)
    assert (x / 70000).tolist() == [0.5]
    assert ct.full((70000,), 1.0, dtype=H, device=data_device).mean().item() == 1.0


@pytest.mark.parametrize("wrapped", [ct.float32, ct.float64])
def test_zero_dim_wrapped_number_keeps_half_and_computes_in_float32(wrapped, data_device):
    x = ct.tensor([1e-4, 2.0], dtype=H, device=data_device)
    got = x * ct.tensor(70000.0, dtype=wrapped)
    assert got.dtype is H
    assert got.tolist()[0] == pytest.approx(7.0, rel=1e-3)


def _long(device, h, value=1.0, n=70000):
    return ct.full((n,), value, dtype=h, device=device)


# reductions over more elements than float16 can count (65504), or than bfloat16 can add one to
# (256): name -> (call(device, dtype), exact result)
_REDUCTIONS = {
    "mean": (lambda d, h: _long(d, h).mean(), 1.0),
    "mean_dim": (lambda d, h: _long(d, h).view(7, 10000).mean(1), [1.0] * 7),
    "mean_keepdim": (lambda d, h: _long(d, h).view(1, 70000).mean(-1, keepdim=True), [[1.0]]),
    "var": (lambda d, h: _long(d, h).var(), 0.0),
    "std": (lambda d, h: _long(d, h).std(), 0.0),
    "var_of_spread": (
        lambda d, h: ct.tensor([-10.0, 10.0] * 35000, dtype=h, device=d).var(correction=0),
        100.0,
    ),
    "std_of_spread": (
        lambda d, h: ct.tensor([-500.0, 500.0] * 35000, dtype=h, device=d).std(correction=0),
        500.0,
    ),
    "norm": (lambda d, h: _long(d, h, 1.0, 65536).norm(), 256.0),
    "norm_1": (lambda d, h: _long(d, h, 0.5).norm(1), 35000.0),
    "mse_loss": (lambda d, h: F.mse_loss(_long(d, h), ct.zeros(70000, dtype=h, device=d)), 1.0),
    "l1_loss": (lambda d, h: F.l1_loss(_long(d, h), ct.zeros(70000, dtype=h, device=d)), 1.0),
    "adaptive_avg_pool2d": (
        lambda d, h: F.adaptive_avg_pool2d(ct.full((1, 1, 300, 300), 1.0, dtype=h, device=d), 1),
        [[[[1.0]]]],
    ),
    "batch_norm": (
        lambda d, h: F.batch_norm(
            ct.full((70000, 2), 3.0, dtype=h, device=d), None, None, training=True
        )[0],
        [0.0, 0.0],
    ),
    "layer_norm": (
        lambda d, h: F.layer_norm(ct.full((2, 70000), 300.0, dtype=h, device=d), (70000,))[:, 0],
        [0.0, 0.0],
    ),
}


# 16-bit float -> the relative error of rounding a result to it once
_HALVES = {ct.float16: 1e-3, ct.bfloat16: 8e-3}


@pytest.mark.parametrize("h", list(_HALVES), ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_half_reductions_accumulate_in_float32(name, h, data_device):
    call, want = _REDUCTIONS[name]
    got = call(data_device, h)
    assert got.dtype is h
    np.testing.assert_allclose(_np(got), np.asarray(want, dtype=_F32), atol=2e-3, rtol=_HALVES[h])


@pytest.mark.parametrize("h", list(_HALVES), ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_half_reductions_keep_shape_on_every_device(name, h, device):
    """The float32 detour keeps the half result's shape and dtype (meta included)."""
    got = _REDUCTIONS[name][0](device, h)
    assert got.dtype is h and got.device.type == device
    assert tuple(got.shape) == np.asarray(_REDUCTIONS[name][1]).shape


def test_half_mean_matches_numpy_float32_accumulation(data_device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 30000)).astype(_F16) * _F16(100)
    got = ct.tensor(a, device=data_device).mean(1)
    want = _f16(a.astype(_F32).mean(1, dtype=_F32))
    np.testing.assert_allclose(_np(got), want.astype(_F32), rtol=1e-3)
    got_var = ct.tensor(a, device=data_device).var(1)
    want_var = _f16(a.astype(_F32).var(1, ddof=1, dtype=_F32))
    np.testing.assert_allclose(_np(got_var), want_var.astype(_F32), rtol=2e-3)


def test_half_reduction_gradients_flow_in_half(data_device):
    x = ct.full((70000,), 2.0, dtype=H, device=data_device, requires_grad=True)
    x.mean().backward()
    assert x.grad.dtype is H
    np.testing.assert_array_equal(_np(x.grad)[:3], _f16([1 / 70000] * 3).astype(_F32))


# ---- against PyTorch ---------------------------------------------------------------------------


def test_scalars_and_reductions_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib_fn in (_BINARY[n][0] for n in sorted(_BINARY)):
        for s in _SCALARS:
            ours = lib_fn(ct.tensor(_X, dtype=H), s)
            theirs = lib_fn(torch.tensor(_X, dtype=torch.float16), s)
            np.testing.assert_array_equal(_np(ours), theirs.float().numpy())
    for h, th in ((ct.float16, torch.float16), (ct.bfloat16, torch.bfloat16)):
        for name, (call, _) in _REDUCTIONS.items():
            if name in ("batch_norm", "layer_norm"):
                continue  # PyTorch's own float rounding leaves ~1e-3 there; the exact 0 is tested
            ours = call("cpu", h)
            theirs = _torch_reduction(torch, name, th)
            np.testing.assert_allclose(
                _np(ours), theirs.float().numpy(), rtol=_HALVES[h], err_msg=f"{name} {h.name}"
            )


def _torch_reduction(torch, name: str, h):
    tF = torch.nn.functional
    long = torch.full((70000,), 1.0, dtype=h)
    return {
        "mean": lambda: long.mean(),
        "mean_dim": lambda: long.view(7, 10000).mean(1),
        "mean_keepdim": lambda: long.view(1, 70000).mean(-1, keepdim=True),
        "var": lambda: long.var(),
        "std": lambda: long.std(),
        "var_of_spread": lambda: torch.tensor([-10.0, 10.0] * 35000, dtype=h).var(correction=0),
        "std_of_spread": lambda: torch.tensor([-500.0, 500.0] * 35000, dtype=h).std(correction=0),
        "norm": lambda: torch.full((65536,), 1.0, dtype=h).norm(),
        "norm_1": lambda: torch.full((70000,), 0.5, dtype=h).norm(1),
        "mse_loss": lambda: tF.mse_loss(long, torch.zeros(70000, dtype=h)),
        "l1_loss": lambda: tF.l1_loss(long, torch.zeros(70000, dtype=h)),
        "adaptive_avg_pool2d": lambda: tF.adaptive_avg_pool2d(
            torch.full((1, 1, 300, 300), 1.0, dtype=h), 1
        ),
    }[name]()
