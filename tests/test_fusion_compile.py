"""coretorch.compile with the fusion pass: runs of elementwise kernels in a captured training
step replay as fused kernels, and training matches eager (float64 losses within 1e-12 relative
over 50 steps); ``fuse=False`` leaves the program as recorded; explain lists each fusion."""

from __future__ import annotations

import math
import warnings

import pytest
from compile_cases import CASES, Case, _sgd_step, mlp

import coretorch as ct
import coretorch.nn.functional as F
from coretorch.compile.fusion_pass import FusedCall

STEPS = 50


def _train(case, fuse: bool | None, steps: int = STEPS):
    step = case.step if fuse is None else ct.compile(case.step, fuse=fuse)
    ct.manual_seed(1234)
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no re-record, no fallback
        for i in range(steps):
            losses.append(step(*case.batches[i % len(case.batches)]).item())
    params = [p.detach().clone() for p in case.model.parameters()]
    return losses, params, step


def _program(step):
    return next(iter(step.variants.values())).replayer.program


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_training_matches_eager(name):
    eager_losses, eager_params, _ = _train(CASES[name](), None)
    losses, params, step = _train(CASES[name](), True)
    for a, b in zip(losses, eager_losses):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), (losses, eager_losses)
    for p, q in zip(params, eager_params):
        ct.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)
    fused = [s for s in _program(step).steps if s.op.startswith("fused::")]
    assert fused and all(isinstance(s.fn, FusedCall) for s in fused)


@pytest.mark.parametrize(
    "opt_cls,kw,update",
    [
        (ct.optim.SGD, {"lr": 0.05, "momentum": 0.9, "foreach": False, "fused": False}, "add+add"),
        (ct.optim.RMSprop, {"lr": 1e-3, "foreach": False}, "mul+addcmul+sqrt+add+addcdiv"),
    ],
)
def test_per_parameter_optimizer_updates_fuse_in_place(opt_cls, kw, update):
    """The single-tensor optimizer paths update parameters and state with in-place elementwise
    kernels: each parameter's update becomes one fused kernel writing its buffers in place."""

    def case():
        c = mlp()
        opt = opt_cls(c.model.parameters(), **kw)
        return Case(c.model, opt, c.batches, _sgd_step(c.model, opt, F.cross_entropy))

    eager_losses, eager_params, _ = _train(case(), None, steps=20)
    losses, params, step = _train(case(), True, steps=20)
    for a, b in zip(losses, eager_losses):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    for p, q in zip(params, eager_params):
        ct.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)
    ops = [s.op for s in _program(step).steps]
    assert ops.count(f"fused::{update}") == len(params)


def test_fuse_false_replays_the_recorded_kernels():
    _, _, step = _train(mlp(), False, steps=3)
    program = _program(step)
    assert not any(s.op.startswith("fused::") for s in program.steps)
    assert not any("fused" in n and "kernels" in n for n in program.notes)


def test_mlp_runs_fuse_and_drop_only_unused_buffers():
    _, _, step = _train(mlp(), True, steps=3)
    program = _program(step)
    ops = [s.op for s in program.steps]
    # cross_entropy's backward: exp(log_softmax) times the incoming gradient minus the one-hot
    # targets becomes one kernel that writes only the difference, which the next mm reads (the
    # product is never stored)
    assert "fused::mul+sub" in ops
    mul_sub = program.steps[ops.index("fused::mul+sub")]
    assert len(mul_sub.written) == 1 and mul_sub.written[0]._shape == (32, 10)
    assert any(
        n.startswith("fused 2 kernels (mul+sub) into one, writing 1 of 2 buffers")
        for n in program.notes
    )
    later = program.steps[ops.index("fused::mul+sub") + 1 :]
    assert any(any(t._storage is mul_sub.written[0]._storage for t in s.reads) for s in later)


def test_explain_lists_the_fused_kernels(capsys):
    case = mlp()
    case.step(*case.batches[0])
    report = ct.compile.explain(case.step, *case.batches[1])
    fused = [n for n in report.notes if n.startswith("fused ")]
    assert any("(div+fill_+div)" in n and "loss = loss_fn(model(xb), yb)" in n for n in fused)
    assert any("(mul+sub)" in n and "loss.backward()" in n for n in fused)
    assert "(mul+sub)" in capsys.readouterr().out


def _compiled_program(fn, *args):
    step = ct.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            result = step(*args)
    return result, _program(step)


def test_a_run_writes_what_the_caller_keeps_and_drops_the_rest():
    def fn(x):
        y = x * 2
        z = y + 1
        return z * z, y

    x = ct.linspace(-1, 1, 12, dtype=ct.float64).reshape(3, 4)
    (w, y), program = _compiled_program(fn, x)
    assert [s.op for s in program.steps] == ["fused::mul+add+mul"]
    assert len(program.steps[0].written) == 2  # y and the result, not z
    ct.testing.assert_close(w, (x * 2 + 1) ** 2, rtol=0, atol=0)
    ct.testing.assert_close(y, x * 2, rtol=0, atol=0)


def test_reading_a_view_of_a_run_value_ends_the_run():
    def fn(x):
        y = x * 2
        z = y.t() + 1  # same shape, another element order than the run computes in
        return z * 3

    x = ct.arange(16, dtype=ct.float64).reshape(4, 4)
    out, program = _compiled_program(fn, x)
    assert [s.op for s in program.steps] == ["aten::mul", "fused::add+mul"]
    ct.testing.assert_close(out, (x * 2).t().add(1).mul(3), rtol=0, atol=0)
