"""`CompiledFunction`: the object `coretorch.compile(fn)` returns.

Per input signature (`guards.signature`) it keeps a **variant**: the first call runs eagerly (it
creates optimizer state and gradients, as TinyJit's first call does), the second records the step
(`recorder.Capture`), later calls whose state guard holds replay it (`replay.Replayer`). A failed
state guard re-records; a new signature records a new variant; past `cache_size_limit` variants
or re-records the function runs eagerly. Each of these says why in a `CompileWarning`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import record_function as _rf
from ..autograd.grad_mode import no_grad
from ..frames import user_stacklevel
from ..tensor.tensor import Tensor
from .guards import StateGuard, describe_mismatch, discover, flatten, rebuild, signature
from .hyperparams import bind_live_hyperparameters
from .ir import Program
from .memory_plan import plan_memory
from .passes import run_passes
from .recorder import Capture
from .replay import Replayer, fresh_copy

__all__ = ["CompileWarning", "CompiledFunction"]


class CompileWarning(UserWarning):
    """A compiled function re-records, or runs eagerly, and says why."""


def _warn(msg: str) -> None:
    warnings.warn(f"coretorch.compile: {msg}", CompileWarning, stacklevel=user_stacklevel())


class _Variant:
    """The captured state of one input signature."""

    __slots__ = (
        "calls",
        "eager_reason",
        "guard",
        "key",
        "last_capture",
        "out_kinds",
        "records",
        "replayer",
        "template",
        "value_guards",
        "value_warned",
    )

    def __init__(self, key: tuple):
        self.key = key
        self.calls = 0
        self.replayer: Replayer | None = None
        self.guard: StateGuard | None = None
        self.template: Any = None
        self.out_kinds: list = []  # per output leaf: ("copy", t) | ("same", obj) | ("input", i)
        self.eager_reason: str | None = None
        self.value_guards: list = []  # data-dependent choices checked on the inputs (recorder)
        self.value_warned = False
        self.records = 0
        self.last_capture: Capture | None = None


class CompiledFunction:
    """`fn` compiled: call it as `fn` (see the module docstring)."""

    def __init__(
        self,
        fn: Callable,
        *,
        fullgraph: bool = False,
        fuse: bool = True,
        cache_size_limit: int = 8,
        warmup: int = 1,
    ):
        self.fn = fn
        self.fullgraph, self.fuse = fullgraph, fuse
        self.cache_size_limit, self.warmup = cache_size_limit, warmup
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.variants: dict[tuple, _Variant] = {}
        self._last_key: tuple | None = None
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):  # used as a method decorator
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        st = _rf.state
        if st.force_eager or st.capture is not None:  # anomaly mode; nested inside a capture
            return self.fn(*args, **kwargs)
        key = signature(args, kwargs)
        v = self.variants.get(key)
        if v is None:
            v = self._new_variant(key)
        if v.replayer is not None:
            assert v.guard is not None  # set together with the replayer
            why = v.guard.check()
            if why is None:
                return self._replay(v, args, kwargs)
            if not self._may_record(v, f"re-recording {self.name}: {why}"):
                return self.fn(*args, **kwargs)
            return self._capture(v, args, kwargs)
        if v.eager_reason is not None:
            return self.fn(*args, **kwargs)
        v.calls += 1
        if v.calls <= self.warmup:
            return self.fn(*args, **kwargs)
        return self._capture(v, args, kwargs)

    # ---- variants ----------------------------------------------------------------------------
    def _new_variant(self, key: tuple) -> _Variant:
        v = _Variant(key)
        if self._last_key is not None:
            why = describe_mismatch(self._last_key, key)
            if len(self.variants) >= self.cache_size_limit:
                v.eager_reason = (
                    f"{self.cache_size_limit} variants recorded "
                    f"(cache_size_limit); the last failed guard: {why}"
                )
                _warn(f"{self.name} runs eagerly for new inputs: {v.eager_reason}")
            else:
                _warn(f"recording a new variant of {self.name}: {why}")
        self._last_key = key
        self.variants[key] = v
        return v

    def _may_record(self, v: _Variant, why: str) -> bool:
        if v.records >= self.cache_size_limit:
            v.replayer = None
            v.eager_reason = f"{why} ({v.records} records reached cache_size_limit)"
            _warn(f"{self.name} now runs eagerly: {v.eager_reason}")
            return False
        _warn(why)
        return True

    # ---- capture -----------------------------------------------------------------------------
    def _capture(self, v: _Variant, args: tuple, kwargs: dict):
        v.records += 1
        v.replayer = None
        user: list[Tensor] = []
        template = flatten((args, kwargs), user)
        reason = _input_problem(user)
        if reason is not None:
            return self._give_up(v, reason, args, kwargs)
        with no_grad():
            slots = [t.clone() for t in user]
        call_args, call_kwargs = rebuild(template, slots)
        modules, optims, leaves = discover(self.fn, args, kwargs)
        guard = StateGuard(modules, optims, leaves)
        cap = Capture(self.fullgraph)
        cap.inputs = {id(s._storage): (i, s) for i, s in enumerate(slots)}
        v.last_capture = cap
        cap.start()
        try:
            result = self.fn(*call_args, **call_kwargs)
        finally:
            cap.stop()
        allocated = cap.allocated_ids()
        slot_ids = {id(s._storage) for s in slots}
        if not cap.breaks:
            cap.check_sources(allocated, slot_ids)
        outs: list = []
        out_template = flatten(result, outs)
        if not cap.breaks and not cap.ran_backward:
            for t in outs:
                if t.requires_grad and t.grad_fn is not None:
                    cap.graph_break(
                        "the result",
                        "it requires grad (its autograd graph would "
                        "escape the step: call backward inside the compiled function)",
                    )
                    break
        self._write_back(slots, user)
        if cap.breaks:
            what, why, site = cap.breaks[0]
            v.eager_reason = f"graph break in {what}: {why} (at {site})"
            _warn(f"{self.name} runs eagerly: {v.eager_reason}")
            return result
        program = _program(cap, slots, outs, allocated, slot_ids)
        cap.release_steps()
        program = run_passes(program, {"fuse": self.fuse})
        program = plan_memory(program, allocated)
        guard.live = bind_live_hyperparameters(program, optims)
        guard.watch_grads({id(t._storage) for s in program.steps for t in (*s.reads, *s.written)})
        writebacks = [i for i, s in enumerate(slots) if s._vc[0] != 0]
        v.replayer = Replayer(program, self.name, writebacks)
        v.guard, v.template, v.value_guards = guard, out_template, cap.value_guards
        v.out_kinds = _out_kinds(outs, slots, allocated)
        return rebuild(out_template, [_materialize(k, user) for k in v.out_kinds])

    def _give_up(self, v: _Variant, reason: str, args: tuple, kwargs: dict):
        v.eager_reason = reason
        _warn(f"{self.name} runs eagerly: {reason}")
        return self.fn(*args, **kwargs)

    @staticmethod
    def _write_back(slots: list[Tensor], user: list[Tensor]) -> None:
        """Inputs the step wrote in place get the new values (the step ran on copies)."""
        with no_grad():
            for s, u in zip(slots, user):
                if s._vc[0] != 0:
                    u.copy_(s)

    # ---- replay ------------------------------------------------------------------------------
    def _replay(self, v: _Variant, args: tuple, kwargs: dict):
        user: list[Tensor] = []
        flatten((args, kwargs), user)
        for i, predicate, value, what, read in v.value_guards:
            if predicate(read(user[i])) != value:  # this call takes the other branch: eager
                if not v.value_warned:
                    v.value_warned = True
                    _warn(
                        f"{self.name} ran eagerly for a call where {what} (argument {i}) is "
                        f"{predicate(read(user[i]))!r}, recorded with {value!r}"
                    )
                return self.fn(*args, **kwargs)
        assert v.replayer is not None and v.guard is not None  # only a recorded variant replays
        v.replayer.run(user)
        v.guard.restore()
        return rebuild(v.template, [_materialize(k, user) for k in v.out_kinds])


def _input_problem(user: list[Tensor]) -> str | None:
    seen: set[int] = set()
    for i, t in enumerate(user):
        if t.requires_grad:
            return (
                f"tensor argument {i} requires grad (only parameters reached through "
                f"modules and optimizers may)"
            )
        sid = id(t._storage)
        if sid in seen:
            return f"tensor argument {i} shares memory with another argument"
        seen.add(sid)
    return None


def _program(
    cap: Capture, slots: list[Tensor], outs: list[Tensor], allocated: set[int], slot_ids: set[int]
) -> Program:
    externals: dict[int, Tensor] = {}
    for s in cap.steps:
        for t in (*s.reads, *s.written):
            sid = id(t._storage)
            if sid not in allocated and sid not in slot_ids:
                externals.setdefault(id(t), t)
    ext_vcs = {id(t._vc) for t in externals.values()}
    bumps = [
        (vc, vc[0] - v0) for k, (vc, v0) in cap.versions.items() if k in ext_vcs and vc[0] != v0
    ]
    return Program(cap.steps, slots, outs, list(externals.values()), bumps)


def _out_kinds(outs: list[Tensor], slots: list[Tensor], allocated: set[int]) -> list:
    kinds: list[tuple[str, Any]] = []
    for t in outs:
        sid = id(t._storage)
        hit = next((i for i, s in enumerate(slots) if s is t), None)
        if hit is not None:
            kinds.append(("input", hit))
        elif sid in allocated:
            kinds.append(("copy", t))
        else:
            kinds.append(("same", t))
    return kinds


def _materialize(kind: tuple, user: list[Tensor]) -> Tensor:
    how, x = kind
    if how == "copy":
        return fresh_copy(x)
    if how == "input":
        return user[x]
    return x
