"""Learning-rate schedulers: lr sequences against PyTorch's (when installed) and closed forms."""

from __future__ import annotations

import math

import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim
from coretorch.optim import lr_scheduler as lrs

EPOCHS = 25


def _opt(lib, name="SGD", **kw):
    if lib == "ct":
        params = [nn.Parameter(ct.zeros(2)), nn.Parameter(ct.zeros(1))]
        mod = optim
    else:
        torch = pytest.importorskip("torch")
        params = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))]
        mod = torch.optim
    kw.setdefault("lr", 0.1)
    second = dict(kw, lr=kw["lr"] * 3)
    return getattr(mod, name)([{"params": [params[0]]}, {"params": [params[1]], **second}], **kw)


def _sequence(make, lib, name="SGD", metrics=None, **optkw):
    opt = _opt(lib, name, **optkw)
    sched = make(opt, lib)
    lrs_seen = [list(sched.get_last_lr())]
    extra = []
    for epoch in range(EPOCHS):
        opt.step()
        if metrics is not None:
            sched.step(metrics[epoch])
        else:
            sched.step()
        lrs_seen.append(list(sched.get_last_lr()))
        g = opt.param_groups[0]
        extra.append(g.get("momentum", g.get("betas")))
    return lrs_seen, extra


def _mod(lib):
    if lib == "ct":
        return lrs
    torch = pytest.importorskip("torch")
    return torch.optim.lr_scheduler


PLATEAU_METRICS = [
    1.0,
    0.9,
    0.9,
    0.9,
    0.95,
    0.9,
    0.91,
    0.92,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.49,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
]

CASES = {
    "StepLR": (lambda o, lib: _mod(lib).StepLR(o, step_size=3, gamma=0.5), {}),
    "MultiStepLR": (
        lambda o, lib: _mod(lib).MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
        {},
    ),
    "ExponentialLR": (lambda o, lib: _mod(lib).ExponentialLR(o, gamma=0.9), {}),
    "CosineAnnealingLR": (lambda o, lib: _mod(lib).CosineAnnealingLR(o, T_max=7, eta_min=0.01), {}),
    "LambdaLR": (lambda o, lib: _mod(lib).LambdaLR(o, lambda e: 1.0 / (1 + e)), {}),
    "LambdaLR-list": (
        lambda o, lib: _mod(lib).LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 + e % 3]),
        {},
    ),
    "OneCycleLR": (
        lambda o, lib: _mod(lib).OneCycleLR(o, max_lr=1.0, total_steps=EPOCHS + 1),
        dict(momentum=0.9),
    ),
    "OneCycleLR-3phase-linear": (
        lambda o, lib: _mod(lib).OneCycleLR(
            o,
            max_lr=[0.5, 2.0],
            epochs=2,
            steps_per_epoch=13,
            pct_start=0.25,
            anneal_strategy="linear",
            three_phase=True,
        ),
        dict(momentum=0.9),
    ),
    "OneCycleLR-adam": (
        lambda o, lib: _mod(lib).OneCycleLR(o, max_lr=0.01, total_steps=EPOCHS + 1),
        dict(name="Adam", lr=1e-3),
    ),
    "ReduceLROnPlateau": (
        lambda o, lib: _mod(lib).ReduceLROnPlateau(
            o, patience=2, factor=0.5, cooldown=1, min_lr=0.004
        ),
        dict(metrics=PLATEAU_METRICS),
    ),
    "ReduceLROnPlateau-max-abs": (
        lambda o, lib: _mod(lib).ReduceLROnPlateau(
            o, mode="max", threshold_mode="abs", threshold=0.05, patience=1
        ),
        dict(metrics=[-m for m in PLATEAU_METRICS]),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lr_sequence_matches_torch(case):
    pytest.importorskip("torch")
    make, kw = CASES[case]
    kw = dict(kw)
    ours, our_mom = _sequence(make, "ct", **kw)
    theirs, their_mom = _sequence(make, "torch", **kw)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    if "OneCycle" in case:
        assert (
            our_mom == pytest.approx(their_mom)
            if not isinstance(our_mom[0], tuple)
            else [m[0] for m in our_mom] == pytest.approx([m[0] for m in their_mom])
        )


def test_closed_forms():
    seq, _ = _sequence(lambda o, lib: lrs.StepLR(o, 3, 0.5), "ct")
    assert [s[0] for s in seq] == pytest.approx([0.1 * 0.5 ** (e // 3) for e in range(EPOCHS + 1)])
    seq, _ = _sequence(lambda o, lib: lrs.ExponentialLR(o, 0.9), "ct")
    assert [s[1] for s in seq] == pytest.approx([0.3 * 0.9**e for e in range(EPOCHS + 1)])
    seq, _ = _sequence(lambda o, lib: lrs.CosineAnnealingLR(o, 10, 0.01), "ct")
    expect = [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * e / 10)) / 2 for e in range(11)]
    assert [s[0] for s in seq[:11]] == pytest.approx(expect)
    seq, _ = _sequence(lambda o, lib: lrs.MultiStepLR(o, [2, 5], 0.1), "ct")
    assert [s[0] for s in seq[:7]] == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001])
    seq, _ = _sequence(
        lambda o, lib: lrs.OneCycleLR(o, max_lr=1.0, total_steps=EPOCHS + 1), "ct", momentum=0.9
    )
    assert seq[0][0] == pytest.approx(1.0 / 25)
    peak = max(s[0] for s in seq)
    assert peak == pytest.approx(1.0, rel=1e-2)
    assert seq[-1][0] == pytest.approx(1.0 / 25 / 1e4)


def test_step_with_epoch_uses_closed_form():
    opt = _opt("ct")
    s = lrs.StepLR(opt, 2, 0.5)
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(5)
    assert s.get_last_lr()[0] == pytest.approx(0.1 * 0.5**2)


def test_scheduler_state_dict_round_trip():
    opt = _opt("ct")
    s = lrs.StepLR(opt, 3, 0.5)
    for _ in range(4):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    opt2 = _opt("ct")
    s2 = lrs.StepLR(opt2, 100, 0.9)
    s2.load_state_dict(sd)
    assert s2.step_size == 3 and s2.last_epoch == 4 and s2.base_lrs == [0.1, pytest.approx(0.3)]
    lam = lrs.LambdaLR(_opt("ct"), lambda e: 1.0)
    assert lam.state_dict()["lr_lambdas"] == [None, None]


def test_errors():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lrs.StepLR(object(), 1)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        lrs.LambdaLR(_opt("ct"), [lambda e: 1.0])
    with pytest.raises(ValueError, match="either total_steps OR"):
        lrs.OneCycleLR(_opt("ct", momentum=0.9), max_lr=1.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lrs.ReduceLROnPlateau(_opt("ct"), factor=1.5)
    with pytest.raises(KeyError, match="initial_lr"):
        lrs.StepLR(_opt("ct"), 1, last_epoch=3)
    s = lrs.OneCycleLR(_opt("ct", momentum=0.9), max_lr=1.0, total_steps=2)
    s.step()
    s.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        s.step()
