"""ConstantLR, LinearLR, PolynomialLR, MultiplicativeLR, CosineAnnealingWarmRestarts, CyclicLR,
SequentialLR, ChainedScheduler and SWALR: lr (and momentum) sequences against PyTorch's, both
recorded (tests/data/record_optim.py wrote them) and live when PyTorch is installed; closed
forms, state dicts and argument checks."""

from __future__ import annotations

import importlib.util
import json
import math
import pathlib

import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim
from coretorch.optim import lr_scheduler as lrs

DATA = pathlib.Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_optim", DATA / "record_optim.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)
EXPECTED = json.loads((DATA / "optim_expected.json").read_text())["schedulers"]


def _close(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-13, abs=1e-16)


@pytest.mark.parametrize("case", sorted(rec.SCHEDULER_CASES))
def test_sequence_matches_recorded_torch(case):
    ours = rec.run_scheduler(ct, case)
    assert set(ours) == set(EXPECTED[case])
    for key in ours:
        _close(ours[key], EXPECTED[case][key])


@pytest.mark.parametrize(
    "case",
    ["SequentialLR", "CyclicLR-triangular2", "SWALR-cos", "CosineAnnealingWarmRestarts-mult"],
)
def test_sequence_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = rec.run_scheduler(ct, case), rec.run_scheduler(torch, case)
    for key in ours:
        _close(ours[key], theirs[key])


def _opt(lr=0.1, **kw):
    return optim.SGD([nn.Parameter(ct.zeros(2))], lr=lr, momentum=0.9, **kw)


def _lrs(sched, opt, n):
    out = [sched.get_last_lr()[0]]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def test_closed_forms_of_the_new_schedules():
    opt = _opt()
    seq = _lrs(lrs.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=4), opt, 6)
    assert seq == pytest.approx([0.1 * (0.25 + 0.75 * min(e, 4) / 4) for e in range(7)])
    opt = _opt()
    seq = _lrs(lrs.PolynomialLR(opt, total_iters=5, power=2.0), opt, 7)
    assert seq == pytest.approx([0.1 * (1 - min(e, 5) / 5) ** 2 for e in range(8)], abs=1e-15)
    opt = _opt()
    seq = _lrs(lrs.ConstantLR(opt, factor=0.5, total_iters=3), opt, 5)
    assert seq == pytest.approx([0.05, 0.05, 0.05, 0.1, 0.1, 0.1])
    opt = _opt()
    seq = _lrs(lrs.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01), opt, 9)
    t_cur = [0, 1, 2, 0, 1, 2, 3, 4, 5, 0]
    t_i = [3, 3, 3, 6, 6, 6, 6, 6, 6, 12]
    assert seq == pytest.approx(
        [0.01 + 0.09 * (1 + math.cos(math.pi * c / i)) / 2 for c, i in zip(t_cur, t_i)]
    )
    opt = _opt()
    seq = _lrs(lrs.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2), opt, 8)
    assert seq == pytest.approx([0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1])
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.9)


def test_step_with_epoch_uses_the_closed_form():
    opt = _opt()
    s = lrs.LinearLR(opt, start_factor=0.5, total_iters=4)
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(2)
    assert s.get_last_lr()[0] == pytest.approx(0.1 * (0.5 + 0.5 * 2 / 4))
    s = lrs.CosineAnnealingWarmRestarts(_opt(), T_0=4)
    s.step(5.5)
    assert s.T_cur == pytest.approx(1.5) and s.last_epoch == 5
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def test_cyclic_lr_cycles_adam_beta1_and_saves_state():
    p = nn.Parameter(ct.zeros(2))
    opt = optim.Adam([p], lr=0.01)
    s = lrs.CyclicLR(
        opt, base_lr=0.01, max_lr=0.1, step_size_up=2, base_momentum=0.8, max_momentum=0.9
    )
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    opt.step()
    s.step()
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.85)
    sd = s.state_dict()
    assert sd["_scale_fn_custom"] is None and "_scale_fn_ref" not in sd
    s2 = lrs.CyclicLR(optim.Adam([p]), base_lr=0.5, max_lr=1.0)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 1 and s2.scale_fn(3) == 1.0


def test_sequential_and_chained_state_dicts_nest_their_schedulers():
    opt = _opt()
    seq = lrs.SequentialLR(
        opt,
        [lrs.ConstantLR(opt, factor=0.5, total_iters=2), lrs.ExponentialLR(opt, gamma=0.9)],
        milestones=[3],
    )
    for _ in range(5):
        opt.step()
        seq.step()
    sd = seq.state_dict()
    assert "optimizer" not in sd and len(sd["_schedulers"]) == 2
    assert sd["_schedulers"][1]["gamma"] == 0.9 and sd["_milestones"] == [3]
    opt2 = _opt()
    seq2 = lrs.SequentialLR(
        opt2,
        [lrs.ConstantLR(opt2, factor=0.5, total_iters=2), lrs.ExponentialLR(opt2, gamma=0.5)],
        milestones=[3],
    )
    seq2.load_state_dict(sd)
    assert seq2._schedulers[1].gamma == 0.9 and seq2.last_epoch == seq.last_epoch
    chained = lrs.ChainedScheduler([lrs.ExponentialLR(opt, gamma=0.9)])
    assert chained.optimizer is opt and len(chained.state_dict()["_schedulers"]) == 1


def test_argument_errors():
    opt = _opt()
    with pytest.raises(
        ValueError, match="Constant multiplicative factor expected to be between 0 and 1."
    ):
        lrs.ConstantLR(opt, factor=2.0)
    with pytest.raises(
        ValueError, match="Starting multiplicative factor expected to be greater than 0"
    ):
        lrs.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected to be between"):
        lrs.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        lrs.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        lrs.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        lrs.CyclicLR(opt, 0.1, 1.0, mode="square")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lrs.CyclicLR(optim.Adagrad([nn.Parameter(ct.zeros(1))]), 0.1, 1.0)
    with pytest.raises(
        ValueError, match="base_lr must have the same length as optimizer.param_groups"
    ):
        lrs.CyclicLR(opt, [0.1, 0.2], 1.0)
    with pytest.raises(
        ValueError, match="SequentialLR expects at least one scheduler, but got no scheduler."
    ):
        lrs.SequentialLR(opt, [], milestones=[])
    with pytest.raises(
        ValueError, match="number of schedulers 2 and the number of milestones to be equal to 2"
    ):
        lrs.SequentialLR(opt, [lrs.StepLR(opt, 2), lrs.StepLR(opt, 3)], milestones=[1, 2])
    with pytest.raises(ValueError, match="ChainedScheduler does not support `ReduceLROnPlateau`"):
        lrs.ChainedScheduler([lrs.ReduceLROnPlateau(opt)])
    other = _opt()
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        lrs.ChainedScheduler([lrs.StepLR(opt, 2), lrs.StepLR(other, 2)])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got int"):
        lrs.MultiplicativeLR(opt, 3)


def test_module_exports_match_torch():
    torch = pytest.importorskip("torch")
    ours = set(lrs.__all__)
    assert set(torch.optim.lr_scheduler.__all__) - ours == set()
    swa = torch.optim.swa_utils
    assert set(swa.__all__) <= set(dir(optim.swa_utils))
