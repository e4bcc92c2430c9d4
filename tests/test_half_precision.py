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


@pytest.mark.parametrize("name", sorted(_BINARY))
@pytest.mark.parametrize("scalar", _SCALARS, ids=str)
def test_python_scalar_is_applied_in_float32(name, scalar, data_device):
    fn, ref = _BINARY[name]
    x = ct.tensor(_X, dtype=H, device=data_device)
    got = fn(x, scalar)
    assert got.dtype is H
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        want = _f16(ref(np.asarray(_X, dtype=_F16).astype(_F32), _F32(scalar)))
    np.testing.assert_array_equal(_np(got), want.astype(_F32))


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


def _long(device, value=1.0, n=70000):
    return ct.full((n,), value, dtype=H, device=device)


# reductions over more elements than float16 can count (65504): name -> (call, exact result)
_REDUCTIONS = {
    "mean": (lambda d: _long(d).mean(), 1.0),
    "mean_dim": (lambda d: _long(d).view(7, 10000).mean(1), [1.0] * 7),
    "mean_keepdim": (lambda d: _long(d).view(1, 70000).mean(-1, keepdim=True), [[1.0]]),
    "var": (lambda d: _long(d).var(), 0.0),
    "std": (lambda d: _long(d).std(), 0.0),
    "var_of_spread": (lambda d: ct.tensor([-10.0, 10.0] * 35000, dtype=H, device=d)
                      .var(correction=0), 100.0),
    "std_of_spread": (lambda d: ct.tensor([-500.0, 500.0] * 35000, dtype=H, device=d)
                      .std(correction=0), 500.0),
    "norm": (lambda d: _long(d, 1.0, 65536).norm(), 256.0),
    "norm_1": (lambda d: _long(d, 0.5).norm(1), 35000.0),
    "mse_loss": (lambda d: F.mse_loss(_long(d), ct.zeros(70000, dtype=H, device=d)), 1.0),
    "l1_loss": (lambda d: F.l1_loss(_long(d), ct.zeros(70000, dtype=H, device=d)), 1.0),
    "adaptive_avg_pool2d": (lambda d: F.adaptive_avg_pool2d(
        ct.full((1, 1, 300, 300), 1.0, dtype=H, device=d), 1), [[[[1.0]]]]),
    "batch_norm": (lambda d: F.batch_norm(ct.full((70000, 2), 3.0, dtype=H, device=d), None,
                                          None, training=True)[0], [0.0, 0.0]),
    "layer_norm": (lambda d: F.layer_norm(ct.full((2, 70000), 300.0, dtype=H, device=d),
                                          (70000,))[:, 0], [0.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_half_reductions_accumulate_in_float32(name, data_device):
    call, want = _REDUCTIONS[name]
    got = call(data_device)
    assert got.dtype is H
    np.testing.assert_allclose(_np(got), np.asarray(want, dtype=_F32), atol=2e-3, rtol=1e-3)


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_half_reductions_keep_shape_on_every_device(name, device):
    """The float32 detour keeps the half result's shape and dtype (meta included)."""
    got = _REDUCTIONS[name][0](device)
    assert got.dtype is H and got.device.type == device
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
    for name, (call, _) in _REDUCTIONS.items():
        if name in ("batch_norm", "layer_norm"):
            continue  # PyTorch's own float rounding leaves ~1e-3 there; the exact 0 is tested
        ours = call("cpu")
        theirs = _torch_reduction(torch, name)
        np.testing.assert_allclose(_np(ours), theirs.float().numpy(), rtol=1e-3, err_msg=name)


def _torch_reduction(torch, name: str):
    tF = torch.nn.functional
    h = torch.float16
    long = torch.full((70000,), 1.0, dtype=h)
    return {
        "mean": lambda: long.mean(),
        "mean_dim": lambda: long.view(7, 10000).mean(1),
        "mean_keepdim": lambda: long.view(1, 70000).mean(-1, keepdim=True),
        "var": lambda: long.var(),
        "std": lambda: long.std(),
        "var_of_spread": lambda: torch.tensor([-10.0, 10.0] * 35000, dtype=h).var(correction=0),
        "std_of_spread": lambda: torch.tensor([-500.0, 500.0] * 35000, dtype=h).std(
            correction=0),
        "norm": lambda: torch.full((65536,), 1.0, dtype=h).norm(),
        "norm_1": lambda: torch.full((70000,), 0.5, dtype=h).norm(1),
        "mse_loss": lambda: tF.mse_loss(long, torch.zeros(70000, dtype=h)),
        "l1_loss": lambda: tF.l1_loss(long, torch.zeros(70000, dtype=h)),
        "adaptive_avg_pool2d": lambda: tF.adaptive_avg_pool2d(
            torch.full((1, 1, 300, 300), 1.0, dtype=h), 1),
    }[name]()
