"""Memory statistics of a profiling window: per device start/end/peak and alloc/free totals."""
from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table

from . import collector as C
from .table import format_memory


def memory_stats(col: "C.Collector") -> dict[str, dict[str, int]]:
    """Per device type: allocated_start, allocated_end, peak (bytes, as the allocator counts
    them), num_allocs, allocated_bytes, num_frees, freed_bytes during the window."""
    out: dict[str, dict[str, int]] = {}

    def entry(dev: str) -> dict[str, int]:
        if dev not in out:
            start = col.start_allocated.get(dev, 0)
            out[dev] = {"allocated_start": start, "allocated_end": start, "peak": start,
                        "num_allocs": 0, "allocated_bytes": 0, "num_frees": 0, "freed_bytes": 0}
        return out[dev]

    for m in sorted(col.memory, key=lambda m: m[C.M_TIME]):
        s = entry(C.device_of(m).type)
        nbytes, total = m[C.M_BYTES], m[C.M_TOTAL]
        if nbytes >= 0:
            s["num_allocs"] += 1
            s["allocated_bytes"] += nbytes
        else:
            s["num_frees"] += 1
            s["freed_bytes"] -= nbytes
        s["allocated_end"] = total
        if total > s["peak"]:
            s["peak"] = total
    return out


def memory_summary(col: "C.Collector", events) -> str:
    """A text report: the per-device statistics, then the ops that allocated the most."""
    if not col.profile_memory:
        return "memory was not profiled: pass profile_memory=True to profile()\n"
    stats = memory_stats(col)
    buf = io.StringIO()
    con = Console(file=buf, width=100_000, color_system=None, highlight=False)
    con.print("Memory by device:")
    t = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for h in ("Device", "At start", "At end", "Peak", "Allocations", "Allocated", "Frees",
              "Freed"):
        t.add_column(h, justify="left" if h == "Device" else "right", no_wrap=True)
    for dev, s in sorted(stats.items()):
        t.add_row(dev, format_memory(s["allocated_start"]), format_memory(s["allocated_end"]),
                  format_memory(s["peak"]), str(s["num_allocs"]),
                  format_memory(s["allocated_bytes"]), str(s["num_frees"]),
                  format_memory(s["freed_bytes"]))
    con.print(t)
    avgs = events.key_averages()
    for dev in sorted(stats):
        top = sorted((a for a in avgs if a.self_memory_usage(dev) > 0),
                     key=lambda a: a.self_memory_usage(dev), reverse=True)[:10]
        if not top:
            continue
        con.print(f"\nOps allocating the most on {dev} (self, net bytes):")
        ot = Table(box=box.SIMPLE_HEAD, show_edge=False)
        ot.add_column("Name", no_wrap=True)
        ot.add_column("Self Mem", justify="right", no_wrap=True)
        ot.add_column("# of Calls", justify="right", no_wrap=True)
        for a in top:
            ot.add_row(a.key, format_memory(a.self_memory_usage(dev)), str(a.count))
        con.print(ot)
    return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines()) + "\n"
