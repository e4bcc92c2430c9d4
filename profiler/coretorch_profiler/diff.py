"""Comparing two runs: per step, module and op, the change in time, calls, FLOPs and memory,
sorted by impact (``coretorch-profile diff a.json b.json``)."""

from __future__ import annotations

import io
import os
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from .averages import STEP_ROW
from .raw import EventKind
from .result import ProfileResult, load_trace
from .table import format_flops, format_memory, format_time

__all__ = ["diff", "ProfileDiff"]


def _result(x) -> ProfileResult:
    if isinstance(x, ProfileResult):
        return x
    if isinstance(x, (str, os.PathLike)):
        return load_trace(x)
    result = getattr(x, "result", None)  # a finished `profile`
    if isinstance(result, ProfileResult):
        return result
    raise TypeError(
        f"diff(): expected a trace path, a ProfileResult or a finished profile, got "
        f"{type(x).__name__}"
    )


_FIELDS = ("time", "calls", "flops", "memory", "overhead")
_ZERO = dict.fromkeys(_FIELDS, 0)


def _allocated(e) -> int:
    return sum(e.self_allocated.values()) if hasattr(e, "self_allocated") else 0


def _summaries(r: ProfileResult) -> tuple[dict[tuple[str, str], dict[str, float]], int, float]:
    """{(kind, name): {time, calls, flops, memory}} totals over the window; the number of
    steps; the window's time (µs: the steps' time when there are steps)."""
    events = r.events()
    rows: dict[tuple[str, str], dict[str, float]] = {}

    def add(
        kind: str,
        name: str,
        time: float,
        flops: int = 0,
        memory: int = 0,
        overhead: float | None = None,
    ) -> None:
        d = rows.setdefault((kind, name), dict(_ZERO))
        d["time"] += time
        d["calls"] += 1
        d["flops"] += flops
        d["memory"] += memory
        if overhead is not None:
            d["overhead"] += overhead

    steps = [e for e in events if e.kind is EventKind.STEP]
    for e in events:
        if e.kind is EventKind.STEP:
            add("step", STEP_ROW, e.cpu_time_total)
        elif e.kind in (EventKind.MODULE, EventKind.MODULE_BACKWARD):
            add("module", e.name, e.cpu_time_total)
        elif e.kind in (
            EventKind.FUNCTION,
            EventKind.BACKWARD_FUNCTION,
            EventKind.USER_SCOPE,
            EventKind.FALLBACK,
        ):
            own = e.kernel_ns  # the op's time outside its own kernels (dispatcher-bracketed)
            add(
                "op",
                e.name,
                e.self_cpu_time_total,
                e.flops or 0,
                _allocated(e),
                None if own < 0 else max(e.self_cpu_time_total - own / 1000.0, 0.0),
            )
    window = (
        sum(e.cpu_time_total for e in steps)
        if steps
        else sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    )
    return rows, len(steps), window


class ProfileDiff:
    """The comparison of run `b` against run `a`. Values are per step when both runs have
    steps (runs of different lengths compare), else totals over the window."""

    def __init__(self, a: ProfileResult, b: ProfileResult):
        ra, na, wa = _summaries(a)
        rb, nb, wb = _summaries(b)
        self.per_step = bool(na and nb)
        da, db = (na, nb) if self.per_step else (1, 1)
        self.time_a, self.time_b = wa / da, wb / db
        self.rows: list[dict[str, Any]] = []
        # framework overhead (time outside backend kernels): when either run bracketed kernels
        self.has_overhead = any(r["overhead"] for r in (*ra.values(), *rb.values()))
        for key in set(ra) | set(rb):
            x, y = ra.get(key, _ZERO), rb.get(key, _ZERO)
            row: dict[str, Any] = {"kind": key[0], "name": key[1]}
            for f in _FIELDS:
                row[f + "_a"], row[f + "_b"] = x[f] / da, y[f] / db
            row["time_delta"] = row["time_b"] - row["time_a"]
            row["time_pct"] = (
                100.0 * row["time_delta"] / row["time_a"]
                if row["time_a"]
                else float("inf")
                if row["time_delta"]
                else 0.0
            )
            self.rows.append(row)
        self.rows.sort(key=lambda r: (-abs(r["time_delta"]), r["kind"], r["name"]))

    @property
    def slower_by(self) -> float:
        """How much slower run b is than run a, as a fraction (negative: faster): per step
        when both runs have steps, else over the whole window."""
        return (self.time_b - self.time_a) / self.time_a if self.time_a else 0.0

    def table(self, row_limit: int = 30, kinds: tuple[str, ...] = ("step", "module", "op")) -> str:
        """The rows with the largest time change first, as a rich table (text)."""
        unit = "per step" if self.per_step else "total"
        t = Table(
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            title=f"b vs a ({unit}): {format_time(self.time_a)} -> "
            f"{format_time(self.time_b)} ({100 * self.slower_by:+.1f}%)",
        )
        heads = [
            "Kind",
            "Name",
            "Time a",
            "Time b",
            "Change",
            "Change %",
            "Calls a",
            "Calls b",
            "FLOPs a",
            "FLOPs b",
            "Alloc a",
            "Alloc b",
        ]
        if self.has_overhead:
            heads += ["Overhead a", "Overhead b"]
        for h in heads:
            t.add_column(h, justify="left" if h in ("Kind", "Name") else "right", no_wrap=True)
        shown = [r for r in self.rows if r["kind"] in kinds][:row_limit]
        for r in shown:
            pct = r["time_pct"]
            extra = (
                [format_time(r["overhead_a"]), format_time(r["overhead_b"])]
                if self.has_overhead
                else []
            )
            t.add_row(
                r["kind"],
                r["name"],
                format_time(r["time_a"]),
                format_time(r["time_b"]),
                ("+" if r["time_delta"] >= 0 else "-") + format_time(abs(r["time_delta"])),
                "new" if pct == float("inf") else f"{pct:+.1f}%",
                _num(r["calls_a"]),
                _num(r["calls_b"]),
                format_flops(r["flops_a"]) if r["flops_a"] else "--",
                format_flops(r["flops_b"]) if r["flops_b"] else "--",
                format_memory(int(r["memory_a"])) if r["memory_a"] else "--",
                format_memory(int(r["memory_b"])) if r["memory_b"] else "--",
                *extra,
            )
        buf = io.StringIO()
        Console(file=buf, width=100_000, color_system=None, highlight=False).print(t)
        return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines()) + "\n"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}"


def diff(a, b) -> ProfileDiff:
    """Compare run `b` with run `a`: each a trace path, a `ProfileResult` or a finished
    `profile`."""
    return ProfileDiff(_result(a), _result(b))
