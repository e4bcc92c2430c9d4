"""coretorch.compile guards: every kind of guard, when it fails, records again (or runs eagerly
past the cache limit) with a warning naming the guard, and the results stay the eager ones."""

from __future__ import annotations

import re
import warnings

import pytest
from compile_cases import mlp

import coretorch as ct
from coretorch import nn
from coretorch.compile import CompileWarning


def _calls(fn, *args, n=3):
    """Call fn n times; returns (last result, compile warning messages)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(n):
            r = fn(*args)
    return r, [str(m.message) for m in w if issubclass(m.category, CompileWarning)]


def _replaying(cf) -> bool:
    return any(v.replayer is not None for v in cf.variants.values())


def _only(msgs, pattern):
    assert len(msgs) == 1 and re.search(pattern, msgs[0]), msgs


def test_input_shape_dtype_and_value_make_new_variants():
    f = ct.compile(lambda x, k: x * k)
    _calls(f, ct.ones(3), 2.0)
    r, msgs = _calls(f, ct.ones(4), 2.0)
    _only(msgs, r"new variant of <lambda>: argument 0: shape \(3,\) -> \(4,\)")
    assert r.tolist() == [2.0] * 4
    _, msgs = _calls(f, ct.ones(4, dtype=ct.float64), 2.0)
    _only(msgs, r"argument 0: dtype coretorch.float32 -> coretorch.float64")
    r, msgs = _calls(f, ct.ones(4, dtype=ct.float64), 3.0)
    _only(msgs, r"argument 1: 2.0 -> 3.0")
    assert r.tolist() == [3.0] * 4
    _, msgs = _calls(f, ct.ones(4, 2).t(), 3.0)
    _only(msgs, r"argument 0: shape \(4,\) -> \(2, 4\)")
    _, msgs = _calls(f, ct.ones(2, 4), 3.0)
    _only(msgs, r"argument 0: strides \(1, 2\) -> \(4, 1\)")
    assert len(f.variants) == 6 and all(v.replayer is not None for v in f.variants.values())


def test_grad_mode_is_guarded():
    lin = nn.Linear(3, 2)
    f = ct.compile(lambda x: lin(x) * 1)
    with ct.no_grad():
        _calls(f, ct.ones(1, 3))
    r, msgs = _calls(f, ct.ones(1, 3), n=1)
    _only(msgs, r"grad mode: disabled -> enabled")
    assert r.requires_grad  # eager: the graph escapes, so this variant runs eagerly
    r.sum().backward()
    assert lin.weight.grad is not None


def test_replaced_parameter_and_storage_rerecord():
    lin = nn.Linear(3, 2)

    def f(x):
        with ct.no_grad():
            return lin(x)

    cf = ct.compile(f)
    x = ct.ones(1, 3)
    _calls(cf, x)
    lin.weight = nn.Parameter(ct.zeros(2, 3))
    r, msgs = _calls(cf, x)
    _only(msgs, r"re-recording f: lin.weight was replaced")
    assert ct.equal(r, f(x))
    lin.weight.data = ct.full((2, 3), 2.0)
    r, msgs = _calls(cf, x)
    _only(msgs, r"re-recording f: the storage of lin.weight changed")
    assert ct.equal(r, f(x))
    with ct.no_grad():
        lin.bias.copy_(ct.tensor([5.0, 6.0]))  # values are read live: no re-record
    r, msgs = _calls(cf, x, n=1)
    assert msgs == [] and ct.equal(r, f(x))


def test_gradient_presence_is_guarded():
    eager, comp = mlp(), mlp()

    def make_step(case):
        def step(x, y):  # no zero_grad: gradients accumulate across calls
            loss = ct.nn.functional.cross_entropy(case.model(x), y)
            loss.backward()
            return loss

        return step

    se, sc = make_step(eager), ct.compile(make_step(comp))
    msgs = []
    for i in range(6):
        if i == 4:
            eager.opt.zero_grad()
            comp.opt.zero_grad()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert se(*eager.batches[i % 4]).item() == sc(*comp.batches[i % 4]).item()
        msgs += [str(m.message) for m in w]
    assert len(msgs) == 2, msgs  # gradients gone, then back: each state is recorded
    assert (
        "re-recording step: the grad of case.model.0.weight is None (was set when recorded)"
        in msgs[0]
    )
    assert (
        "re-recording step: the grad of case.model.0.weight is set (was None when recorded)"
        in msgs[1]
    )
    for a, b in zip(eager.model.parameters(), comp.model.parameters()):
        assert ct.equal(a.grad, b.grad)


def test_frozen_parameter_without_autograd_state_replays():
    # a Parameter made with requires_grad=False has no autograd meta: replay's restore of the
    # gradients the step left must skip it (it once crashed on ``None.grad``)
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ct.ones(3))
            self.frozen = nn.Parameter(ct.full((3,), 2.0), requires_grad=False)

        def forward(self, x):
            return (x * self.w * self.frozen).sum()

    m = M()

    def step(x):
        loss = m(x)
        loss.backward()
        return loss

    cf = ct.compile(step)
    r, msgs = _calls(cf, ct.ones(3), n=4)
    assert msgs == [] and _replaying(cf)
    assert r.item() == 6.0 and m.w.grad.tolist() == [8.0] * 3 and m.frozen.grad is None


def test_optimizer_hyperparameter_and_state_are_guarded():
    eager, comp = mlp(), mlp()
    cstep = ct.compile(comp.step)
    msgs = []
    for i in range(8):
        if i == 3:
            for c in (eager, comp):
                c.opt.param_groups[0]["weight_decay"] = 0.01
        if i == 5:
            for c in (eager, comp):
                c.opt.load_state_dict(c.opt.state_dict())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert eager.step(*eager.batches[i % 4]).item() == cstep(*comp.batches[i % 4]).item()
        msgs += [str(m.message) for m in w]
    assert len(msgs) == 2, msgs
    assert "SGD.param_groups[0]['weight_decay']: 0 -> 0.01" in msgs[0]
    assert re.search(r"SGD.state of model.0.weight changed", msgs[1])
    assert _replaying(cstep)


def test_cache_size_limit_runs_eagerly_with_a_warning():
    f = ct.compile(lambda x: x + 1, cache_size_limit=2)
    _calls(f, ct.ones(1))
    _calls(f, ct.ones(2))
    r, msgs = _calls(f, ct.ones(3))
    _only(
        msgs,
        r"<lambda> runs eagerly for new inputs: 2 variants recorded \(cache_size_limit\); "
        r"the last failed guard: argument 0: shape \(2,\) -> \(3,\)",
    )
    assert r.tolist() == [2.0] * 3


def test_rerecord_limit_runs_eagerly():
    scale = nn.Linear(1, 1, bias=False)

    def f(x):
        with ct.no_grad():
            return scale(x)

    cf = ct.compile(f, cache_size_limit=2)
    msgs = []
    for i in range(5):
        scale.weight = nn.Parameter(ct.full((1, 1), float(i)))
        r, m = _calls(cf, ct.ones(1, 1))
        msgs += m
        assert r.item() == float(i)
    assert any(
        re.search(
            r"f now runs eagerly: re-recording f: scale.weight was replaced "
            r"\(2 records reached cache_size_limit\)",
            m,
        )
        for m in msgs
    ), msgs


@pytest.mark.parametrize(
    "why,make",
    [
        ("requires grad", lambda: (ct.ones(2, requires_grad=True), ct.ones(2))),
        ("shares memory", lambda: (ct.ones(2),) * 2),
    ],
)
def test_inputs_that_cannot_be_copied_run_eagerly(why, make):
    f = ct.compile(lambda a, b: a * b)
    r, msgs = _calls(f, *make())
    _only(msgs, why)
    assert r.tolist() == [1.0, 1.0]


def test_data_dependent_choice_on_an_input_is_checked_each_call():
    """cross_entropy picks its fast form when no target is ignore_index: recorded as a value
    guard on the targets; a call whose targets differ runs eagerly (warned once)."""
    eager, comp = mlp(), mlp()
    cstep = ct.compile(comp.step)
    x, y = eager.batches[0]
    y_ignored = y.clone()
    y_ignored[:4] = -100
    msgs = []
    for i, target in enumerate([y, y, y, y_ignored, y, y_ignored]):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert eager.step(x, target).item() == cstep(x, target).item(), i
        msgs += [str(m.message) for m in w]
    _only(
        msgs,
        r"step ran eagerly for a call where whether the targets contain "
        r"ignore_index=-100 \(argument 1\) is True, recorded with False",
    )
    v = next(iter(cstep.variants.values()))
    assert v.records == 1 and len(v.value_guards) == 1


def test_targets_made_inside_the_step_take_the_form_right_for_any_data():
    eager, comp = mlp(), mlp()

    def make(case):
        def step(x, y):
            case.opt.zero_grad()
            t = ct.where(y > 7, -100, y)  # some targets ignored, decided by the data
            loss = ct.nn.functional.cross_entropy(case.model(x), t)
            loss.backward()
            case.opt.step()
            return loss

        return step

    se, sc = make(eager), ct.compile(make(comp))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            assert se(*eager.batches[i % 4]).item() == sc(*comp.batches[i % 4]).item()
    v = next(iter(sc.variants.values()))
    assert v.replayer is not None and v.value_guards == []


def test_a_view_of_an_input_is_not_value_guarded():
    eager, comp = mlp(), mlp()

    def make(case):
        def step(x, y2):
            case.opt.zero_grad()
            loss = ct.nn.functional.cross_entropy(case.model(x), y2[0])  # a view of the input
            loss.backward()
            case.opt.step()
            return loss

        return step

    se, sc = make(eager), ct.compile(make(comp))
    x, y = eager.batches[0]
    ignored = y.clone()
    ignored[:3] = -100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(6):
            y2 = ct.stack([ignored if i % 2 else y, y])  # row 1 never decides the answer
            assert se(x, y2).item() == sc(x, y2).item(), i
    v = next(iter(sc.variants.values()))
    assert v.replayer is not None and v.value_guards == []
