"""`coretorch.compile`: capture a step once, replay its kernels without Python dispatch.

    @coretorch.compile
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

The first call runs eagerly, the second records every backend kernel the step calls (forward,
backward, optimizer update), later calls replay that list when the guards hold. See
docs/compile.md for guards, graph breaks and what a replay does.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any, overload

from . import fusion_pass  # noqa: F401  (registers the elementwise fusion pass)
from .compiled import CompiledFunction, CompileWarning
from .explain import Explanation, explain
from .ir import Program, Step
from .passes import register_pass
from .recorder import GraphBreak

__all__ = [
    "CompileWarning",
    "CompiledFunction",
    "Explanation",
    "GraphBreak",
    "Program",
    "Step",
    "compile",
    "explain",
    "register_pass",
]


_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


@overload
def compile(
    fn: Callable,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    fuse: bool = True,
    cache_size_limit: int = 8,
) -> CompiledFunction: ...


@overload
def compile(
    fn: None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    fuse: bool = True,
    cache_size_limit: int = 8,
) -> Callable[[Callable], CompiledFunction]: ...


def compile(
    fn: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    fuse: bool = True,
    cache_size_limit: int = 8,
) -> Any:
    """Compile `fn` (a function, bound method or module): ``coretorch.compile(fn)``, or as a
    decorator, ``@coretorch.compile`` / ``@coretorch.compile(fullgraph=True)``.

    Args:
        fn: the step to compile; it should run the whole step (forward, ``loss.backward()``,
            ``optimizer.step()``) and return what the caller keeps (the loss).
        fullgraph: raise `GraphBreak` (naming the op and the line) at the first thing that
            cannot be captured, instead of running that step eagerly with a warning.
        dynamic: accepted for PyTorch code; every input shape is recorded as its own variant.
        backend: ``"inductor"`` (the default: replay, with fusion when `fuse`) or ``"eager"``
            (replay without fusion); other backends raise NotImplementedError.
        mode: one of PyTorch's modes, accepted for PyTorch code (a replay is always the
            reduce-overhead kind).
        options: PyTorch's backend options; none is supported (a non-empty dict raises).
        disable: return `fn` itself, uncompiled.
        fuse: let the fusion pass rewrite chains of elementwise kernels (when one is present).
        cache_size_limit: the most variants (input signatures) and re-records per variant
            kept before the function runs eagerly.

    Returns:
        A `CompiledFunction`, called as `fn` is (or `fn` itself with `disable`).
    """
    if mode not in _MODES:
        raise RuntimeError(
            f"Unrecognized mode={mode}, should be one of: {', '.join(str(m) for m in _MODES[1:])}"
        )
    if backend not in ("inductor", "eager"):
        raise NotImplementedError(
            f"coretorch.compile(): backend={backend!r} is not supported; "
            f"coretorch replays captured kernels ('inductor', 'eager')"
        )
    if options:
        raise NotImplementedError(
            f"coretorch.compile(): options are not supported (got {sorted(options)})"
        )

    def wrap(f: Callable) -> Any:
        if disable:
            return f
        return CompiledFunction(
            f,
            fullgraph=fullgraph,
            fuse=fuse and backend == "inductor",
            cache_size_limit=cache_size_limit,
        )

    if fn is None:
        return wrap
    return wrap(fn)


class _CallableModule(types.ModuleType):
    """``coretorch.compile`` is this package, and calling it calls `compile` (so both
    ``coretorch.compile(fn)`` and ``coretorch.compile.explain(fn, *args)`` work, and submodules
    import normally)."""

    def __call__(self, fn: Callable | None = None, **options: Any) -> Any:
        return compile(fn, **options)


sys.modules[__name__].__class__ = _CallableModule
