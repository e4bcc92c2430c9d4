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
_TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}
_LEFT = ("Name", "Input Shapes", "Source Location")


def format_time(us: float, unit: str | None = None) -> str:
    """PyTorch's time format: 1.234s, 1.234ms or 1.234us (or always `unit`)."""
    if unit is None:
        unit = "s" if us >= 1e6 else "ms" if us >= 1e3 else "us"
    return f"{us / _TIME_UNITS[unit]:.3f}{unit}"


def format_memory(nbytes: int) -> str:
    """PyTorch's memory format: 1.50 GB, 2.00 MB, 3.00 KB or 24 B (negative for net frees)."""
    kb, mb, gb = 1024, 1024**2, 1024**3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def format_flops(flops: float) -> str:
    """A FLOP count in readable units: '12.35 MFLOP', '1.20 GFLOP'."""
    for unit, scale in (
        ("PFLOP", 1e15),
        ("TFLOP", 1e12),
        ("GFLOP", 1e9),
        ("MFLOP", 1e6),
        ("KFLOP", 1e3),
    ):
        if abs(flops) >= scale:
            return f"{flops / scale:.2f} {unit}"
    return f"{int(flops)} FLOP"


def flops_scale(events) -> tuple[float, str]:
    """(scale, unit) for the FLOPs column, chosen from the smallest non-zero count (PyTorch's
    rule), e.g. (1e-6, 'MFLOPs')."""
    raw = [e.flops for e in events if e.flops and e.flops > 0]
    if not raw:
        return 1.0, "FLOPs"
    k = int(max(0.0, min(math.log10(min(raw)) / 3, len(_FLOP_UNITS) - 1)))
    return 10.0 ** (-3 * k), _FLOP_UNITS[k]


def device_label(dev: str) -> str:
    """The column label for device type `dev` ('CUDA' for cuda, else capitalized)."""
    return _DEVICE_LABEL.get(dev, dev.capitalize())


def _memory_column(dev: str, own: bool) -> Callable[[Any], Any]:
    """The memory of a row on device type `dev`: its own (`own`) or with its children's."""
    if own:
        return lambda e: e.self_memory_usage(dev)
    return lambda e: e.memory_usage(dev)


def _columns(
    events, time_unit: str | None = None
) -> list[tuple[str, Callable[[Any], Any], Callable[[Any], str]]]:
    """(header, raw value getter, formatter) of each column the table shows."""
    total = events.self_cpu_time_total or 1e-12

    def pct(v):
        return f"{v:.2f}%"

    def tfmt(v):
        return format_time(v, time_unit)

    cols: list[tuple[str, Callable[[Any], Any], Callable[[Any], str]]] = [
        ("Name", lambda e: e.key, str),
        ("Self CPU %", lambda e: 100.0 * e.self_cpu_time_total / total, pct),
        ("Self CPU", lambda e: e.self_cpu_time_total, tfmt),
        ("CPU total %", lambda e: 100.0 * e.cpu_time_total / total, pct),
        ("CPU total", lambda e: e.cpu_time_total, tfmt),
        ("CPU time avg", lambda e: e.cpu_time, tfmt),
    ]
    if events.has_kernel_time:
        # the framework's own share: dispatch, autograd bookkeeping, argument handling
        cols.append(
            ("In kernels", lambda e: e.kernel_time_total, lambda v: "--" if v is None else tfmt(v))
        )
        cols.append(
            ("Overhead %", lambda e: _overhead_pct(e), lambda v: "--" if v is None else pct(v))
        )
    if events.has_device_time:
        dtotal = sum(e.self_device_time_total for e in events) or 1e-12
        cols += [
            ("Self CUDA", lambda e: e.self_device_time_total, tfmt),
            ("Self CUDA %", lambda e: 100.0 * e.self_device_time_total / dtotal, pct),
            ("CUDA total", lambda e: e.device_time_total, tfmt),
            ("CUDA time avg", lambda e: e.device_time_total / max(e.count, 1), tfmt),
        ]
    if events.profile_memory:
        for dev in ["cpu"] + [d for d in events.memory_devices if d != "cpu"]:
            label = device_label(dev)
            cols.append((f"{label} Mem", _memory_column(dev, own=False), format_memory))
            cols.append((f"Self {label} Mem", _memory_column(dev, own=True), format_memory))
    cols.append(("# of Calls", lambda e: e.count, str))
    if events.group_by_input_shape or (
        not events.group_by_stack_n and any(getattr(e, "_shapes", None) for e in events)
    ):
        cols.append(("Input Shapes", lambda e: str(e.input_shapes or []), str))
    if events.group_by_stack_n or any(getattr(e, "_stack", None) for e in events):
        cols.append(("Source Location", lambda e: list(e.stack), lambda v: "\n".join(v)))
    if events.with_flops:
        scale, unit = flops_scale(events)
        cols.append(
            (
                f"Total {unit}",
                lambda e: int(e.flops or 0),
                lambda v: f"{v * scale:,.3f}" if v > 0 else "--",
            )
        )
    return cols


