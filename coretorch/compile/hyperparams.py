"""Live optimizer hyper-parameters: a replayed fused optimizer kernel reads lr (and Adam's betas,
SGD's momentum) from its parameter group at each replay, so an LR scheduler that changes them
every step does not force a re-record.

Only the fused optimizer ops (``_fused_sgd_``, ``_fused_adam_``, ...) take these values as plain
kernel arguments; the single-tensor and foreach paths fold them into other ops' scalars, where
they stay guarded (a change re-records). A value that turns zero or non-zero changes which
kernels the optimizer runs (SGD's momentum buffer), so the guard still checks that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops.declare import REGISTRY
from .ir import Program

__all__ = ["bind_live_hyperparameters"]

# kernel argument -> (group key, index into the group's value or None)
_SOURCES = {
    "lr": ("lr", None),
    "momentum": ("momentum", None),
    "beta1": ("betas", 0),
    "beta2": ("betas", 1),
}


def _group_of(optims: list, params: list) -> tuple[Any, int, dict] | None:
    for o in optims:
        for i, g in enumerate(o.param_groups):
            ps = g["params"]
            ids = {id(p) for p in ps}
            if params and all(id(p) in ids for p in params):
                return o, i, g
    return None


def _value(group: dict, key: str, sub: int | None):
    v: Any = group.get(key)
    return v if sub is None else v[sub]


def _live(fn: Callable, group: dict, slots: list[tuple[int, str, int | None]]) -> Callable:
    def live(*args):
        a = list(args)
        for i, key, sub in slots:
            a[i] = group[key] if sub is None else group[key][sub]
        return fn(*a)

    live.__name__ = getattr(fn, "__name__", "kernel")
    live.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return live


def bind_live_hyperparameters(program: Program, optims: list) -> dict[tuple[int, int], set]:
    """Make the fused optimizer steps of `program` read their hyper-parameters from their
    groups at replay. Returns ``{(id(optimizer), group index): {group keys now live}}``."""
    live: dict[tuple[int, int], set] = {}
    for step in program.steps:
        if step.out_first or not step.op.split("::")[-1].startswith("_fused_"):
            continue
        decl = REGISTRY.get(step.op.split("::")[-1])
        if decl is None:
            continue
        found = _group_of(optims, list(step.args[0]))
        if found is None:
            continue
        o, gi, group = found
        slots = []
        for i, name in enumerate(decl.schema.names):
            src = _SOURCES.get(name)
            if src is None or src[0] not in group:
                continue
            value = _value(group, *src)
            if isinstance(value, float) and type(step.args[i]) is float and step.args[i] == value:
                slots.append((i, *src))
        if not slots:
            continue
        step.fn = _live(step.fn, group, slots)
        keys = live.setdefault((id(o), gi), set())
        for _, key, sub in slots:
            keys.add(key)
        if "betas" in keys and sum(1 for _, k, _ in slots if k == "betas") < 2:
            keys.discard("betas")  # only one of the pair is read live: guard the pair
        program.notes.append(
            f"{step.op.split('::')[-1]}: reads "
            f"{', '.join(sorted({k for _, k, _ in slots}))} from "
            f"{type(o).__name__}.param_groups[{gi}] at each replay"
        )
    return live
