"""Views of one profile: folded stacks, the trace read back, diffs, TensorBoard's file layout,
trace metadata, the memory timeline by category, FLOP units, the framework-overhead column."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import time

import pytest
from test_profiler_trace import check_trace

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch_profiler import (
    ProfileResult,
    diff,
    load_trace,
    profile,
    record_function,
    tensorboard_trace_handler,
)
from coretorch_profiler.raw import EventKind, RawProfile, region


def _train(steps: int = 3, width: int = 8, **kw):
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 2))
    opt = ct.optim.Adam(model.parameters(), lr=0.01)
    x, y = ct.randn(4, width), ct.randint(0, 2, (4,))
    with profile(**kw) as prof:
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return prof


@pytest.fixture(scope="module")
def full():
    return _train(
        record_shapes=True, profile_memory=True, with_stack=True, with_flops=True, with_modules=True
    )


def test_folded_stacks_run_from_user_frames_through_modules_to_ops(full, tmp_path):
    path = tmp_path / "s.folded"
    full.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(re.fullmatch(r"[^ ].*;?.* \d+", ln) for ln in lines)
    stacks = {ln.rsplit(" ", 1)[0]: int(ln.rsplit(" ", 1)[1]) for ln in lines}
    addmm = [s for s in stacks if s.endswith(";aten::addmm")]
    assert addmm and all(s.startswith("ProfilerStep*;") for s in addmm)
    assert any(";nn.Module: 0;" in s and "test_profiler_exports.py" in s for s in addmm)
    # the values add up to the window's self time (whole microseconds)
    total = sum(e.self_cpu_time_total for e in full.events())
    assert sum(stacks.values()) == pytest.approx(total, abs=len(stacks))
    with pytest.raises(ValueError, match="metric"):
        full.export_stacks(str(path), metric="cpu_time")


def test_trace_reads_back_into_the_same_tables(full, tmp_path):
    path = tmp_path / "t.json.gz"
    full.export_chrome_trace(str(path))
    back = load_trace(str(path))
    ours, theirs = full.key_averages().rows(), back.key_averages().rows()
    assert [r["Name"] for r in ours] == [r["Name"] for r in theirs]
    for a, b in zip(ours, theirs):
        assert a["# of Calls"] == b["# of Calls"]
        assert a["CPU total"] == pytest.approx(b["CPU total"], abs=0.002)
        assert a["Self CPU Mem"] == b["Self CPU Mem"]
    assert back.total_flops() == full.total_flops()
    assert back.module_table() == full.module_table()
    cats = [a["category"] for a in back.allocations()]
    assert cats == [a["category"] for a in full.result.allocations()]
    with open(path, "wb") as f:
        f.write(b"not json")
    with pytest.raises(ValueError, match="not a JSON trace"):
        load_trace(str(path))


def test_diff_finds_the_slower_op_and_normalizes_by_steps(tmp_path):
    _train(steps=1, width=8)
    _train(steps=1, width=1024)  # first calls compile kernels: not part of the comparison
    a = _train(steps=2, width=8, record_shapes=True)
    b = _train(steps=3, width=1024, record_shapes=True)  # a wider model: slower matmuls
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    a.export_chrome_trace(str(pa))
    b.export_chrome_trace(str(pb))
    d = diff(str(pa), str(pb))
    assert d.per_step and d.slower_by > 0
    step = next(r for r in d.rows if r["kind"] == "step")
    assert step["calls_a"] == step["calls_b"] == 1  # per step
    ops = [r for r in d.rows if r["kind"] == "op"]
    assert ops[0]["time_delta"] >= ops[-1]["time_delta"]  # sorted by impact
    text = d.table(row_limit=5)
    assert "Change %" in text and "ProfilerStep*" in text
    same = diff(a, a)
    assert same.slower_by == 0 and all(r["time_delta"] == 0 for r in same.rows)
    with pytest.raises(TypeError, match="trace path"):
        diff(1, a)


def test_tensorboard_handler_writes_pytorchs_file_layout(tmp_path):
    out = tmp_path / "log"
    with profile(on_trace_ready=tensorboard_trace_handler(str(out), worker_name="w0")):
        ct.ones(2) + 1
    with profile(on_trace_ready=tensorboard_trace_handler(str(out), use_gzip=True)):
        ct.ones(2) + 1
    names = sorted(os.listdir(out))
    assert len(names) == 2
    assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json", names[1])
    host = re.escape(socket.gethostname())
    assert re.fullmatch(rf"{host}_{os.getpid()}\.\d+\.pt\.trace\.json\.gz", names[0])
    with gzip.open(out / names[0], "rt") as f:
        check_trace(json.load(f))


def test_trace_metadata_time_base_and_distributed_info(tmp_path):
    before = time.time_ns()
    with profile() as prof:
        ct.ones(2) + 1
    prof.add_metadata("run", "baseline")
    prof.add_metadata_json("config", '{"lr": 0.1}')
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    assert before <= doc["baseTimeNanoseconds"] <= time.time_ns()
    assert doc["distributedInfo"] == {"backend": None, "rank": 0, "world_size": 1}
    assert (doc["run"], doc["config"]) == ("baseline", {"lr": 0.1})
    assert doc["coretorch"]["machine"]["cores"] >= 1


def test_memory_timeline_defaults_to_the_device_that_allocated_in_the_window():
    from coretorch.device import device_types
    from coretorch.plugins import backends

    if "toy" not in backends():
        pytest.skip("the example backend coretorch-toy is not installed (make install)")
    cpu_live = device_types()["cpu"].allocator.allocated
    held = ct.empty(cpu_live // 4 + 2**18, device="toy")  # more live on toy than on cpu
    with profile(profile_memory=True) as prof:
        del held  # freed in the window: toy's peak is its bytes before it
        ct.ones(64).sum()
    stats = prof.memory_stats()
    assert stats["toy"]["peak"] > stats["cpu"]["peak"] and stats["toy"]["allocated_bytes"] == 0
    assert prof.result.memory_timeline()["device"] == "cpu"


def test_memory_timeline_by_category(full, tmp_path):
    tl = full.result.memory_timeline("cpu")
    cats = tl["categories"]
    assert set(cats) >= {"parameter", "optimizer state", "activation", "gradient", "temporary"}
    at_peak = dict(zip(cats, max(tl["bytes"], key=sum)))
    shapes = [p.numel() for p in nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2)).parameters()]
    params = 4 * sum(shapes)
    assert at_peak["parameter"] == params  # made before the window, known by identity
    # Adam's two moments and its step count (a float32 scalar) per parameter
    assert at_peak["optimizer state"] == 2 * params + 4 * len(shapes)
    assert tl["peak_bytes"] == max(sum(r) for r in tl["bytes"])
    full.export_memory_timeline(str(tmp_path / "m.json"))
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["categories"] == cats and len(doc["times_us"]) == len(doc["bytes"])
    full.export_memory_timeline(str(tmp_path / "m.html"))
    page = (tmp_path / "m.html").read_text()
    assert "<script src=" not in page and "Memory timeline (cpu)" in page
    with pytest.raises(ValueError, match=r"\.json"):
        full.export_memory_timeline(str(tmp_path / "m.txt"))
    summary = full.memory_summary()
    assert "Live on cpu at the peak" in summary and "activation" in summary
    with profile() as bare:
        ct.ones(1)
    with pytest.raises(RuntimeError, match="profile_memory=True"):
        bare.result.memory_timeline()


def test_flops_in_readable_units_with_what_is_counted(full):
    text = full.flops_summary()
    assert re.search(
        r"Total FLOPs: [\d.]+ (K|M)FLOP \([\d,]+\): forward [\d.]+ \w+, "
        r"backward [\d.]+ \w+",
        text,
    )
    assert "Per step:" in text and "over 3 steps" in text
    assert "2 FLOPs per multiply-add" in text and "PyTorch" in text
    with profile() as bare:
        ct.ones(1)
    with pytest.raises(RuntimeError, match="with_flops=True"):
        bare.flops_summary()


def test_framework_overhead_column_when_kernels_are_bracketed():
    # a dispatcher that brackets backend kernels gives each op its kernel time (kernel_ns)
    raw = RawProfile()
    raw.t1 = 100_000
    raw.ops = [
        region("aten::linear", EventKind.FUNCTION, 0, 10_000, 1),
        region("aten::addmm", EventKind.FUNCTION, 2_000, 9_000, 1, kernel=5_000),
        region("aten::relu", EventKind.FUNCTION, 20_000, 24_000, 1, kernel=1_000),
    ]
    rows = {r["Name"]: r for r in ProfileResult(raw).key_averages().rows()}
    assert rows["aten::addmm"]["In kernels"] == pytest.approx(5.0)
    assert rows["aten::linear"]["Overhead %"] == pytest.approx(50.0)  # 10 us, 5 in kernels
    assert rows["aten::relu"]["Overhead %"] == pytest.approx(75.0)
    text = ProfileResult(raw).key_averages().table()
    assert "In kernels" in text and "Overhead %" in text
    plain = RawProfile()
    plain.ops = [region("aten::relu", EventKind.FUNCTION, 0, 4_000, 1)]
    assert "Overhead %" not in ProfileResult(plain).key_averages().table()
    # the diff and the report show it too
    d = diff(ProfileResult(plain), ProfileResult(raw))
    relu = next(r for r in d.rows if r["name"] == "aten::relu")
    assert (relu["overhead_a"], relu["overhead_b"]) == (0, pytest.approx(3.0))
    assert "Overhead b" in d.table()
    from coretorch_profiler.report import report_html

    assert "<th>Overhead %</th>" in report_html(ProfileResult(raw))
    assert "<th>Overhead %</th>" not in report_html(ProfileResult(plain))


def test_table_options_as_pytorch_spells_them():
    x = ct.ones(3)
    with profile(record_shapes=True) as prof:
        with record_function("a_rather_long_region_name_for_the_table"):
            x + 1
    avgs = prof.key_averages(group_by_input_shape=True)
    text = avgs.table(
        time_unit="ms",
        max_name_column_width=10,
        top_level_events_only=True,
        max_shapes_column_width=20,
    )
    names = [ln.split()[0] for ln in text.splitlines()[2:-1] if ln.strip()]
    assert names[0] == "a_rathe..." and "aten::add" not in names  # top level only
    assert re.search(r"\d\.\d{3}ms", text) and "us " not in text
    with pytest.raises(ValueError, match="time_unit"):
        avgs.table(time_unit="h")
