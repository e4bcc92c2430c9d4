"""coretorch.utils.checkpoint: the gradients of a checkpointed block equal the plain block's
(dropout included), and the PyTorch-spelled options behave as PyTorch's."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import coretorch as ct
from coretorch.utils.checkpoint import (
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    detach_variable,
)


def _block():
    ct.manual_seed(0)
    return ct.nn.Sequential(
        ct.nn.Linear(4, 8), ct.nn.Tanh(), ct.nn.Dropout(0.5), ct.nn.Linear(8, 4)
    ).double()


def _grads(block, x, run):
    block.zero_grad()
    x.grad = None
    ct.manual_seed(1)  # the same dropout mask for every variant
    y = run()
    (y * y).sum().backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in block.parameters()]


@pytest.mark.parametrize("variant", ["reentrant", "non-reentrant", "sequential"])
def test_gradients_equal_the_plain_block(variant):
    block = _block()
    x = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    ref = _grads(block, x, lambda: block(x))
    run = {
        "reentrant": lambda: checkpoint(block, x, use_reentrant=True),
        "non-reentrant": lambda: checkpoint(block, x, use_reentrant=False),
        "sequential": lambda: checkpoint_sequential(block, 2, x, use_reentrant=False),
    }[variant]
    for a, b in zip(ref, _grads(block, x, run)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_recomputation_keeps_the_programs_random_stream():
    block = _block()
    x = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    ct.manual_seed(5)
    checkpoint(block, x, use_reentrant=False).sum().backward()
    after_ckpt = ct.rand(3).numpy()
    ct.manual_seed(5)
    block(x).sum().backward()
    np.testing.assert_array_equal(ct.rand(3).numpy(), after_ckpt)


def test_forward_keeps_no_graph_inside_the_block():
    block = _block()
    x = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    y = checkpoint(block, x, use_reentrant=False)
    # the output's node leads straight to the inputs, not through the block's ops
    assert "Linear" not in str(y.grad_fn) and y.grad_fn.name().startswith("_Checkpoint")


def test_parameters_get_gradients_without_grad_requiring_inputs():
    block = _block()
    x = ct.randn(3, 4, dtype=ct.float64)
    checkpoint(block, x, use_reentrant=False).sum().backward()
    assert block[0].weight.grad is not None
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(block, x, use_reentrant=True)
    assert not y.requires_grad


def test_options():
    block = _block()
    x = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(block, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: a * scale, x, use_reentrant=True, scale=2.0)
    y = checkpoint(lambda a, scale: a * scale, x, use_reentrant=False, scale=2.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 4), 2.0))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(block, x, use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(block, x, use_reentrant=False, determinism_check="strict")
    entered = []

    @contextlib.contextmanager
    def mark(name):
        entered.append(name)
        yield

    checkpoint(
        block, x, use_reentrant=False, context_fn=lambda: (mark("forward"), mark("recompute"))
    ).sum().backward()
    assert entered == ["forward", "recompute"]


def test_a_block_that_changes_between_runs_is_caught():
    calls = []

    def grows(a):
        calls.append(1)
        return a.repeat(len(calls))

    x = ct.randn(3, dtype=ct.float64, requires_grad=True)
    y = checkpoint(grows, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="recomputed outputs"):
        y.sum().backward()


def test_detach_variable_keeps_requires_grad():
    a, b = detach_variable((ct.ones(2, requires_grad=True), ct.ones(2)))
    assert a.is_leaf and a.requires_grad and not b.requires_grad
    with pytest.raises(RuntimeError, match="Only tuple of tensors"):
        detach_variable([a])
