"""PyTorch's anomaly-mode names under coretorch.autograd (served by the profiler's detector)."""

from __future__ import annotations

import pytest

import coretorch as ct

pytest.importorskip("coretorch_profiler")


def test_detect_anomaly_names_the_op_that_made_nan():
    x = ct.tensor([1.0, -1.0], requires_grad=True)
    assert not ct.autograd.is_anomaly_enabled()
    with ct.autograd.detect_anomaly():
        assert ct.autograd.is_anomaly_enabled() and ct.autograd.is_anomaly_check_nan_enabled()
        with pytest.raises(RuntimeError, match=r"aten::log returned nan values"):
            ct.log(x)
    assert not ct.autograd.is_anomaly_enabled()
    ct.log(x)  # off again: no error


def test_inf_is_not_an_anomaly_as_in_pytorch():
    with ct.autograd.detect_anomaly():
        ct.tensor([0.0]).log()  # -inf: PyTorch's anomaly mode looks for NaN only


def test_set_detect_anomaly_as_a_switch_and_a_context():
    x = ct.tensor([-1.0])
    ct.autograd.set_detect_anomaly(True)
    try:
        with ct.autograd.set_detect_anomaly(False):
            assert not ct.autograd.is_anomaly_enabled()
            ct.log(x)
        assert ct.autograd.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match="nan"):
            ct.log(x)
        with ct.autograd.set_detect_anomaly(True, check_nan=False):
            assert not ct.autograd.is_anomaly_check_nan_enabled()
            ct.log(x)
    finally:
        ct.autograd.set_detect_anomaly(False)
    assert not ct.autograd.is_anomaly_enabled()


def test_decorator_form():
    @ct.autograd.detect_anomaly()
    def f(t):
        return ct.sqrt(t)

    with pytest.raises(RuntimeError, match="aten::sqrt"):
        f(ct.tensor([-4.0]))
