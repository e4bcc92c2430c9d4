"""detect_anomaly: per thread, and reports that end the search (the module and call chain of
the op that made a bad value; the parameter or input a bad value entered through)."""

from __future__ import annotations

import sys
import threading
import warnings

import pytest

import coretorch as ct
import coretorch.nn as nn
from coretorch_profiler import AnomalyError, AnomalyWarning, detect_anomaly, profile


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).log())  # log of negatives: nan


def _line() -> int:
    return sys._getframe(1).f_lineno


def test_detector_watches_only_its_own_thread():
    entered, done = threading.Event(), threading.Event()
    errors = []

    def other():
        entered.wait()
        try:
            ct.tensor([0.0]).log()  # -inf here must not raise: this thread has no detector
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with detect_anomaly():
        entered.set()
        done.wait(30)
        with pytest.raises(AnomalyError):
            ct.tensor([0.0]).log()
    t.join()
    assert errors == []


def test_forward_report_names_the_module_and_the_call_chain():
    ct.manual_seed(0)
    net = Net()

    def run(x):
        return net(x)

    x = ct.full((2, 4), 1.0)
    with detect_anomaly():
        line = _line() + 2
        with pytest.raises(AnomalyError) as info:
            run(-x * 10.0)
    e = info.value
    assert e.op == "aten::log" and e.module == "Net"  # log runs in Net.forward itself
    assert e.function == "forward" and "self.fc1(x).log()" in e.code
    assert e.stack[1].endswith(f"({run.__code__.co_firstlineno + 1}): run")
    assert e.stack[2].endswith(f"({line}): test_forward_report_names_the_module_and_the_call_chain")
    assert "called from:" in str(e) and "in module Net" in str(e)


def test_nan_in_a_parameter_is_named_not_blamed_on_the_op_reading_it():
    net = Net()
    with ct.no_grad():
        net.fc2.weight[0, 1] = float("nan")
        net.fc2.weight[1, 2] = float("nan")
        net.fc2.weight[1, 0] = float("nan")
    x = ct.full((2, 4), 1.0)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as info:
            net.fc2(net.fc1(x))
    e = info.value
    assert (e.phase, e.source, e.source_kind) == ("input", "weight", "parameter")
    assert (e.nan_count, e.numel) == (3, 6)
    assert str(e).startswith("Anomaly detected: weight (a parameter) holds 3 nan and 0 inf of 6")
    with detect_anomaly():
        with pytest.raises(AnomalyError, match=r"fc2\.weight \(a parameter\) holds 3 nan") as info:
            SafeNet(net)(x)
    assert info.value.module.startswith("SafeNet")


class SafeNet(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner.fc2(self.inner.fc1(x))


def test_nan_in_the_input_batch_is_named_once():
    net = Net()
    x = ct.ones(2, 4)
    x[1, 2] = float("nan")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with detect_anomaly(action="warn"):
            out = SafeNet(net)(x)
    found = [str(w.message) for w in caught if issubclass(w.category, AnomalyWarning)]
    assert len(found) == 1, found  # the ops after it pass the same bad values along
    assert found[0].startswith("Anomaly detected: argument 0 of SafeNet.forward holds 1 nan")
    assert ct.isnan(out).any()


def test_inf_in_an_input_is_not_an_anomaly_but_in_a_parameter_it_is():
    # attention masks carry -inf on purpose
    lin = nn.Linear(3, 3)
    mask = ct.tensor([[0.0, float("-inf"), 0.0]])
    with detect_anomaly():
        Masked(lin)(ct.ones(1, 3), mask)
        with ct.no_grad():
            lin.bias[0] = float("inf")
        with pytest.raises(AnomalyError, match=r"bias \(a parameter\) holds 0 nan and 1 inf"):
            Masked(lin)(ct.ones(1, 3), ct.zeros(1, 3))


class Masked(nn.Module):
    def __init__(self, lin):
        super().__init__()
        self.lin = lin

    def forward(self, x, mask):
        return (x + mask).exp() + self.lin(x)


def test_findings_reach_the_profile_report():
    with profile() as prof:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with detect_anomaly(action="warn"):
                ct.tensor([0.0]).log()
    (finding,) = prof.result.raw.anomalies
    assert finding["op"] == "aten::log" and finding["message"].startswith("Anomaly detected")
