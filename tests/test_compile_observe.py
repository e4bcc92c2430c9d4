"""coretorch.compile observability and random numbers: `explain`, the profiler's view of a
replay, `detect_anomaly` forcing eager runs, and random ops drawing fresh numbers from the
generator stream as the eager step does."""

from __future__ import annotations

import importlib

import pytest
from compile_cases import mlp

import coretorch as ct
import coretorch.nn.functional as F


def test_explain_lists_kernels_guards_and_breaks(capsys):
    case = mlp()
    case.step(*case.batches[0])
    report = ct.compile.explain(case.step, *case.batches[1])
    printed = capsys.readouterr().out
    assert str(report) in printed
    assert printed.startswith(
        "coretorch.compile.explain(step): 22 kernels captured, 0 graph breaks"
    )
    assert (
        report.kernels[0].startswith("addmm ")
        and "loss = loss_fn(model(xb), yb)" in report.kernels[0]
    )
    assert report.kernels[-1].startswith("_fused_sgd_ ") and "opt.step()" in report.kernels[-1]
    assert any("loss.backward()" in k for k in report.kernels)
    assert (
        "argument 0: tensor shape=[32, 32] strides=[32, 1] dtype=float64 device=cpu "
        "requires_grad=False" in report.guards
    )
    assert "model.0.weight: same tensor and storage" in report.guards
    assert (
        "argument 1: whether the targets contain ignore_index=-100: False (checked on each "
        "call; another value runs that call eagerly)" in report.guards
    )
    assert (
        "SGD.param_groups[0]: lr, momentum read at each replay (only a change to or from "
        "zero re-records)" in report.guards
    )
    assert report.breaks == []


def test_explain_reports_a_break_with_the_users_line(capsys):
    def step(x):
        y = x * 2
        if y.sum() > 0:  # data-dependent Python branch
            y = y + 1
        return y

    report = ct.compile.explain(step, ct.ones(2))
    assert report.graph_break_count == 1
    assert "__bool__(): it reads tensor values on the host" in report.breaks[0]
    assert "if y.sum() > 0:  # data-dependent Python branch" in report.breaks[0]
    assert "1 graph breaks" in capsys.readouterr().out


def test_profiler_shows_one_compiled_slice_with_a_child_per_kernel():
    profile = pytest.importorskip("coretorch_profiler").profile
    case = mlp()
    step = ct.compile(case.step)
    for i in range(3):
        step(*case.batches[i])
    with profile() as prof:
        step(*case.batches[3])
    events = list(prof.events())
    top = [e for e in events if e.name == "compiled::step"]
    assert len(top) == 1
    children = [e for e in events if e.cpu_parent is top[0]]
    program = next(iter(step.variants.values())).replayer.program
    assert [e.name for e in children] == [s.op for s in program.steps]
    assert children[0].name == "aten::addmm" and children[-1].name == "aten::_fused_sgd_"
    assert all(e.kernel_ns >= 0 for e in children)


def test_detect_anomaly_forces_eager():
    anomaly = pytest.importorskip("coretorch_profiler").detect_anomaly
    f = ct.compile(lambda x: ct.log(x))
    for _ in range(3):
        f(ct.ones(2))
    # checked: the op ran eagerly
    with anomaly(action="raise"), pytest.raises(RuntimeError, match="log"):
        f(ct.tensor([-1.0, 1.0]))
    assert f(ct.ones(2)).tolist() == [0.0, 0.0]


def test_random_ops_draw_fresh_numbers_from_the_same_stream():
    def step(x):
        return F.dropout(x, 0.5) + ct.randn(4) + ct.rand_like(x)

    comp = ct.compile(step)
    ct.manual_seed(3)
    eager = [step(ct.ones(4)).tolist() for _ in range(6)]
    ct.manual_seed(3)
    compiled = [comp(ct.ones(4)).tolist() for _ in range(6)]
    assert compiled == eager
    assert len({tuple(r) for r in compiled}) == 6  # each replay drew new numbers
    assert next(iter(comp.variants.values())).replayer is not None


def test_a_capture_reads_the_users_source_only_to_show_it(monkeypatch):
    recorder = importlib.import_module("coretorch.compile.recorder")
    read = []
    real = recorder._describe_site
    monkeypatch.setattr(
        recorder, "_describe_site", lambda name, line: read.append(line) or real(name, line)
    )

    def step(x):
        return (x * 2).relu() + 1  # the line every kernel of the step is issued from

    compiled = ct.compile(step, fuse=False)  # (a fusion's note names its line)
    for _ in range(3):  # eager, capture, replay
        assert compiled(ct.ones(3)).tolist() == [3.0, 3.0, 3.0]
    assert read == []
    report = ct.compile.explain(compiled, ct.ones(3))
    assert report.kernels and all(
        "return (x * 2).relu() + 1  # the line every kernel" in k for k in report.kernels
    )
    assert read
