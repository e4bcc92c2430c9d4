"""profile(): events, nesting, key_averages tables, schedules, memory and FLOP accounting."""

from __future__ import annotations

import contextlib
import re
import sys

import pytest

import coretorch as ct
from coretorch.device import device_types
from coretorch.ops import REGISTRY
from coretorch_profiler import (
    ProfilerAction,
    ProfilerActivity,
    detect_anomaly,
    profile,
    record_function,
    schedule,
    supported_activities,
)


def _rows_by_name(rows):
    return {r["Name"]: r for r in rows}


def test_events_nest_under_user_annotations(device):
    a = ct.zeros(3, device=device)
    with profile() as prof:
        with record_function("block"):
            a + 1
            a + 2
        a + 3
    evs = prof.events()
    block = next(e for e in evs if e.name == "block")
    assert [c.name for c in block.cpu_children] == ["aten::add", "aten::add"]
    assert block.category == "user_annotation"
    top = [e for e in evs if e.cpu_parent is None]
    assert [e.name for e in top] == ["block", "aten::add"]
    adds = [e for e in evs if e.name == "aten::add"]
    assert all(e.category == "cpu_op" for e in adds)
    assert block.cpu_time_total >= sum(c.cpu_time_total for c in block.cpu_children)
    assert block.self_cpu_time_total == pytest.approx(
        block.cpu_time_total - sum(c.cpu_time_total for c in block.cpu_children), abs=1e-6
    )


def test_table_columns_and_contents(device):
    a = ct.zeros(4, 5, device=device)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            a + 1
        with record_function("my_block"):
            a + a
    avgs = prof.key_averages()
    text = avgs.table(sort_by="cpu_time_total", row_limit=10)
    header = next(ln for ln in text.splitlines() if "Name" in ln)
    cols = [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ]
    positions = [header.index(c) for c in cols]
    assert positions == sorted(positions)
    assert "Input Shapes" not in header and "CPU Mem" not in header and "FLOPs" not in header
    assert re.search(r"aten::add\s.*\s4\s*$", text, re.M)  # 4 calls of add
    assert re.search(r"my_block\s.*\s1\s*$", text, re.M)
    assert text.rstrip().splitlines()[-1].startswith("Self CPU time total: ")
    rows = avgs.rows(sort_by="cpu_time_total")
    assert [r["CPU total"] for r in rows] == sorted((r["CPU total"] for r in rows), reverse=True)
    by = _rows_by_name(rows)
    assert by["aten::add"]["# of Calls"] == 4 and by["my_block"]["# of Calls"] == 1
    assert sum(r["Self CPU %"] for r in rows) == pytest.approx(100.0)
    assert by["my_block"]["CPU total"] >= by["my_block"]["Self CPU"]
    assert avgs.rows(row_limit=1) == avgs.rows()[:1]
    # the printed numbers are the data's, in PyTorch's format
    line = next(ln for ln in text.splitlines() if ln.startswith("aten::add"))
    assert f"{by['aten::add']['Self CPU %']:.2f}%" in line


def test_group_by_input_shape_and_stack(device):
    a, b = ct.zeros(2, 3, device=device), ct.zeros(7, device=device)
    with profile(record_shapes=True, with_stack=True) as prof:
        a + 1
        a + 1
        line_b = sys._getframe().f_lineno + 1  # the next line's: one statement per line
        b + 1
    rows = prof.key_averages(group_by_input_shape=True).rows()
    shapes = {r["Input Shapes"]: r["# of Calls"] for r in rows if r["Name"] == "aten::add"}
    assert shapes == {"[[2, 3], [], []]": 2, "[[7], [], []]": 1}  # alpha too, as PyTorch
    text = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in text and "[[2, 3], [], []]" in text
    rows = prof.key_averages(group_by_stack_n=1).rows()
    locs = [r["Source Location"] for r in rows if r["Name"] == "aten::add"]
    assert len(locs) == 3 and f"{__file__}({line_b}): test_group_by_input_shape_and_stack" in [
        loc[0] for loc in locs
    ]


def _innermost(prof, name: str) -> list[str]:
    return [str(e.stack[0]) for e in prof.events() if e.name == name and e.stack]


def test_stacks_of_ops_and_backward_passes_name_the_calling_line():
    """Stacks skip the core's own frames without walking them (and share one walk among a
    backward pass's nodes): each op still names the line that ran it, each backward pass its own
    ``backward()`` line, with one observer and with two."""
    x = ct.ones(3, requires_grad=True)
    here = f"{__file__}({{}}): test_stacks_of_ops_and_backward_passes_name_the_calling_line"
    for observers in (1, 2):
        with contextlib.ExitStack() as extra:
            if observers == 2:
                extra.enter_context(detect_anomaly())
            with profile(with_stack=True) as prof:
                line_mul = sys._getframe().f_lineno + 1
                y = (x * 2).sum()
                line_first = sys._getframe().f_lineno + 1
                y.backward(retain_graph=True)
                line_second = sys._getframe().f_lineno + 1
                y.backward()
        assert _innermost(prof, "aten::mul")[0] == here.format(line_mul)
        nodes = _innermost(prof, "MulBackward0")
        assert nodes == [here.format(line_first), here.format(line_second)], observers


