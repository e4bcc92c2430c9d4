"""Memory of a profiling window: per-device statistics, each allocation's lifetime and category,
the timeline by category, and what is live at the peak."""

from __future__ import annotations

import bisect
import io
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from . import raw as R
from .events import EventList, FunctionEvent, device_type_of, memory_owners
from .memory_roles import CATEGORIES, categorize
from .raw import EventKind, RawProfile
from .table import format_memory

_DATALOADER = "enumerate(DataLoader)#"
_OPTIMIZER = "Optimizer.step#"
_ZERO_GRAD = "Optimizer.zero_grad#"


def memory_stats(raw: RawProfile) -> dict[str, dict[str, int]]:
    """Per device type: allocated_start, allocated_end, peak (bytes, as the allocator counts
    them), num_allocs, allocated_bytes, num_frees, freed_bytes during the window."""
    out: dict[str, dict[str, int]] = {}

    def entry(dev: str) -> dict[str, int]:
        if dev not in out:
            start = raw.start_allocated.get(dev, 0)
            out[dev] = {
                "allocated_start": start,
                "allocated_end": start,
                "peak": start,
                "num_allocs": 0,
                "allocated_bytes": 0,
                "num_frees": 0,
                "freed_bytes": 0,
            }
        return out[dev]

    for m in sorted(raw.memory, key=lambda m: m[R.M_TIME]):
        s = entry(device_type_of(m))
        nbytes, total = m[R.M_BYTES], m[R.M_TOTAL]
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


def _context(owner: FunctionEvent | None) -> tuple[str | None, FunctionEvent | None]:
    """Where an allocation happened: ("input" | "optimizer" | "backward" | "forward" | None,
    the region that decides its lifetime category)."""
    if owner is None:
        return None, None
    backward = None
    p: FunctionEvent | None = owner
    while p is not None:
        if p.name.startswith(_DATALOADER):
            return "input", p
        if p.name.startswith(_OPTIMIZER):
            return "optimizer", p
        if p.kind is EventKind.BACKWARD_FUNCTION:
            backward = p
        p = p.cpu_parent
    return ("backward", backward) if backward is not None else ("forward", owner)


def _in_backward(e: FunctionEvent | None) -> bool:
    while e is not None:
        if e.kind is EventKind.BACKWARD_FUNCTION:
            return True
        e = e.cpu_parent
    return False


def allocations(raw: RawProfile, events: EventList) -> list[dict[str, Any]]:
    """Every allocation of the window: time and free time (ns, None if alive at the end),
    address, bytes, device type, the region that made it (`owner`) and its `category`."""
    owners = memory_owners(events, raw)
    order = sorted(range(len(raw.memory)), key=lambda n: raw.memory[n][R.M_TIME])
    open_: dict[tuple[str, int], dict] = {}
    out: list[dict[str, Any]] = []
    for n in order:
        m = raw.memory[n]
        dev, addr, nbytes = device_type_of(m), m[R.M_ADDR], m[R.M_BYTES]
        if nbytes >= 0:
            a = {
                "index": n,
                "time": m[R.M_TIME],
                "free_time": None,
                "address": addr,
                "bytes": nbytes,
                "device": dev,
                "owner": owners[n],
                "free_owner": None,
            }
            if raw.memory_categories is not None:
                a["category"] = raw.memory_categories[n]
            open_[(dev, addr)] = a
            out.append(a)
        else:
            freed = open_.pop((dev, addr), None)
            if freed is not None:
                freed["free_time"], freed["free_owner"] = m[R.M_TIME], owners[n]
    if raw.memory_categories is None:
        _categorize(out, events, raw)
    return out


def _inside(e: FunctionEvent | None, prefix: str) -> bool:
    while e is not None:
        if e.name.startswith(prefix):
            return True
        e = e.cpu_parent
    return False


def _categorize(allocs: list[dict[str, Any]], events: EventList, raw: RawProfile) -> None:
    """Lifetime facts of each allocation, then its category (memory_roles.categorize)."""
    backward_starts: dict[int, list[int]] = {}
    for e in events:
        if e.kind is EventKind.BACKWARD_FUNCTION:
            backward_starts.setdefault(e.thread, []).append(e.start_ns)
    for a in allocs:
        ctx, region = _context(a["owner"])
        free = a["free_time"]
        a["context"] = ctx
        a["alive_at_end"] = free is None
        if ctx == "optimizer":
            assert region is not None  # a context names its region
            a["survives"] = free is None or free > region.end_ns
        else:
            # a gradient outlives the backward pass: alive at the end, or freed by zero_grad
            a["survives"] = free is None or _inside(a["free_owner"], _ZERO_GRAD)
        # an activation is still alive when the backward pass after it starts
        starts = backward_starts.get(region.thread, ()) if region is not None else ()
        i = bisect.bisect_right(starts, a["time"])
        a["alive_at_backward"] = i < len(starts) and (free is None or free > starts[i])
    categorize(allocs, raw.memory_roles)


def record_categories(raw: RawProfile, allocs: list[dict[str, Any]]) -> list[str]:
    """The category of each memory record of `raw` (a free takes its allocation's)."""
    cats = ["other"] * len(raw.memory)
    by_key: dict[tuple[str, int], list] = {}
    for a in allocs:
        cats[a["index"]] = a["category"]
        by_key.setdefault((a["device"], a["address"]), []).append(a)
    for n, m in enumerate(raw.memory):
        if m[R.M_BYTES] < 0:
            for a in by_key.get((device_type_of(m), m[R.M_ADDR]), ()):
                if a["free_time"] == m[R.M_TIME]:
                    cats[n] = a["category"]
    return cats


