"""The module tree table: forward and backward time per module path, with self time."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table

from .averages import module_averages
from .events import BACKWARD_SUFFIX, EventList
from .raw import EventKind
from .table import format_flops, format_time

__all__ = ["module_table"]


def module_table(events: EventList, max_depth: int | None = None) -> str:
    """One line per module path, indented by depth (a path's parent is its prefix): forward
    total, backward total, self time (outside submodules, forward and backward), calls,
    FLOPs and the share of the window's time."""
    rows = {a.key: a for a in module_averages(events)}
    if not rows:
        return (
            "no module regions were recorded: pass with_modules=True to profile() (or "
            "--with-modules to coretorch-profile)\n"
        )
    # forward regions in start order list parents before children, siblings in call order
    first: dict[str, tuple[int, int]] = {}
    for e in events:
        if e.kind is EventKind.MODULE and e.module not in first:
            depth, p = 0, e.cpu_parent
            while p is not None:
                depth += p.kind is EventKind.MODULE
                p = p.cpu_parent
            first[e.module] = (len(first), depth)
    paths = sorted(
        (k for k in rows if not k.endswith(BACKWARD_SUFFIX)),
        key=lambda k: first.get(k, (len(first), 0)),
    )
    window = sum(e.cpu_time_total for e in events if e.cpu_parent is None) or 1e-12
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for h in ("Module", "Forward", "Backward", "Self", "Calls", "FLOPs", "% of window"):
        t.add_column(h, justify="left" if h == "Module" else "right", no_wrap=True)
    for path in paths:
        depth = first.get(path, (0, 0))[1]
        if max_depth is not None and depth > max_depth:
            continue
        fwd, bwd = rows.get(path), rows.get(path + BACKWARD_SUFFIX)
        total = (fwd.cpu_time_total if fwd else 0.0) + (bwd.cpu_time_total if bwd else 0.0)
        self_t = (fwd.self_cpu_time_total if fwd else 0.0) + (
            bwd.self_cpu_time_total if bwd else 0.0
        )
        flops = (fwd.flops if fwd else 0) + (bwd.flops if bwd else 0)
        t.add_row(
            "  " * depth + path.rsplit(".", 1)[-1] if depth else path,
            format_time(fwd.cpu_time_total) if fwd else "--",
            format_time(bwd.cpu_time_total) if bwd else "--",
            format_time(self_t),
            str(fwd.count if fwd else bwd.count if bwd else 0),
            format_flops(flops) if flops else "--",
            f"{100.0 * total / window:.1f}%",
        )
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, highlight=False).print(t)
    return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines()) + "\n"
