"""PyTorch's import paths: coretorch.profiler and coretorch.autograd.profiler are the profiler
distribution, loaded on first use; the names that cannot work here raise a clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest

import coretorch as ct
import coretorch.autograd.profiler as autograd_profiler
import coretorch.profiler as ct_profiler
import coretorch_profiler


def test_one_implementation_two_import_paths():
    from coretorch.profiler import (
        ProfilerAction,
        ProfilerActivity,
        profile,
        record_function,
        schedule,
        tensorboard_trace_handler,
    )

    assert profile is coretorch_profiler.profile and schedule is coretorch_profiler.schedule
    assert ProfilerActivity is coretorch_profiler.ProfilerActivity
    assert ProfilerAction is coretorch_profiler.ProfilerAction
    assert tensorboard_trace_handler is coretorch_profiler.tensorboard_trace_handler
    assert (
        record_function is autograd_profiler.record_function is coretorch_profiler.record_function
    )
    assert issubclass(autograd_profiler.profile, profile)
    assert ct.profiler is ct_profiler  # reachable after `import coretorch`, as torch.profiler
    assert {"profile", "schedule", "itt"} <= set(dir(ct_profiler))
    with pytest.raises(AttributeError, match="module 'coretorch.profiler' has no attribute 'x'"):
        ct_profiler.x


def test_core_does_not_import_the_profiler():
    code = (
        "import sys, coretorch; assert 'coretorch_profiler' not in sys.modules; "
        "coretorch.profiler.profile; assert 'coretorch_profiler' in sys.modules"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_a_missing_profiler_distribution_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "coretorch_profiler.torch_api", None)  # as if absent
    with pytest.raises(
        ModuleNotFoundError, match="coretorch.profiler needs the coretorch-profiler distribution"
    ) as e:
        ct_profiler.profile
    assert "pip install coretorch-profiler" in str(e.value)


def test_legacy_autograd_profiler():
    x = ct.ones(4)
    with autograd_profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with autograd_profiler.record_function("region"):
            x * 2
    text = prof.table(sort_by="cpu_time_total", row_limit=5)
    assert "region" in text and "aten::mul" in text
    assert [e.name for e in prof.function_events] == ["region", "aten::mul"]
    assert prof.total_average().count == 2 and prof.self_cpu_time_total > 0
    with autograd_profiler.profile(enabled=False) as off:
        x * 2
    with pytest.raises(RuntimeError, match="no results yet"):
        off.table()


def test_nvtx_and_itt_exist_and_say_why_they_cannot_work():
    with pytest.raises(RuntimeError, match=r"emit_nvtx\(\): NVTX ranges need"):
        with autograd_profiler.emit_nvtx():
            pass
    with pytest.raises(RuntimeError, match=r"emit_itt\(\): Intel ITT"):
        with autograd_profiler.emit_itt(record_shapes=True):
            pass
    with autograd_profiler.emit_nvtx(enabled=False):  # disabled: nothing to do
        pass
    from coretorch.profiler import itt

    assert itt.is_available() is False
    with pytest.raises(RuntimeError, match=r"itt.range_push\(\)"):
        itt.range_push("x")
    with pytest.raises(RuntimeError, match="coretorch does not have"):
        autograd_profiler.load_nvprof("trace.nvvp")


def test_pytorch_profile_arguments_are_accepted():
    from coretorch.profiler import ProfilerActivity, profile, supported_activities

    with profile(
        activities=[ProfilerActivity.CPU],
        with_modules=True,
        experimental_config=object(),
        acc_events=True,
    ) as prof:
        ct.ones(2) + 1
    assert prof.key_averages()
    assert ProfilerActivity.CPU in supported_activities()
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["CPU"])
    with pytest.raises(NotImplementedError, match="execution_trace_observer"):
        profile(execution_trace_observer=object())