def _overhead_pct(e) -> float | None:
    o = e.overhead_time_total
    if o is None or not e.cpu_time_total:
        return None
    return 100.0 * o / e.cpu_time_total


def _sorted(
    events, sort_by: str | None, row_limit: int | None, top_level_events_only: bool = False
) -> list:
    rows = list(events)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "top_level", getattr(e, "cpu_parent", 0) is None)]
    if sort_by is not None:
        if rows and not hasattr(rows[0], sort_by):
            raise AttributeError(
                f"table(): unknown sort_by {sort_by!r}: expected an attribute of the rows such as "
                f"'self_cpu_time_total', 'cpu_time_total', 'cpu_time', 'self_device_time_total', "
                f"'device_time_total', 'count', 'cpu_memory_usage', 'self_cpu_memory_usage', "
                f"'device_memory_usage', 'self_device_memory_usage' or 'flops'"
            )
        rows.sort(key=lambda e: getattr(e, sort_by) or 0, reverse=True)
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    return rows


def table_rows(events, sort_by: str | None = None, row_limit: int | None = 100) -> list[dict]:
    """The table as a list of {column header: raw value} dicts."""
    cols = _columns(events)
    return [{h: get(e) for h, get, _ in cols} for e in _sorted(events, sort_by, row_limit)]


def _clip(s: str, width: int) -> str:
    return s if len(s) <= width else s[: max(width - 3, 0)] + "..."


def render_table(
    events,
    sort_by: str | None = None,
    row_limit: int | None = 100,
    max_name_column_width: int = 55,
    header: str | None = None,
    *,
    max_src_column_width: int = 75,
    max_shapes_column_width: int = 80,
    top_level_events_only: bool = False,
    time_unit: str | None = None,
) -> str:
    """The table as text (rich, no colors), with PyTorch's footer lines."""
    if time_unit is not None and time_unit not in _TIME_UNITS:
        raise ValueError(
            f"table(): expected time_unit to be one of 's', 'ms', 'us', got {time_unit!r}"
        )
    cols = _columns(events, time_unit)
    widths = {
        "Name": max_name_column_width,
        "Input Shapes": max_shapes_column_width,
        "Source Location": max_src_column_width,
    }
    t = Table(box=box.SIMPLE_HEAD, title=header, show_edge=False, pad_edge=False)
    for h, _, _ in cols:
        t.add_column(h, justify="left" if h in _LEFT else "right", no_wrap=True, max_width=None)
    for e in _sorted(events, sort_by, row_limit, top_level_events_only):
        cells = []
        for h, get, fmt in cols:
            s = fmt(get(e))
            if h in widths:
                s = "\n".join(_clip(part, widths[h]) for part in s.split("\n"))
            cells.append(s)
        t.add_row(*cells)
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, highlight=False, soft_wrap=False).print(t)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    lines.append(f"Self CPU time total: {format_time(events.self_cpu_time_total, time_unit)}")
    if events.has_device_time:
        dev_total = sum(e.self_device_time_total for e in events)
        lines.append(f"Self CUDA time total: {format_time(dev_total, time_unit)}")
    return "\n".join(lines) + "\n"
