"""coretorch.compile's static memory plan: a replayed step keeps its intermediates in one shared
arena, two buffers live at the same time never share a byte, and nothing a caller can still
read (gradients, module attributes, outputs) is put in it."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from compile_cases import CASES, mlp

import coretorch as ct
from coretorch import nn
from coretorch.compile.memory_plan import ALIGN, place


def _compiled(case, fuse: bool = False, calls: int = 3):
    step = ct.compile(case.step, fuse=fuse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(calls):
            step(*case.batches[i % len(case.batches)])
    v = next(iter(step.variants.values()))
    assert v.replayer is not None
    return step, v.replayer.program


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


@pytest.mark.parametrize("seed", range(20))
def test_place_never_shares_bytes_between_buffers_live_together(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    sizes = [rng.choice([8, 100, 4096, rng.randint(1, 50000)]) for _ in range(n)]
    ranges = []
    for _ in range(n):
        lo = rng.randint(0, 30)
        ranges.append((lo, lo + rng.randint(0, 8)))
    offsets, total = place(sizes, ranges)
    assert all(o % ALIGN == 0 for o in offsets)
    padded = sum(-(-s // ALIGN) * ALIGN for s in sizes)
    assert max(o + s for o, s in zip(offsets, sizes)) == total <= padded
    for i in range(n):
        for j in range(i + 1, n):
            if _overlap(ranges[i], ranges[j]):
                a, b = (offsets[i], offsets[i] + sizes[i]), (offsets[j], offsets[j] + sizes[j])
                assert a[1] <= b[0] or b[1] <= a[0], (i, j)


def test_place_reuses_the_bytes_of_buffers_that_died():
    # a chain: each buffer is read by the next step only, as activations of a deep net
    sizes = [1024] * 10
    offsets, total = place(sizes, [(i, i + 1) for i in range(10)])
    assert total == 2 * 1024


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fuse", [False, True])
def test_intermediates_share_an_arena_smaller_than_their_sum(name, fuse):
    _, program = _compiled(CASES[name](), fuse=fuse)
    (note,) = [n for n in program.notes if n.startswith("memory plan")]
    count, summed, arena = (int(w) for w in note.replace("(", "").split() if w.isdigit())
    assert count > 0 and arena < summed
    (buf,) = program.arenas
    assert buf.nbytes == arena
    base = buf.data
    inside = [
        t
        for s in program.steps
        for t in (*s.reads, *s.written)
        if np.shares_memory(t._storage.data, base)
    ]
    assert len({id(t._storage) for t in inside}) == count
    kept = {id(t._storage) for t in (*program.inputs, *program.outputs, *program.externals)}
    assert not kept & {id(t._storage) for t in inside}


def test_gradients_made_during_the_step_keep_their_values():
    # zero_grad() sets the gradients to None: backward makes new ones inside the step, which
    # the caller reads afterwards and the plan must leave alone
    eager, compiled = mlp(), mlp()
    step, _ = _compiled(compiled)
    ct.manual_seed(0)
    for i in range(3):
        eager.step(*eager.batches[i % 4])
    for i in range(3, 6):
        x, y = eager.batches[i % 4]
        eager.step(x, y)
        step(x, y)
        for pe, pc in zip(eager.model.parameters(), compiled.model.parameters()):
            assert pc.grad is not None and ct.equal(pe.grad, pc.grad)


class _KeepsHidden(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16, dtype=ct.float64), nn.Linear(16, 4, dtype=ct.float64)
        self.hidden = None

    def forward(self, x):
        h = self.fc1(x).relu()
        self.hidden = h  # module state the step sets: its buffer is read after the step
        return self.fc2(h * 2.0)


def test_a_tensor_the_step_keeps_in_module_state_is_not_reused():
    ct.manual_seed(0)
    model = _KeepsHidden()
    opt = ct.optim.SGD(model.parameters(), lr=0.1)

    def train(x):
        opt.zero_grad()
        loss = model(x).square().sum()
        loss.backward()
        opt.step()
        return loss

    step = ct.compile(train, fuse=False)
    xs = [ct.randn(5, 8, dtype=ct.float64) for _ in range(4)]
    for x in xs:
        w1, b1 = model.fc1.weight.detach().clone(), model.fc1.bias.detach().clone()
        step(x)
        # the replayed kernels rewrite the kept tensor; no other buffer is placed over it
        np.testing.assert_array_equal(
            model.hidden.detach().numpy(), np.maximum(x.numpy() @ w1.numpy().T + b1.numpy(), 0)
        )
