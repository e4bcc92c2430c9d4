"""Where a step's time goes: ProfilerStep#N at optimizer steps, module forward and backward
regions, optimizer and DataLoader regions, user Python functions."""

from __future__ import annotations

import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from coretorch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from coretorch.utils.data import DataLoader, TensorDataset
from coretorch_profiler import profile, record_function, schedule
from coretorch_profiler.raw import EventKind


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(Block(), Block())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


def _setup(n: int = 12):
    ct.manual_seed(0)
    model = Net()
    opt = ct.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(ct.randn(n, 4), ct.randint(0, 2, (n,))), batch_size=4)
    return model, opt, loader


def _train(model, opt, loader, prof=None):
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if prof is not None:
            prof.step()


def _names(events, kind):
    return [e.name for e in events if e.kind is kind]


def test_global_hooks_see_every_module_and_optimizer_and_go_away():
    model, opt, loader = _setup(4)
    seen = []
    handles = [
        register_module_forward_pre_hook(lambda m, a: seen.append(("pre", type(m)))),
        register_module_forward_hook(lambda m, a, o: seen.append(("post", type(m)))),
        register_optimizer_step_pre_hook(lambda o, a, k: seen.append(("step", 0))),
        register_optimizer_step_post_hook(lambda o, a, k: seen.append(("stepped", 0))),
    ]
    _train(model, opt, loader)
    for h in handles:
        h.remove()
    kinds = [k for k, _ in seen]
    # Net, the Sequential, two Blocks with their Linears, the head
    assert kinds.count("pre") == kinds.count("post") == 7
    assert seen[0] == ("pre", Net) and seen[-1] == ("stepped", 0)
    seen.clear()
    _train(model, opt, loader)
    assert seen == []


def test_steps_end_at_optimizer_steps_and_prof_step_does_not_count_twice():
    model, opt, loader = _setup()
    with profile() as prof:
        _train(model, opt, loader, prof)  # both optimizer.step() and prof.step() each batch
    evs = prof.events()
    steps = [e for e in evs if e.kind is EventKind.STEP]
    # the last step holds the loader's final, empty fetch
    assert [s.name for s in steps] == [f"ProfilerStep#{i}" for i in range(4)]
    assert prof.step_num == 3
    assert [c.name for c in steps[3].cpu_children] == [
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    ]
    for s in steps[:3]:
        names = {e.name for e in evs if e.start_ns >= s.start_ns and e.end_ns <= s.end_ns}
        assert {
            "Optimizer.zero_grad#SGD.zero_grad",
            "Optimizer.step#SGD.step",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        } <= names
    row = next(r for r in prof.key_averages().rows() if r["Name"] == "ProfilerStep*")
    assert row["# of Calls"] == 4


def test_schedule_counts_optimizer_steps_without_prof_step():
    model, opt, loader = _setup(24)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
        _train(model, opt, loader)
    assert _names(prof.events(), EventKind.STEP) == ["ProfilerStep#2", "ProfilerStep#3"]


def test_module_regions_forward_and_backward_by_path():
    model, opt, loader = _setup(4)
    _train(model, opt, loader)
    with profile(with_modules=True) as prof:
        _train(model, opt, loader)
    evs = prof.events()
    fwd = _names(evs, EventKind.MODULE)
    assert fwd == [
        "nn.Module: Net",
        "nn.Module: encoder",
        "nn.Module: encoder.0",
        "nn.Module: encoder.0.fc",
        "nn.Module: encoder.1",
        "nn.Module: encoder.1.fc",
        "nn.Module: head",
    ]
    bwd = _names(evs, EventKind.MODULE_BACKWARD)
    assert bwd == [
        "nn.Module: Net (backward)",
        "nn.Module: head (backward)",
        "nn.Module: encoder (backward)",
        "nn.Module: encoder.1 (backward)",
        "nn.Module: encoder.1.fc (backward)",
        "nn.Module: encoder.0 (backward)",
        "nn.Module: encoder.0.fc (backward)",
    ]
    # the backward of a Linear holds the nodes of its forward ops
    fc = next(e for e in evs if e.name == "nn.Module: head (backward)")
    assert "AddmmBackward0" in [c.name for c in fc.cpu_children]
    relu = next(e for e in evs if e.name == "ReluBackward0")
    assert relu.cpu_parent.name == "nn.Module: encoder.1 (backward)"  # Block.forward's relu
    # the module table: rows by path with their own time outside submodules
    rows = {r["Name"]: r for r in prof.key_averages(group_by="module").rows()}
    assert set(rows) == {m[len("nn.Module: ") :] for m in fwd + bwd}
    enc, blk = rows["encoder"], rows["encoder.0"]
    assert enc["CPU total"] >= blk["CPU total"] + rows["encoder.1"]["CPU total"]
    assert enc["Self CPU"] == pytest.approx(
        enc["CPU total"] - blk["CPU total"] - rows["encoder.1"]["CPU total"], abs=0.01
    )
    tree = prof.module_table()
    lines = tree.splitlines()
    assert lines[0].split()[:3] == ["Module", "Forward", "Backward"]
    assert [ln.split()[0] for ln in lines[2:]] == ["Net", "encoder", "0", "fc", "1", "fc", "head"]
    assert lines[3].startswith("  encoder") and lines[4].startswith("    0")
    with pytest.raises(ValueError, match="group_by"):
        prof.key_averages(group_by="nope")


def test_two_root_models_get_their_class_as_prefix():
    g, d = nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1))
    with profile(with_modules=True) as prof:
        d(g(ct.ones(1, 2)))
    assert _names(prof.events(), EventKind.MODULE) == [
        "nn.Module: Linear",
        "nn.Module: Sequential",
        "nn.Module: Sequential.0",
    ]


def test_module_hooks_are_removed_and_cost_one_flag_when_unused():
    from coretorch.nn.modules import module as mod

    with profile(with_modules=True):
        assert mod._global_hooks_on
    assert not mod._global_hooks_on and not mod._global_forward_pre_hooks


def helper(x):
    y = x + 1
    return y * 2


def _nested(depth: int, fn):
    return fn() if depth == 0 else _nested(depth - 1, fn)


@pytest.mark.parametrize("depth", [0, 40])
def test_python_functions_between_ops_own_their_time(depth):
    # depth 40: a program that runs far below its entry point (deeper than a stack is kept)
    _nested(depth, _python_functions_between_ops)


def _python_functions_between_ops():
    x = ct.ones(3)
    with profile(with_stack=True) as prof:
        helper(x)
        with record_function("block"):
            helper(x)
            x - 1
    evs = prof.events()
    py = [e for e in evs if e.kind is EventKind.PYTHON]
    helpers = [e for e in py if e.name.endswith(": helper")]
    assert len(helpers) == 2
    assert helpers[0].name.endswith(f"({helper.__code__.co_firstlineno}): helper")
    for h in helpers:
        assert [c.name for c in h.cpu_children] == ["aten::add", "aten::mul"]
        assert h.self_cpu_time_total >= 0  # the Python between the two ops
    block = next(e for e in evs if e.name == "block")
    assert [c.name for c in block.cpu_children] == [helpers[1].name, "aten::sub"]
    # the function that opened the profiler holds everything it called
    me = next(e for e in py if e.name.endswith("_python_functions_between_ops"))
    assert me.cpu_parent is None or me.cpu_parent.kind is EventKind.PYTHON
