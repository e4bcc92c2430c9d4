"""optim.swa_utils: AveragedModel (SWA and EMA, with and without buffers), update_bn and the
averaging functions against PyTorch, recorded (tests/data/record_optim.py wrote them) and live
when PyTorch is installed."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
from coretorch.optim import swa_utils

DATA = pathlib.Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_optim", DATA / "record_optim.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)
EXPECTED = json.loads((DATA / "optim_expected.json").read_text())["swa"]


def _assert_close(ours: dict, theirs: dict) -> None:
    for stage in ("before_bn", "after_bn"):
        assert list(ours[stage]) == list(theirs[stage])
        for key in theirs[stage]:
            np.testing.assert_allclose(
                ours[stage][key],
                theirs[stage][key],
                rtol=1e-12,
                atol=1e-14,
                err_msg=f"{stage} {key}",
            )
    np.testing.assert_allclose(ours["output"], theirs["output"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", sorted(rec.SWA_CASES))
def test_averaged_model_matches_recorded_torch(case):
    _assert_close(rec.run_swa(ct, case), EXPECTED[case])


def test_averaged_model_matches_live_torch():
    torch = pytest.importorskip("torch")
    _assert_close(rec.run_swa(ct, "swa-buffers"), rec.run_swa(torch, "swa-buffers"))


def test_swa_is_the_running_mean_of_the_weights():
    lin = nn.Linear(2, 1)
    avg = swa_utils.AveragedModel(lin)
    seen = []
    for k in range(4):
        with ct.no_grad():
            lin.weight.fill_(float(k))
        seen.append(float(k))
        avg.update_parameters(lin)
    assert avg.n_averaged.item() == 4 and avg.n_averaged.dtype == ct.int64
    np.testing.assert_allclose(avg.module.weight.detach().numpy(), np.mean(seen), rtol=1e-7)
    assert [k for k, _ in avg.named_buffers()] == ["n_averaged"]
    assert list(avg.state_dict()) == ["n_averaged", "module.weight", "module.bias"]


def test_update_bn_recomputes_running_stats_as_a_cumulative_mean():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3, momentum=0.3))
    rng = np.random.default_rng(0)
    batches = [ct.tensor(rng.standard_normal((4, 2)), dtype=ct.float32) for _ in range(3)]
    model.eval()
    swa_utils.update_bn(batches, model)
    assert not model.training and model[1].momentum == 0.3
    with ct.no_grad():
        hidden = [model[0](b).numpy() for b in batches]
    np.testing.assert_allclose(
        model[1].running_mean.numpy(), np.mean([h.mean(0) for h in hidden], 0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        model[1].running_var.numpy(), np.mean([h.var(0, ddof=1) for h in hidden], 0), rtol=1e-5
    )
    assert model[1].num_batches_tracked.item() == 3
    swa_utils.update_bn(batches, nn.Linear(2, 2))  # no batch norm: nothing to do


def test_averaging_functions():
    a, b = ct.tensor([1.0, 2.0]), ct.tensor([3.0, 6.0])
    assert swa_utils.get_swa_avg_fn()(a, b, ct.tensor(3)).tolist() == [1.5, 3.0]
    assert swa_utils.get_ema_avg_fn(0.75)(a, b, 0).tolist() == [1.5, 3.0]
    lst = [a.clone()]
    swa_utils.get_ema_multi_avg_fn(0.5)(lst, [b], 0)
    assert lst[0].tolist() == [2.0, 4.0]
    lst = [a.clone()]
    swa_utils.get_swa_multi_avg_fn()(lst, [b], ct.tensor(1))
    assert lst[0].tolist() == [2.0, 4.0]
    ints = [ct.tensor([2, 4])]
    swa_utils.get_ema_multi_avg_fn(0.5)(ints, [ct.tensor([4, 8])], 1)
    assert ints[0].tolist() == [3, 6] and ints[0].dtype == ct.int64
    with pytest.raises(
        ValueError,
        match=r"Invalid decay value 1.5 provided. Please provide a "
        r"value in \[0,1\] range.",
    ):
        swa_utils.get_ema_multi_avg_fn(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(
            nn.Linear(1, 1),
            avg_fn=swa_utils.get_swa_avg_fn(),
            multi_avg_fn=swa_utils.get_swa_multi_avg_fn(),
        )


def test_swalr_errors_and_state_dict():
    opt = ct.optim.SGD([nn.Parameter(ct.zeros(1))], lr=1.0)
    with pytest.raises(
        ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got step"
    ):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    s = swa_utils.SWALR(opt, 0.1, anneal_epochs=3, anneal_strategy="linear")
    sd = s.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == "linear"
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