def timeline(raw: RawProfile, allocs: list[dict[str, Any]], device: str) -> dict[str, Any]:
    """The memory of `device` over the window by category: times (µs from the window's start),
    bytes per category at each time, and the peak."""
    base = dict(raw.baseline.get(device, {}))
    known = sum(base.values())
    base["other"] = base.get("other", 0) + max(raw.start_allocated.get(device, 0) - known, 0)
    cur = {c: base.get(c, 0) for c in CATEGORIES}
    changes = []
    for a in allocs:
        if a["device"] != device:
            continue
        changes.append((a["time"], a["category"], a["bytes"]))
        if a["free_time"] is not None:
            changes.append((a["free_time"], a["category"], -a["bytes"]))
    changes.sort(key=lambda c: c[0])
    times, rows = [0.0], [[cur[c] for c in CATEGORIES]]
    peak_t, peak = 0.0, sum(cur.values())
    for t, cat, nbytes in changes:
        cur[cat] += nbytes
        us = round((t - raw.t0) / 1000.0, 3)
        if times[-1] == us:
            rows[-1] = [cur[c] for c in CATEGORIES]
        else:
            times.append(us)
            rows.append([cur[c] for c in CATEGORIES])
        total = sum(cur.values())
        if total > peak:
            peak_t, peak = us, total
    return {
        "device": device,
        "categories": list(CATEGORIES),
        "times_us": times,
        "bytes": rows,
        "peak_time_us": peak_t,
        "peak_bytes": peak,
    }


def live_at(allocs: list[dict[str, Any]], device: str, t_ns: int) -> list[dict[str, Any]]:
    """The allocations of `device` alive at time `t_ns`."""
    return [
        a
        for a in allocs
        if a["device"] == device
        and a["time"] <= t_ns
        and (a["free_time"] is None or a["free_time"] > t_ns)
    ]


def allocation_site(a: dict[str, Any]) -> str:
    """Where an allocation was made: its op, the module path around it, and the user's line."""
    owner: FunctionEvent | None = a["owner"]
    if owner is None:
        return "(outside every region)"
    parts, mod, frame = [owner.name], None, None
    p: FunctionEvent | None = owner
    while p is not None:
        if mod is None and p.kind in (EventKind.MODULE, EventKind.MODULE_BACKWARD):
            mod = p.name
        if frame is None and p._stack:
            frame = p.stack[0]
        p = p.cpu_parent
    if mod:
        parts.append(f"in {mod}")
    if frame:
        parts.append(f"at {frame}")
    return " ".join(parts)


def memory_summary(raw: RawProfile, events: EventList) -> str:
    """A text report: the per-device statistics, the ops that allocated the most, and for each
    device what was live at its peak, by category and by allocation site."""
    if not raw.profile_memory:
        return "memory was not profiled: pass profile_memory=True to profile()\n"
    stats = memory_stats(raw)
    buf = io.StringIO()
    con = Console(file=buf, width=100_000, color_system=None, highlight=False)
    con.print("Memory by device:")
    t = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for h in ("Device", "At start", "At end", "Peak", "Allocations", "Allocated", "Frees", "Freed"):
        t.add_column(h, justify="left" if h == "Device" else "right", no_wrap=True)
    for dev, s in sorted(stats.items()):
        t.add_row(
            dev,
            format_memory(s["allocated_start"]),
            format_memory(s["allocated_end"]),
            format_memory(s["peak"]),
            str(s["num_allocs"]),
            format_memory(s["allocated_bytes"]),
            str(s["num_frees"]),
            format_memory(s["freed_bytes"]),
        )
    con.print(t)
    avgs = events.key_averages()
    for dev in sorted(stats):
        top = sorted(
            (a for a in avgs if a.self_memory_usage(dev) > 0),
            key=lambda a: a.self_memory_usage(dev),
            reverse=True,
        )[:10]
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
    allocs = allocations(raw, events)
    for dev in sorted(stats):
        _print_peak(con, raw, allocs, dev)
    return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines()) + "\n"


def _print_peak(con: Console, raw: RawProfile, allocs: list[dict[str, Any]], dev: str) -> None:
    tl = timeline(raw, allocs, dev)
    peak_i = max(range(len(tl["times_us"])), key=lambda i: sum(tl["bytes"][i]))
    at = dict(zip(tl["categories"], tl["bytes"][peak_i]))
    con.print(
        f"\nLive on {dev} at the peak ({format_memory(sum(at.values()))} at "
        f"{tl['times_us'][peak_i] / 1000:.3f} ms into the window), by category:"
    )
    ct = Table(box=box.SIMPLE_HEAD, show_edge=False)
    ct.add_column("Category", no_wrap=True)
    ct.add_column("Bytes", justify="right", no_wrap=True)
    for cat, nbytes in sorted(at.items(), key=lambda kv: -kv[1]):
        if nbytes:
            ct.add_row(cat, format_memory(nbytes))
    con.print(ct)
    t_ns = raw.t0 + int(tl["times_us"][peak_i] * 1000)
    sites: dict[tuple[str, str], list[int]] = {}
    for a in live_at(allocs, dev, t_ns):
        s = sites.setdefault((a["category"], allocation_site(a)), [0, 0])
        s[0] += a["bytes"]
        s[1] += 1
    if not sites:
        return
    con.print("Allocations made in the window and live at the peak, largest first:")
    st = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for h in ("Bytes", "Tensors", "Category", "Made by"):
        st.add_column(h, justify="right" if h in ("Bytes", "Tensors") else "left", no_wrap=True)
    for (cat, site), (nbytes, n) in sorted(sites.items(), key=lambda kv: -kv[1][0])[:10]:
        st.add_row(format_memory(nbytes), str(n), cat, site)
    con.print(st)
