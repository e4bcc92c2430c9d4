"""Profiler defects found by use: averages with memory, thread ids and names in traces, kernels
on the device track."""

from __future__ import annotations

import json
import threading

import pytest
from test_profiler_trace import check_trace

import coretorch as ct
from coretorch_profiler import ProfileResult, profile
from coretorch_profiler.raw import EventKind, RawProfile, region


def test_total_average_with_memory_profiling():
    a = ct.ones(100)
    with profile(profile_memory=True) as prof:
        b = a + 1
        c = b * 2  # noqa: F841
    total = prof.key_averages().total_average()
    assert total.key == "Total" and total.count == 2
    assert total.cpu_memory_usage == 800 and total.self_cpu_memory_usage == 800
    assert prof.events().total_average().count == 2


def _load(prof, tmp_path) -> dict:
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())


def test_trace_uses_native_thread_ids_and_names_short_lived_threads(tmp_path):
    x = ct.ones(3)

    def work():
        x + 1

    with profile() as prof:
        x + 2
        t = threading.Thread(target=work, name="short-lived-worker")
        t.start()
        t.join()
    doc = _load(prof, tmp_path)
    check_trace(doc)  # every tid fits in 31 bits
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {e["tid"] for e in xs} == {threading.get_native_id(), t.native_id}
    names = {
        e["tid"]: e["args"]["name"]
        for e in doc["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert "short-lived-worker" in names[t.native_id]
    assert threading.main_thread().name in names[threading.get_native_id()]


def _device_raw() -> RawProfile:
    """Two host ops, the outer one (aten::t) running the inner one (aten::transpose), each
    timed on the device as the cuda backend's op timer does: the outer record encloses the
    inner one on the same stream."""
    raw = RawProfile()
    raw.t1 = 10_000
    raw.ops = [
        region("aten::t", EventKind.FUNCTION, 1000, 5000, 1),
        region("aten::transpose", EventKind.FUNCTION, 2000, 4000, 1),
        region("aten::mm", EventKind.FUNCTION, 6000, 9000, 1),
    ]
    raw.device_ops = [
        {
            "name": "aten::t",
            "device_index": 0,
            "stream": 7,
            "start_ns": 1500,
            "end_ns": 4600,
            "host": (1, 1000),
        },
        {
            "name": "aten::transpose",
            "device_index": 0,
            "stream": 7,
            "start_ns": 2500,
            "end_ns": 4500,
            "host": (1, 2000),
        },
        {
            "name": "aten::mm",
            "device_index": 0,
            "stream": 7,
            "start_ns": 6500,
            "end_ns": 9500,
            "host": (1, 6000),
        },
    ]
    return raw


def test_device_track_holds_kernels_linked_to_their_ops(tmp_path):
    result = ProfileResult(_device_raw())
    path = tmp_path / "t.json"
    result.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    by_ph = check_trace(doc)  # no overlap on a stream; each ac2g flow ends in a kernel
    kernels = [e for e in by_ph["X"] if e["cat"] == "kernel"]
    assert [k["name"] for k in kernels] == ["aten::transpose", "aten::mm"]  # no nesting
    ops = {e["args"]["External id"]: e for e in by_ph["X"] if e["cat"] == "cpu_op"}
    launchers = [ops[k["args"]["External id"]] for k in kernels]
    assert [e["name"] for e in launchers] == ["aten::transpose", "aten::mm"]
    # linked as a CUDA launch links them: the same correlation, and a flow op -> kernel
    assert [e["args"]["correlation"] for e in launchers] == [
        k["args"]["correlation"] for k in kernels
    ]
    starts = {e["id"]: e for e in by_ph["s"] if e["cat"] == "ac2g"}
    for f in (e for e in by_ph["f"] if e["cat"] == "ac2g"):
        k = next(k for k in kernels if k["ts"] == f["ts"])
        assert starts[f["id"]]["ts"] == ops[k["args"]["External id"]]["ts"]
    # device time is a column and a sort key; an op's own kernels are its self device time
    rows = result.key_averages().rows(sort_by="self_device_time_total")
    assert [r["Name"] for r in rows] == ["aten::mm", "aten::transpose", "aten::t"]
    by = {r["Name"]: r for r in rows}
    assert by["aten::mm"]["Self CUDA"] == pytest.approx(3.0)
    assert by["aten::t"]["Self CUDA"] == 0 and by["aten::t"]["CUDA total"] == pytest.approx(2.0)
    text = result.key_averages().table(sort_by="self_cuda_time_total")
    assert "Self CUDA" in text and "Self CUDA time total: 5.000us" in text


def test_an_unknown_sort_key_names_the_device_keys():
    with profile() as prof:
        ct.ones(2) + 1
    with pytest.raises(AttributeError, match="self_device_time_total"):
        prof.key_averages().table(sort_by="nope")
    prof.key_averages().table(sort_by="self_device_memory_usage")


def test_cuda_activity_when_the_cuda_backend_is_loaded():
    import os
    import subprocess
    import sys

    code = """
import coretorch as ct
from coretorch_profiler import ProfilerActivity, profile, supported_activities
assert ProfilerActivity.CUDA in supported_activities()
a = ct.ones(16, 16, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as on:
    (a @ a).relu()
with profile(activities=[ProfilerActivity.CPU]) as off:
    (a @ a).relu()
assert "Self CUDA" in on.key_averages().table()
assert "Self CUDA" not in off.key_averages().table()
print("ok")
"""
    env = dict(os.environ, CORETORCH_CUDA_EMULATE="1")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
