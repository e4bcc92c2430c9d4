"""`coretorch.compile.explain(fn, *args)`: what a capture of `fn` records, guards and breaks on.

Like ``torch._dynamo.explain``, it runs `fn` once (with its side effects: an optimizer step is
taken) while recording, and reports the kernels captured (with the user's line of each), the
guards a replay checks and the graph breaks, with their reason and the user's line.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .compiled import CompiledFunction, CompileWarning, _Variant

__all__ = ["Explanation", "explain"]


class Explanation:
    """The report of `explain`: `kernels`, `guards`, `breaks` (lists of lines), `notes` (what
    program passes did); ``str()`` is the printed report."""

    def __init__(
        self, name: str, kernels: list[str], guards: list[str], breaks: list[str], notes: list[str]
    ):
        self.name, self.kernels, self.guards = name, kernels, guards
        self.breaks, self.notes = breaks, notes

    @property
    def graph_break_count(self) -> int:
        """How many graph breaks the call had (``torch._dynamo.explain``'s name)."""
        return len(self.breaks)

    def __str__(self) -> str:
        head = (
            f"coretorch.compile.explain({self.name}): {len(self.kernels)} kernels captured, "
            f"{len(self.breaks)} graph breaks"
        )
        lines = [head]
        if self.breaks:
            lines.append("graph breaks:")
            lines += [f"  {b}" for b in self.breaks]
        lines.append("captured kernels:")
        lines += [f"  {k}" for k in self.kernels]
        if self.notes:
            lines.append("passes:")
            lines += [f"  {n}" for n in self.notes]
        lines.append("guards:")
        lines += [f"  {g}" for g in self.guards]
        return "\n".join(lines)

    __repr__ = __str__


def _guard_lines(v: _Variant) -> list[str]:
    lines = []
    for i, a in enumerate(v.key[:-1]):
        if a[0] == "tensor":
            _, shape, stride, dtype, device, rg = a
            lines.append(
                f"argument {i}: tensor shape={list(shape)} strides={list(stride)} "
                f"dtype={dtype.name} device={device} requires_grad={rg}"
            )
        else:
            lines.append(f"argument {i}: {a[-1]!r}")
    lines.append(f"grad mode {'enabled' if v.key[-1] else 'disabled'}")
    for i, _, value, what, _ in v.value_guards:
        lines.append(
            f"argument {i}: {what}: {value!r} (checked on each call; another value "
            f"runs that call eagerly)"
        )
    g = v.guard
    if g is not None:
        for _, _, t, _, where in g.slots:
            if t is not None:
                lines.append(f"{where}: same tensor and storage")
        for p, e in zip(g.params, g.grads_entry):
            lines.append(f"grad of {g.name(p)}: {'None' if e is None else 'set'}")
        for p, e in g.grads_read:
            lines.append(f"grad of {g.name(p)}: same tensor (the step accumulates into it)")
        for o, groups, _, states in g.optims:
            for i, items in enumerate(groups):
                live = g.live.get((id(o), i), set())
                hp = ", ".join(f"{k}={v!r}" for k, v in items if k not in live)
                lines.append(f"{type(o).__name__}.param_groups[{i}]: {hp}")
                if live:
                    lines.append(
                        f"{type(o).__name__}.param_groups[{i}]: "
                        f"{', '.join(sorted(live))} read at each replay (only a change "
                        f"to or from zero re-records)"
                    )
            lines.append(f"{type(o).__name__}.state: the same {len(states)} state entries")
    return lines


def explain(fn: Callable, *args: Any, **kwargs: Any) -> Explanation:
    """Record one call of `fn(*args, **kwargs)` (it runs) and print and return the report."""
    cf = fn if isinstance(fn, CompiledFunction) else CompiledFunction(fn)
    probe = CompiledFunction(cf.fn, fullgraph=False, fuse=cf.fuse, warmup=0)
    with warnings.catch_warnings():  # the report says it all
        warnings.simplefilter("ignore", CompileWarning)
        probe(*args, **kwargs)
    v = next(iter(probe.variants.values()))
    cap = v.last_capture
    kernels = [f"{op.split('::')[-1]:<24s} {site}" for op, site in cap.listing()] if cap else []
    breaks = [f"{what}: {why}  (at {site})" for what, why, site in (cap.breaks if cap else [])]
    if v.eager_reason and not breaks:
        breaks.append(v.eager_reason)
    notes = list(v.replayer.program.notes) if v.replayer is not None else []
    report = Explanation(probe.name, kernels, _guard_lines(v), breaks, notes)
    print(report)
    return report
