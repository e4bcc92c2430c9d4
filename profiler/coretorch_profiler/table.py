"""The op table: PyTorch's columns and number formats, rendered with rich or as plain rows."""
from __future__ import annotations

import io
import math
from typing import Any, Callable

from rich import box
from rich.console import Console
from rich.table import Table

_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
_DEVICE_LABEL = {"cpu": "CPU", "cuda": "CUDA"}


def format_time(us: float) -> str:
    """PyTorch's time format: 1.234s, 1.234ms or 1.234us."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """PyTorch's memory format: 1.50 GB, 2.00 MB, 3.00 KB or 24 B (negative for net frees)."""
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def flops_scale(events) -> tuple[float, str]:
    """(scale, unit) for the FLOPs column, chosen from the smallest non-zero count (PyTorch's
    rule), e.g. (1e-6, 'MFLOPs')."""
    raw = [e.flops for e in events if e.flops and e.flops > 0]
    if not raw:
        return 1.0, "FLOPs"
    k = int(max(0.0, min(math.log10(min(raw)) / 3, len(_FLOP_UNITS) - 1)))
    return 10.0 ** (-3 * k), _FLOP_UNITS[k]


def _device_label(dev: str) -> str:
    return _DEVICE_LABEL.get(dev, dev.capitalize())


def _columns(events) -> list[tuple[str, Callable[[Any], Any], Callable[[Any], str]]]:
    """(header, raw value getter, formatter) of each column the table shows."""
    total = events.self_cpu_time_total or 1e-12
    pct = (lambda v: f"{v:.2f}%")
    cols = [
        ("Name", lambda e: e.key, str),
        ("Self CPU %", lambda e: 100.0 * e.self_cpu_time_total / total, pct),
        ("Self CPU", lambda e: e.self_cpu_time_total, format_time),
        ("CPU total %", lambda e: 100.0 * e.cpu_time_total / total, pct),
        ("CPU total", lambda e: e.cpu_time_total, format_time),
        ("CPU time avg", lambda e: e.cpu_time, format_time),
    ]
    if events.profile_memory:
        for dev in ["cpu"] + [d for d in events.memory_devices if d != "cpu"]:
            label = _device_label(dev)
            cols.append((f"{label} Mem", lambda e, d=dev: e.memory_usage(d), format_memory))
            cols.append((f"Self {label} Mem", lambda e, d=dev: e.self_memory_usage(d),
                         format_memory))
    cols.append(("# of Calls", lambda e: e.count, str))
    if events.group_by_input_shape or (
            not events.group_by_stack_n and any(getattr(e, "_shapes", None) for e in events)):
        cols.append(("Input Shapes", lambda e: str(e.input_shapes or []), str))
    if events.group_by_stack_n or any(getattr(e, "_stack", None) for e in events):
        cols.append(("Source Location", lambda e: list(e.stack), lambda v: "\n".join(v)))
    if events.with_flops:
        scale, unit = flops_scale(events)
        cols.append((f"Total {unit}", lambda e: int(e.flops or 0),
                     lambda v, s=scale: f"{v * s:,.3f}" if v > 0 else "--"))
    return cols


def _sorted(events, sort_by: str | None, row_limit: int | None) -> list:
    rows = list(events)
    if sort_by is not None:
        if rows and not hasattr(rows[0], sort_by):
            raise AttributeError(
                f"table(): unknown sort_by {sort_by!r}: expected an attribute of the rows such as "
                f"'self_cpu_time_total', 'cpu_time_total', 'cpu_time', 'count', "
                f"'cpu_memory_usage', 'self_cpu_memory_usage' or 'flops'")
        rows.sort(key=lambda e: getattr(e, sort_by) or 0, reverse=True)
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    return rows


def table_rows(events, sort_by: str | None = None, row_limit: int | None = 100) -> list[dict]:
    """The table as a list of {column header: raw value} dicts."""
    cols = _columns(events)
    return [{h: get(e) for h, get, _ in cols} for e in _sorted(events, sort_by, row_limit)]


def render_table(events, sort_by: str | None = None, row_limit: int | None = 100,
                 max_name_column_width: int = 55, header: str | None = None) -> str:
    """The table as text (rich, no colors), with PyTorch's footer line."""
    cols = _columns(events)
    t = Table(box=box.SIMPLE_HEAD, title=header, show_edge=False, pad_edge=False)
    for i, (h, _, _) in enumerate(cols):
        t.add_column(h, justify="left" if h in ("Name", "Input Shapes", "Source Location")
                     else "right", no_wrap=True, max_width=None)
    for e in _sorted(events, sort_by, row_limit):
        cells = []
        for h, get, fmt in cols:
            s = fmt(get(e))
            if h == "Name" and len(s) > max_name_column_width:
                s = s[:max_name_column_width - 3] + "..."
            cells.append(s)
        t.add_row(*cells)
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, highlight=False,
            soft_wrap=False).print(t)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    lines.append(f"Self CPU time total: {format_time(events.self_cpu_time_total)}")
    return "\n".join(lines) + "\n"