def test_table_sort_by_unknown_key_says_what_is_valid():
    with profile() as prof:
        ct.zeros(1, device="meta") + 1
    with pytest.raises(AttributeError, match="sort_by 'bogus'.*cpu_time_total"):
        prof.key_averages().table(sort_by="bogus")


def test_results_need_a_finished_window():
    prof = profile()
    with prof:
        with pytest.raises(RuntimeError, match="still recording"):
            prof.events()
    assert isinstance(prof.events(), list)
    if ProfilerActivity.CUDA not in supported_activities():
        with pytest.raises(NotImplementedError, match="ProfilerActivity.CUDA needs the cuda"):
            profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
@pytest.mark.parametrize(
    "cfg",
    [
        dict(wait=1, warmup=1, active=2),
        dict(wait=0, warmup=0, active=1),
        dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3),
    ],
)
def test_schedule_matches_torch(cfg):
    torch_profiler = pytest.importorskip("torch.profiler")
    ours, theirs = schedule(**cfg), torch_profiler.schedule(**cfg)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]


def test_schedule_records_only_active_steps(device):
    a = ct.zeros(1, device=device)
    ready = []
    with profile(
        schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        on_trace_ready=lambda p: ready.append(p.key_averages()),
        record_shapes=True,
    ) as prof:
        for step in range(6):
            ct.zeros(step + 1, device=device) + a  # the shape tells the step
            prof.step()
    assert len(ready) == 1
    evs = prof.events()
    steps = [e.name for e in evs if e.name.startswith("ProfilerStep#")]
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"]
    adds = [e.input_shapes[0] for e in evs if e.name == "aten::add"]
    assert adds == [[3], [4]]
    for e in evs:
        if e.name == "aten::add":
            assert e.cpu_parent is not None and e.cpu_parent.name.startswith("ProfilerStep#")
    assert schedule(wait=0, warmup=0, active=1)(0) is ProfilerAction.RECORD_AND_SAVE
    with pytest.raises(ValueError, match="active"):
        schedule(wait=0, warmup=0, active=0)


def test_no_schedule_records_everything_and_marks_steps(device):
    calls = []
    with profile(on_trace_ready=calls.append) as prof:
        for _ in range(3):
            ct.zeros(2, device=device) + 1
            prof.step()
    assert calls == [prof] and prof.step_num == 3
    evs = prof.events()
    assert [e.name for e in evs].count("aten::add") == 3
    steps = [e for e in evs if e.name.startswith("ProfilerStep#")]
    assert [s.name for s in steps] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    assert all([c.name for c in s.cpu_children] == ["aten::zeros", "aten::add"] for s in steps)
    rows = {r["Name"]: r for r in prof.key_averages().rows()}
    assert rows["ProfilerStep*"]["# of Calls"] == 3  # merged into one row, as PyTorch does
    with profile() as prof:  # no step ended: no step region
        ct.zeros(2, device=device) + 1
    assert not any(e.name.startswith("ProfilerStep") for e in prof.events())


def _allocator(device: str):
    return device_types()[device].allocator


def test_memory_per_op_matches_the_allocator(device):
    alloc = _allocator(device)
    a = ct.zeros(1000, device=device)
    alloc.reset_peak_stats()
    before = alloc.allocated
    with profile(profile_memory=True) as prof:
        b = a + 1
        with record_function("drop"):
            del b
        c = a + 2
        d = c + 3
    del d
    evs = prof.events()
    adds = [e for e in evs if e.name == "aten::add"]
    assert [e.self_memory_usage(device) for e in adds] == [4000, 4000, 4000]
    drop = next(e for e in evs if e.name == "drop")
    assert drop.self_memory_usage(device) == -4000 and drop.self_freed == {device: 4000}
    stats = prof.memory_stats()[device]
    assert stats["allocated_start"] == before
    assert stats["allocated_end"] == before + 8000
    assert stats["peak"] == alloc.peak == before + 8000
    assert (stats["num_allocs"], stats["allocated_bytes"]) == (3, 12000)
    assert (stats["num_frees"], stats["freed_bytes"]) == (1, 4000)
    rows = _rows_by_name(prof.key_averages().rows())
    label = {"cpu": "CPU", "cuda": "CUDA"}.get(device, device.capitalize())
    assert rows["aten::add"][f"Self {label} Mem"] == 12000
    assert rows["drop"][f"{label} Mem"] == -4000
    text = prof.key_averages().table(sort_by=None)
    assert f"Self {label} Mem" in text and "11.72 KB" in text
    summary = prof.memory_summary()
    assert device in summary and "Peak" in summary and "aten::add" in summary
    del c


def test_memory_on_meta_measures_without_data():
    with profile(profile_memory=True) as prof:
        w = ct.zeros(1024, 1024, device="meta")
        y = w + 1  # noqa: F841
    s = prof.memory_stats()["meta"]
    assert s["allocated_bytes"] == 2 * 1024 * 1024 * 4
    assert s["peak"] - s["allocated_start"] == 2 * 1024 * 1024 * 4


