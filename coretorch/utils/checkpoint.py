"""Activation checkpointing (mirrors ``torch.utils.checkpoint``): run a block without keeping
its intermediate results, and run it again during backward to get them back.

    >>> import coretorch as ct
    >>> from coretorch.utils.checkpoint import checkpoint
    >>> block = ct.nn.Sequential(ct.nn.Linear(4, 8), ct.nn.Tanh(), ct.nn.Linear(8, 4))
    >>> x = ct.randn(2, 4, requires_grad=True)
    >>> checkpoint(block, x, use_reentrant=False).sum().backward()
    >>> x.grad.shape, block[0].weight.grad.shape
    (coretorch.Size([2, 4]), coretorch.Size([8, 4]))

The block's forward runs under `no_grad`, so only its inputs are kept. Its backward restores the
random state the forward started from (dropout draws the same mask), reruns the block with
grad enabled and backpropagates through the rerun, which accumulates the gradients of the
block's parameters into their ``.grad`` (PyTorch's reentrant form). Both values of
`use_reentrant` run this way; they differ where a user sees it: with ``use_reentrant=False``
the parameters get gradients even when no input requires grad, keyword arguments reach the
function, and `context_fn` is honoured. The parameters' gradients arrive through ``.grad``, so
``autograd.grad`` with respect to a parameter inside a checkpointed block is not supported
(with respect to the block's inputs it is).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Callable, Iterable

from .. import random as _random
from ..autograd.engine import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor.tensor import Tensor

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "noop_context_fn",
    "detach_variable",
    "get_device_states",
    "set_device_states",
]


class CheckpointError(RuntimeError):
    """The rerun of a checkpointed block did not reproduce its forward (other shapes, dtypes or
    devices: the block depends on something that changed, such as global state)."""


def noop_context_fn() -> tuple[
    contextlib.AbstractContextManager, contextlib.AbstractContextManager
]:
    """The default `context_fn`: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of `inputs` detached, keeping whether it requires grad; others as given."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    return tuple(
        x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs
    )


def _device_modules(args: Iterable) -> list:
    """The device modules (``coretorch.cuda`` ...) with a random stream of their own, for the
    devices of the tensors in `args`."""
    import coretorch

    types = sorted({a.device.type for a in args if isinstance(a, Tensor)} - {"cpu", "meta"})
    mods = [getattr(coretorch, t, None) for t in types]
    return [m for m in mods if m is not None and hasattr(m, "get_rng_state")]


def get_device_states(*args) -> tuple[list, list]:
    """(device modules, their random states) for the devices of the tensors in `args`."""
    mods = _device_modules(args)
    return mods, [m.get_rng_state() for m in mods]


def set_device_states(devices: list, states: list) -> None:
    """Restore the random states `get_device_states` returned."""
    for m, s in zip(devices, states):
        m.set_rng_state(s)


@contextlib.contextmanager
def _replayed_rng(saved: tuple | None):
    """Run the block with the random states its forward started from, then give the caller's
    streams back (the recomputation must not shift the program's random numbers)."""
    if saved is None:
        yield
        return
    cpu_state, mods, states = saved
    now_cpu, now_dev = _random.get_rng_state(), [m.get_rng_state() for m in mods]
    _random.set_rng_state(cpu_state)
    set_device_states(mods, states)
    try:
        yield
    finally:
        _random.set_rng_state(now_cpu)
        set_device_states(mods, now_dev)


def _metas(outputs: tuple) -> list:
    return [(tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor) else None for o in outputs]


class _Checkpoint(Function):
    """forward(run, options, anchor, *args): `run(*args)` without a graph; backward reruns
    it with one. `anchor` is a grad-requiring empty tensor (``use_reentrant=False``) that makes
    the output require grad whatever the inputs, or None."""

    @staticmethod
    def forward(ctx, run, options, anchor, *args):
        preserve, check, recompute_ctx, forward_ctx = options
        ctx.run, ctx.check, ctx.recompute_ctx = run, check, recompute_ctx
        ctx.rng = (_random.get_rng_state(), *get_device_states(*args)) if preserve else None
        ctx.slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.slots))
        with no_grad(), forward_ctx:
            out = run(*args)
        ctx.tuple_out = isinstance(out, tuple)
        ctx.metas = _metas(out if ctx.tuple_out else (out,))
        return out

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.others)
        for i, t in zip(ctx.slots, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with _replayed_rng(ctx.rng), enable_grad(), ctx.recompute_ctx:
            out = ctx.run(*args)
        outs = out if ctx.tuple_out else (out,)
        if ctx.check and _metas(outs) != ctx.metas:
            raise CheckpointError(
                f"checkpoint: the recomputed outputs {_metas(outs)} differ "
                f"from the forward's {ctx.metas}; the checkpointed function "
                f"must compute the same thing when run again"
            )
        pairs = [
            (o, g)
            for o, g in zip(outs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(
            a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in args
        )


def checkpoint(
    function: Callable,
    *args,
    use_reentrant: bool | None = None,
    context_fn: Callable = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs,
) -> Any:
    """``function(*args, **kwargs)`` without keeping its intermediate results for backward;
    they are recomputed when the gradient reaches them.

    Args:
        use_reentrant: pass it explicitly, as PyTorch asks (None warns and means True).
            False is recommended: see the module docstring for the difference.
        context_fn: (``use_reentrant=False`` only) returns two context managers, entered
            around the forward and around the recomputation.
        determinism_check: "default" checks that the recomputation gives outputs of the same
            shapes, dtypes and devices (`CheckpointError` otherwise); "none" does not.
        preserve_rng_state: replay the forward's random numbers in the recomputation.
        early_stop: accepted (a scheduling choice of PyTorch's; the values do not depend on it).

    Raises:
        ValueError: keyword arguments, `context_fn` or `debug` with ``use_reentrant=True``; an
            unknown `determinism_check`.
        NotImplementedError: ``debug=True`` (PyTorch's operator tracing of a mismatch).
    """
    if use_reentrant is None:
        warnings.warn(
            "coretorch.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly; use_reentrant=False is recommended (None means True, as in "
            "PyTorch)",
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError(
                "Passing context_fn or debug is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
            )
        anchor = None
        forward_ctx, recompute_ctx = contextlib.nullcontext(), contextlib.nullcontext()
    else:
        if debug:
            raise NotImplementedError("checkpoint(debug=True) is not supported by coretorch")
        if kwargs:
            function = functools.partial(function, **kwargs)
        forward_ctx, recompute_ctx = context_fn()
        anchor = _anchor()
    options = (preserve_rng_state, determinism_check == "default", recompute_ctx, forward_ctx)
    return _Checkpoint.apply(function, options, anchor, *args)


def _anchor() -> Tensor:
    from .. import empty

    return empty((0,), requires_grad=True)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs
):
    """Run `functions` (an ``nn.Sequential`` or a list of modules/functions) in `segments`
    chunks, checkpointing all but the last (whose results backward needs first anyway)."""
    if use_reentrant is None:
        warnings.warn(
            "coretorch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly; use_reentrant=False is "
            "recommended (None means True, as in PyTorch)",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
