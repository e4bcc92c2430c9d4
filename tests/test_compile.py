"""coretorch.compile: compiled training steps give exactly the eager results (float64, nothing
fused), step for step, with the RNG, optimizer state and BatchNorm statistics advancing alike."""

from __future__ import annotations

import warnings

import pytest
from compile_cases import CASES, digits_cnn, mlp

import coretorch as ct

STEPS = 50


def _train(case, compiled: bool, steps: int = STEPS):
    step = ct.compile(case.step, fuse=False) if compiled else case.step
    ct.manual_seed(1234)  # dropout draws from here, eager and compiled alike
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no re-record, no fallback
        for i in range(steps):
            losses.append(step(*case.batches[i % len(case.batches)]).item())
    state = [t.detach().clone() for t in (*case.model.parameters(), *case.model.buffers())]
    return losses, state, step


def _assert_same(a, b):
    losses_a, state_a, _ = a
    losses_b, state_b, _ = b
    assert losses_a == losses_b  # bitwise
    for x, y in zip(state_a, state_b):
        assert ct.equal(x, y)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_training_matches_eager_bitwise(name):
    eager = _train(CASES[name](), compiled=False)
    compiled = _train(CASES[name](), compiled=True)
    _assert_same(eager, compiled)
    v = next(iter(compiled[2].variants.values()))
    assert v.replayer is not None and v.records == 1  # recorded once, replayed 48 times


def test_lr_scheduler_changes_are_read_at_replay():
    def run(compiled):
        case = digits_cnn()
        sched = ct.optim.lr_scheduler.OneCycleLR(case.opt, max_lr=0.01, total_steps=STEPS + 1)
        step = ct.compile(case.step, fuse=False) if compiled else case.step
        ct.manual_seed(7)
        losses = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for i in range(20):
                losses.append(step(*case.batches[i % 4]).item())
                sched.step()
        return losses, step

    eager, (compiled, step) = run(False)[0], run(True)
    assert eager == compiled
    v = next(iter(step.variants.values()))
    assert v.records == 1
    assert any("reads betas, lr from AdamW.param_groups[0]" in n for n in v.replayer.program.notes)


@pytest.mark.parametrize("kw", [{"foreach": True}, {"foreach": False, "fused": False}])
def test_sgd_foreach_and_single_tensor_paths_replay(kw):
    eager = _train(mlp(**kw), compiled=False, steps=10)
    compiled = _train(mlp(**kw), compiled=True, steps=10)
    _assert_same(eager, compiled)


def test_replay_matches_eager_state_and_versions():
    a, b = mlp(), mlp()
    cstep = ct.compile(b.step)
    for i in range(4):
        la, lb = a.step(*a.batches[i]), cstep(*b.batches[i])
        assert la.item() == lb.item()
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert ct.equal(pa.grad, pb.grad)
        assert pa._version == pb._version  # in-place updates bump versions as eagerly
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert ct.equal(a.opt.state[pa]["momentum_buffer"], b.opt.state[pb]["momentum_buffer"])


def test_results_are_fresh_tensors():
    case = mlp()
    step = ct.compile(case.step)
    outs = [step(*case.batches[i % 4]) for i in range(5)]
    values = [o.item() for o in outs]
    assert len({id(o) for o in outs}) == 5
    assert [o.item() for o in outs] == values  # later replays did not overwrite earlier results
    assert not outs[-1].requires_grad


def test_decorator_forms_and_inplace_input_writeback():
    @ct.compile
    def bump(x):
        x.add_(1)
        return x * 2

    @ct.compile(fullgraph=True)
    def double(x):
        return x * 2

    for i in range(4):
        x = ct.full((3,), float(i))
        r = bump(x)
        assert x.tolist() == [i + 1.0] * 3  # the caller's tensor was written
        assert r.tolist() == [2.0 * (i + 1)] * 3
        assert double(x).tolist() == [2.0 * (i + 1)] * 3


def test_compile_module_and_explain_are_reachable():
    assert callable(ct.compile) and callable(ct.compile.explain)
    import coretorch.compile.recorder as rec  # submodules import normally

    assert rec.GraphBreak is ct.compile.GraphBreak


def test_compiling_a_module_guards_its_parameters():
    lin = ct.nn.Linear(3, 2)
    f = ct.compile(lin)
    with ct.no_grad():
        for _ in range(3):
            r = f(ct.ones(1, 3))
        assert ct.equal(r, lin(ct.ones(1, 3)))
        lin.weight = ct.nn.Parameter(ct.zeros(2, 3))
        with pytest.warns(UserWarning, match="re-recording Linear: self.weight was replaced"):
            r = f(ct.ones(1, 3))
    assert ct.equal(r, lin.bias.detach().reshape(1, 2))


def test_method_decorator_and_nested_compiled_functions():
    class Trainer:
        def __init__(self):
            self.case = mlp()

        @ct.compile
        def step(self, x, y):
            return inner(x, y)

    def plain(x, y):
        return trainer.case.step(x, y)

    inner = ct.compile(plain)  # called inside a capture: runs inline, recorded by the outer
    trainer, ref = Trainer(), mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(5):
            assert (
                trainer.step(*trainer.case.batches[i % 4]).item()
                == ref.step(*ref.batches[i % 4]).item()
            )
    assert all(v.replayer is None for v in inner.variants.values())  # inline in the outer


def test_pytorch_compile_arguments():
    def f(x):
        return x + 1

    assert ct.compile(f, disable=True) is f
    assert ct.compile(f, mode="reduce-overhead", dynamic=True).fuse is True
    assert ct.compile(f, backend="eager").fuse is False
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        ct.compile(f, mode="fast")
    with pytest.raises(NotImplementedError, match="backend='cudagraphs' is not supported"):
        ct.compile(f, backend="cudagraphs")
    with pytest.raises(NotImplementedError, match="options are not supported"):
        ct.compile(f, options={"triton.cudagraphs": True})