def test_flops_elementwise(device):
    a = ct.zeros(6, 7, device=device)
    with profile(with_flops=True) as prof:
        a + 1
        with record_function("two"):
            a + a
            a + a
    rows = _rows_by_name(prof.key_averages().rows())
    flop_col = next(k for k in rows["aten::add"] if k.startswith("Total") and "FLOPs" in k)
    assert rows["aten::add"][flop_col] == 3 * 42
    assert rows["two"][flop_col] == 0
    assert prof.total_flops() == 126
    assert "--" in prof.key_averages().table()  # no FLOPs for the annotation


def _flops_of(opname: str, *args, **kwargs) -> int:
    with profile(with_flops=True) as prof:
        getattr(ct, opname)(*args, **kwargs)
    return prof.total_flops()


def test_flops_matmul_on_meta():
    if "mm" not in REGISTRY or not hasattr(ct, "matmul"):
        pytest.skip("matmul is not declared yet")
    m, k, n = 32, 64, 16
    a, b = ct.zeros(m, k, device="meta"), ct.zeros(k, n, device="meta")
    assert _flops_of("matmul", a, b) == 2 * m * k * n
    bt = ct.zeros(4, m, k, device="meta"), ct.zeros(4, k, n, device="meta")
    assert _flops_of("matmul", *bt) == 4 * 2 * m * k * n


def test_flops_conv2d_on_meta():
    conv = (
        getattr(getattr(ct.nn, "functional", None), "conv2d", None) if hasattr(ct, "nn") else None
    )
    if conv is None:
        pytest.skip("conv2d is not available yet")
    n, cin, cout, h, w, kh, kw = 2, 3, 8, 10, 12, 3, 5
    x, wt = ct.zeros(n, cin, h, w, device="meta"), ct.zeros(cout, cin, kh, kw, device="meta")
    with profile(with_flops=True) as prof:
        conv(x, wt, padding=1)
    ho, wo = h + 2 - kh + 1, w + 2 - kw + 1
    assert prof.total_flops() == 2 * n * cout * ho * wo * cin * kh * kw


def test_profiler_removes_its_callbacks():
    from coretorch import record_function as rf_mod
    from coretorch.tensor import storage

    before = (len(rf_mod._global), len(storage._hooks), rf_mod.state.active)
    with profile(profile_memory=True):
        assert rf_mod.state.active
    assert (len(rf_mod._global), len(storage._hooks), rf_mod.state.active) == before


def test_flops_of_a_training_step_on_meta():
    if not hasattr(ct, "nn") or not hasattr(ct.nn, "Linear"):
        pytest.skip("coretorch.nn.Linear is not available yet")
    bsz, fin, fout = 8, 32, 64
    layer = ct.nn.Linear(fin, fout, device="meta")
    x = ct.zeros(bsz, fin, device="meta").requires_grad_()
    with profile(with_flops=True) as prof:
        layer(x).sum().backward()
    evs = prof.events()
    mm = 2 * bsz * fin * fout
    # forward x @ W.T + b: one addmm; backward grad @ W and grad.T @ x: two mm
    assert [e.flops for e in evs if e.name == "aten::addmm"] == [mm + bsz * fout]
    bwd_mm = [
        e.flops
        for e in evs
        if e.name == "aten::mm"
        and e.cpu_parent is not None
        and e.cpu_parent.name == "AddmmBackward0"
    ]
    assert bwd_mm == [mm, mm]
    # nested FLOPs (an addmm's own mm) are counted once; the sums count one per element
    assert prof.total_flops() == 3 * mm + bsz * fout + sum(
        e.flops for e in evs if e.name == "aten::sum"
    )


@pytest.mark.filterwarnings("ignore::coretorch.ops.cpu_fallback.CPUFallbackWarning")
def test_observing_backward_does_not_make_it_copy_gradients(device):
    # AccumulateGrad takes a fresh gradient over as .grad without a copy; a RecordFunction
    # holding the gradients (the profiler's, the anomaly detector's) must not defeat that, or
    # profiling would show (and time) clones that an unprofiled step never runs
    from coretorch_profiler import detect_anomaly

    w = ct.ones(3, 4, device=device, requires_grad=True)
    x = ct.ones(2, 3, device=device)
    with detect_anomaly(), profile() as prof:
        (x @ w).sum().backward()
    acc = [e for e in prof.events() if e.name == "AccumulateGrad"]
    assert acc and [c.name for e in acc for c in e.cpu_children] == []


def test_raw_records_leave_the_garbage_collectors_view(device):
    # a record the collector keeps tracking is promoted to the oldest generation, and piles of
    # those trigger full collections of the whole heap (~100 ms each, every few hundred steps)
    import gc

    a = ct.ones(4, 3, device=device)
    with profile(record_shapes=True, with_stack=True, profile_memory=True) as prof:
        for _ in range(3):
            (a * 2).sum(0, keepdim=True)
    gc.collect()
    col = prof.result.raw  # the finished window's records
    assert col.ops and not [r for r in col.ops + col.memory if gc.is_tracked(r)]
