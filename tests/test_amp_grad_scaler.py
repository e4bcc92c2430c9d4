"""coretorch.amp.GradScaler: loss scaling, unscaling, skipped steps on inf/NaN gradients and the
scale's backoff/growth, against torch.amp.GradScaler's sequence."""

import math
import pickle

import numpy as np
import pytest

import coretorch as ct
from coretorch.amp import GradScaler

W0 = np.array([[0.5, -1.0, 0.25, 2.0], [1.5, 0.0, -0.5, 1.0]], np.float32)
X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
INF_AT, NAN_AT = {2, 9}, {5}


def _run(lib, scaler_cls, steps=14, **kw):
    """(scale after each update, whether each step changed the weight, final weight)."""
    w = lib.nn.Parameter(lib.tensor(W0.copy()))
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    scaler = scaler_cls("cpu", init_scale=2.0**10, growth_interval=3, **kw)
    scales, stepped = [], []
    for i in range(steps):
        opt.zero_grad()
        loss = (lib.tensor(X) @ w.t()).pow(2).mean()
        scaler.scale(loss).backward()
        if i in INF_AT or i in NAN_AT:
            with lib.no_grad():  # an overflowed gradient, as float16 backward would produce
                w.grad[0, 1] = math.inf if i in INF_AT else math.nan
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        stepped.append(not bool((w.detach() == before).all()))
    return scales, stepped, w.detach().numpy()


def test_scale_sequence_and_skipped_steps_match_torch():
    torch = pytest.importorskip("torch")
    want = _run(torch, torch.amp.GradScaler)
    got = _run(ct, GradScaler)
    assert got[0] == want[0]
    assert got[1] == want[1]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)


def test_backoff_on_inf_and_growth_after_interval():
    scales, stepped, _ = _run(ct, GradScaler)
    # steps 0, 1 clean (tracker 1, 2); 2 inf: halve; 3, 4 clean; 5 NaN: halve; 6, 7, 8 clean:
    # double; 9 inf: halve; 10, 11, 12 clean: double; 13 clean
    assert scales == [1024, 1024, 512, 512, 512, 256, 256, 256, 512, 256, 256, 256, 512, 512]
    assert stepped == [i not in INF_AT | NAN_AT for i in range(14)]


def test_unscale_gives_the_true_gradients_for_clipping():
    w = ct.nn.Parameter(ct.tensor(W0.copy()))
    opt = ct.optim.SGD([w], lr=0.1)
    loss = (ct.tensor(X) @ w.t()).pow(2).mean()
    (g_true,) = ct.autograd.grad(loss, [w], retain_graph=True)
    scaler = GradScaler(init_scale=256.0)
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(loss.item() * 256, rel=1e-6)
    scaled.backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), g_true.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)  # does not unscale twice
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update()
    assert scaler.get_scale() == 256.0 and scaler._get_growth_tracker() == 1


def test_misuse_is_refused():
    w = ct.nn.Parameter(ct.ones(2))
    opt = ct.optim.SGD([w], lr=0.1)
    scaler = GradScaler()
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.step(opt)
    scaler.scale(w.sum()).backward()
    with pytest.raises(AssertionError, match="No inf checks"):
        scaler.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    with pytest.raises(ValueError, match="growth factor"):
        GradScaler(growth_factor=1.0)
    w.grad = w.grad.half()
    with pytest.raises(ValueError, match="unscale FP16 gradients"):
        scaler.unscale_(opt)


def test_state_dict_roundtrip_and_pickle():
    scaler = GradScaler(init_scale=8.0, growth_interval=5)
    w = ct.nn.Parameter(ct.ones(2))
    opt = ct.optim.SGD([w], lr=0.1)
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    scaler.update()
    sd = scaler.state_dict()
    assert sd == {
        "scale": 8.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 5,
        "_growth_tracker": 1,
    }
    other = GradScaler()
    other.load_state_dict(sd)
    assert other.state_dict() == sd and other.get_scale() == 8.0
    assert pickle.loads(pickle.dumps(scaler)).state_dict() == sd
    with pytest.raises(RuntimeError, match="state dict is empty"):
        other.load_state_dict({})
    scaler.update(new_scale=3.0)
    assert scaler.get_scale() == 3.0


def test_state_dict_matches_torch():
    torch = pytest.importorskip("torch")
    kw = dict(init_scale=512.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    assert GradScaler("cpu", **kw).state_dict() == torch.amp.GradScaler("cpu", **kw).state_dict()


def test_disabled_scaler_passes_through():
    scaler = GradScaler(enabled=False)
    loss = ct.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    assert scaler.state_dict() == {} and not scaler.is_enabled()
    w = ct.nn.Parameter(ct.ones(2))
    opt = ct.optim.SGD([w], lr=1.0)
    w.sum().backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [0.0, 0.0]


def test_cuda_spelling():
    import coretorch.cuda.amp as cuda_amp

    if ct.cuda.is_available():
        assert cuda_amp.GradScaler().is_enabled()
    else:
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not cuda_amp.GradScaler().is_enabled()
    assert ct.cpu.amp.GradScaler(init_scale=4.0).get_scale() == 4.0


def test_training_under_autocast_with_scaler_runs():
    ct.manual_seed(0)
    model = ct.nn.Sequential(ct.nn.Linear(4, 8), ct.nn.ReLU(), ct.nn.Linear(8, 3))
    opt = ct.optim.Adam(model.parameters(), lr=1e-2)
    scaler = GradScaler()
    x, y = ct.randn(16, 4), ct.randint(0, 3, (16,))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        with ct.autocast("cpu"):
            loss = ct.nn.functional.cross_entropy(model(x), y)
        assert loss.dtype is ct.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.dtype is ct.float32 for p in model.parameters())


def test_a_pytorch_amp_script_runs_unchanged(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "amp_script.py"
    script.write_text(
        "import torch\n"
        "from torch.cuda.amp import GradScaler\n"
        "from torch.cpu.amp import autocast\n"
        "model = torch.nn.Linear(4, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler('cpu', init_scale=8.0, growth_interval=1)\n"
        "with autocast():\n"
        "    loss = torch.nn.functional.mse_loss(model(torch.ones(3, 4)), torch.zeros(3, 2))\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(opt)\n"
        "scaler.update()\n"
        "assert GradScaler is torch.cuda.amp.GradScaler\n"
        "print(loss.dtype, scaler.get_scale())\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "coretorch.compat", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["coretorch.float32", "16.0"]
