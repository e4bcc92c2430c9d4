"""Folded stacks for flame graphs (flamegraph.pl, speedscope, inferno): one line per distinct
stack, frames from the outermost region (user Python functions, steps, modules) down to the op,
then the stack's metric in whole microseconds."""

from __future__ import annotations

import os

from .averages import row_key
from .events import EventList
from .export import atomic_write

__all__ = ["folded_stacks", "write_stacks", "METRICS"]

METRICS = ("self_cpu_time_total", "self_device_time_total", "self_cuda_time_total")


def _frame(name: str) -> str:
    # ';' separates frames and the last ' ' separates the value: keep both out of names
    return row_key(name).replace(";", ":").replace("\n", " ")


def folded_stacks(events: EventList, metric: str = "self_cpu_time_total") -> dict[str, float]:
    """{'a;b;op': µs} summed over the events with that stack."""
    if metric not in METRICS:
        raise ValueError(
            f"export_stacks(): expected metric to be one of {', '.join(METRICS)}, got {metric!r}"
        )
    out: dict[str, float] = {}
    paths: dict[int, str] = {}
    for e in events:  # in start order: a parent's path is known before its children's
        p = e.cpu_parent
        path = _frame(e.name) if p is None else f"{paths[id(p)]};{_frame(e.name)}"
        paths[id(e)] = path
        v = getattr(e, metric)
        if v > 0:
            out[path] = out.get(path, 0.0) + v
    return out


def write_stacks(
    path: str | os.PathLike, events: EventList, metric: str = "self_cpu_time_total"
) -> str:
    """Write the folded stacks of `events` to `path`. Returns `path`."""
    lines = [
        f"{stack} {int(round(v))}"
        for stack, v in sorted(folded_stacks(events, metric).items())
        if round(v) > 0
    ]
    return atomic_write(path, ("\n".join(lines) + "\n").encode())
