"""The HTML report: one self-contained page (plotly.js inlined, no network needed to view it)
with the steps, an icicle of regions and ops, the memory curve by category with its peak, the
top ops with FLOPs and achieved GFLOP/s, the module tree, anomaly findings and hints.

Plotly draws the charts: it writes offline HTML with its JavaScript inlined, has the icicle,
stacked-area and bar charts this page needs built in, and is well kept (regular releases,
broad use).
"""

from __future__ import annotations

import html
import os
from typing import Any

from .events import EventList
from .export import atomic_write
from .raw import EventKind
from .stacks import folded_stacks
from .table import format_flops, format_memory, format_time

__all__ = ["write_report", "report_html", "memory_timeline_page", "step_phases"]

_COLORS = {
    "parameter": "#2e7d32",
    "optimizer state": "#c49a00",
    "input": "#37474f",
    "activation": "#d32f2f",
    "gradient": "#1565c0",
    "temporary": "#8e6fc1",
    "other": "#9e9e9e",
}
_PHASES = (
    ("data", "#607d8b"),
    ("forward", "#43a047"),
    ("backward", "#1e88e5"),
    ("optimizer", "#fb8c00"),
    ("other ops", "#8e24aa"),
    ("python", "#bdbdbd"),
)
_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;
background:#fafafa}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px}.sub{color:#666;font-size:13px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:14px 0}.card{background:#fff;
border:1px solid #e0e0e0;border-radius:6px;padding:10px 14px;min-width:130px}
.card b{display:block;font-size:18px}.card span{color:#666;font-size:12px}
table{border-collapse:collapse;background:#fff;font-size:13px}td,th{border:1px solid #e0e0e0;
padding:4px 8px;text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{
text-align:left}.hint{background:#fff8e1;border-left:4px solid #ffb300;padding:8px 12px;
margin:8px 0}.bad{background:#ffebee;border-left:4px solid #e53935;padding:8px 12px;
margin:8px 0;white-space:pre-wrap;font-family:monospace;font-size:12px}.note{color:#555;
font-size:12px;max-width:900px}.chart{background:#fff;border:1px solid #e0e0e0;
border-radius:6px;margin:6px 0}
"""


def _fig_html(fig, height: int) -> str:
    fig.update_layout(
        height=height,
        margin=dict(l=60, r=20, t=30, b=40),
        paper_bgcolor="#fff",
        plot_bgcolor="#fff",
    )
    return (
        '<div class="chart">'
        + fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})
        + "</div>"
    )


def _page(title: str, body: str) -> str:
    from plotly.offline import get_plotlyjs

    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>{body}</body></html>"
    )


# ---- steps ----


def _phase(e) -> str:
    """Which part of a step an op or region belongs to."""
    p = e
    while p is not None:
        if p.name.startswith("enumerate(DataLoader)#"):
            return "data"
        if p.name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
            return "optimizer"
        if p.kind in (EventKind.BACKWARD_FUNCTION, EventKind.MODULE_BACKWARD):
            return "backward"
        if p.kind is EventKind.MODULE:
            return "forward"
        p = p.cpu_parent
    return "other ops"


def step_phases(events: EventList) -> list[dict[str, Any]]:
    """Per step: the µs spent in data loading, forward, backward, the optimizer, other ops and
    Python between ops (self time of steps and Python functions)."""
    rows = []
    for s in events:
        if s.kind is not EventKind.STEP:
            continue
        d = {name: 0.0 for name, _ in _PHASES}
        todo = [s]
        while todo:
            e = todo.pop()
            if e.kind in (EventKind.STEP, EventKind.PYTHON):
                d["python"] += e.self_cpu_time_total
                todo.extend(e.cpu_children)
            elif e.kind in (EventKind.FUNCTION, EventKind.BACKWARD_FUNCTION, EventKind.FALLBACK):
                d[_phase(e)] += e.cpu_time_total  # an op with everything it ran
            else:  # modules, user regions: their own time is Python between their ops
                d[_phase(e)] += e.self_cpu_time_total
                todo.extend(e.cpu_children)
        rows.append({"step": s.name, **d})
    return rows


_MAX_STEP_ROWS = 100


def _steps_chart(events: EventList) -> str:
    import plotly.graph_objects as go

    rows = step_phases(events)
    if not rows:
        return (
            "<p class='note'>No ProfilerStep was recorded (steps end at each optimizer "
            "step and at prof.step()).</p>"
        )
    note = ""
    if len(rows) > _MAX_STEP_ROWS:
        note = f"<p class='note'>The first {_MAX_STEP_ROWS} of {len(rows)} steps.</p>"
        rows = rows[:_MAX_STEP_ROWS]
    fig = go.Figure()
    names = [r["step"] for r in rows]
    for phase, color in _PHASES:
        fig.add_trace(
            go.Bar(
                y=names,
                x=[r[phase] / 1000 for r in rows],
                name=phase,
                orientation="h",
                marker_color=color,
                hovertemplate="%{y}: %{x:.3f} ms " + phase + "<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="stack",
        xaxis_title="ms",
        yaxis=dict(autorange="reversed"),
        legend=dict(orientation="h", y=1.08),
    )
    return note + _fig_html(fig, 120 + 22 * len(rows))


# ---- icicle ----


def _node_color(name: str) -> str:
    if name.startswith("ProfilerStep"):
        return "#cfd8dc"
    if name.startswith("nn.Module: "):
        return "#1e88e5" if name.endswith(" (backward)") else "#43a047"
    if name.startswith(("Optimizer.", "enumerate(DataLoader)")):
        return "#fb8c00"
    if name.startswith("aten::"):
        return "#ab47bc"
    if "Backward" in name or name == "AccumulateGrad":
        return "#64b5f6"
    return "#e0e0e0"  # user Python functions and annotations


def _icicle(events: EventList, max_nodes: int = 4000) -> str:
    import plotly.graph_objects as go

    stacks = folded_stacks(events, "self_cpu_time_total")
    values: dict[str, float] = {}
    for path, v in stacks.items():
        parts = path.split(";")
        for i in range(1, len(parts) + 1):
            values.setdefault(";".join(parts[:i]), 0.0)
        values[path] += v
    total: dict[str, float] = dict(values)
    for path in sorted(values, key=lambda p: -p.count(";")):
        parent = path.rpartition(";")[0]
        if parent:
            total[parent] += total[path]
    keep = sorted(total, key=lambda p: -total[p])[:max_nodes]
    keep_set = set(keep)
    keep = [p for p in keep if not p.rpartition(";")[0] or p.rpartition(";")[0] in keep_set]
    ids = keep
    fig = go.Figure(
        go.Icicle(
            ids=ids,
            labels=[p.rpartition(";")[2] for p in ids],
            parents=[p.rpartition(";")[0] for p in ids],
            values=[total[p] / 1000 for p in ids],
            branchvalues="total",
            hovertemplate="%{label}<br>%{value:.3f} ms<extra></extra>",
            marker=dict(colors=[_node_color(p.rpartition(";")[2]) for p in ids]),
            tiling=dict(orientation="v"),
            maxdepth=6,
        )
    )
    return _fig_html(fig, 520)


# ---- memory ----


def _memory_figure(tl: dict[str, Any]):
    import numpy as np
    import plotly.graph_objects as go

    fig = go.Figure()
    # numpy arrays: plotly checks them whole instead of value by value
    x = np.asarray(tl["times_us"], dtype=np.float64) / 1000
    mb = np.asarray(tl["bytes"], dtype=np.float64).reshape(len(x), -1) / 2**20
    for i, cat in enumerate(tl["categories"]):
        y = mb[:, i]
        if not y.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name=cat,
                stackgroup="mem",
                mode="lines",
                line=dict(width=0.5, shape="hv", color=_COLORS.get(cat)),
                hovertemplate="%{x:.3f} ms: %{y:.3f} MB " + cat + "<extra></extra>",
            )
        )
    peak_x, peak_y = tl["peak_time_us"] / 1000, tl["peak_bytes"] / 2**20
    fig.add_trace(
        go.Scatter(
            x=[peak_x],
            y=[peak_y],
            mode="markers+text",
            name="peak",
            marker=dict(color="black", size=9, symbol="x"),
            text=[f"peak {format_memory(tl['peak_bytes'])}"],
            textposition="top center",
        )
    )
    fig.update_layout(
        xaxis_title="ms into the window",
        yaxis_title=f"MB on {tl['device']}",
        legend=dict(orientation="h", y=1.1),
    )
    return fig


def memory_timeline_page(tl: dict[str, Any]) -> str:
    """A standalone page with the memory timeline plot (export_memory_timeline's .html)."""
    body = (
        f"<h1>Memory timeline ({html.escape(tl['device'])})</h1>"
        f"<p class='sub'>Peak {format_memory(tl['peak_bytes'])} at "
        f"{tl['peak_time_us'] / 1000:.3f} ms</p>" + _fig_html(_memory_figure(tl), 480)
    )
    return _page(f"Memory timeline ({tl['device']})", body)


# ---- tables ----


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _top_ops(events: EventList, limit: int = 25) -> str:
    avgs = [
        a
        for a in events.key_averages()
        if a.scope is EventKind.FUNCTION or a.scope is EventKind.BACKWARD_FUNCTION
    ]
    avgs.sort(key=lambda a: -a.self_cpu_time_total)
    total = sum(a.self_cpu_time_total for a in avgs) or 1e-12
    rows = []
    overhead = events.has_kernel_time  # the dispatcher bracketed backend kernels
    for a in avgs[:limit]:
        rate = f"{a.flops / (a.cpu_time_total * 1e3):.2f}" if a.flops and a.cpu_time_total else "--"
        row = [
            a.key,
            a.count,
            format_time(a.self_cpu_time_total),
            f"{100 * a.self_cpu_time_total / total:.1f}%",
            format_time(a.cpu_time_total),
            format_flops(a.flops) if a.flops else "--",
            rate,
        ]
        if overhead:
            o = a.overhead_time_total
            row.append(
                "--" if o is None or not a.cpu_time_total else f"{100 * o / a.cpu_time_total:.0f}%"
            )
        rows.append(row)
    heads = ["Op", "Calls", "Self CPU", "Self %", "CPU total", "FLOPs", "GFLOP/s"]
    return _table(heads + (["Overhead %"] if overhead else []), rows)


def _cards(result, events: EventList) -> str:
    steps = [e for e in events if e.kind is EventKind.STEP]
    window = (result.raw.t1 - result.raw.t0) / 1000
    cards = [("window", format_time(window)), ("steps", str(len(steps)))]
    if steps:
        cards.append(("mean step", format_time(sum(s.cpu_time_total for s in steps) / len(steps))))
    ops = sum(1 for e in events if e.kind is EventKind.FUNCTION)
    cards.append(("ops recorded", f"{ops:,}"))
    if result.raw.with_flops:
        from .flops import flops_totals

        cards.append(("FLOPs", format_flops(flops_totals(events)["total"])))
    if result.raw.profile_memory:
        stats = result.memory_stats()
        for dev, s in sorted(stats.items()):
            cards.append((f"peak {dev}", format_memory(s["peak"])))
    return (
        "<div class='cards'>"
        + "".join(
            f"<div class='card'><b>{html.escape(v)}</b><span>{html.escape(k)}</span></div>"
            for k, v in cards
        )
        + "</div>"
    )


def report_html(result, title: str | None = None) -> str:
    """The report page of a `ProfileResult`."""
    events = result.events()
    raw = result.raw
    title = title or "coretorch profile"
    info = raw.machine
    sub = " · ".join(
        str(x)
        for x in (
            info.get("host_name"),
            f"{info.get('cores', '?')} cores",
            f"coretorch {info.get('coretorch', '?')}",
            f"Python {info.get('python', '?')}",
        )
        if x
    )
    parts = [
        f"<h1>{html.escape(title)}</h1><p class='sub'>{html.escape(sub)}</p>",
        _cards(result, events),
    ]
    findings = raw.anomalies
    hints = result.advice()
    if findings or hints:
        parts.append("<h2>Findings</h2>")
        for a in findings:
            parts.append(f"<div class='bad'>{html.escape(a.get('message', str(a)))}</div>")
        for h in hints:
            ev = "; ".join(f"{k}: {v}" for k, v in h.evidence.items())
            parts.append(
                f"<div class='hint'><b>{html.escape(h.title)}</b> "
                f"<span class='sub'>[{html.escape(h.rule)}]</span><br>"
                f"{html.escape(ev)}<br>{html.escape(h.suggestion)}</div>"
            )
    parts.append(
        "<h2>Steps</h2><p class='note'>Where each step's time goes: data loading, "
        "module forwards, backward, the optimizer, other ops, and Python between ops."
        "</p>" + _steps_chart(events)
    )
    parts.append(
        "<h2>Regions and ops</h2><p class='note'>Click a box to zoom in; width is "
        "time (ProfilerStep#N merged).</p>" + _icicle(events)
    )
    if raw.profile_memory:
        tl = result.memory_timeline()
        parts.append(
            f"<h2>Memory ({html.escape(tl['device'])})</h2>" + _fig_html(_memory_figure(tl), 420)
        )
    parts.append("<h2>Top ops</h2>" + _top_ops(events))
    if any(e.kind is EventKind.MODULE for e in events):
        parts.append("<h2>Modules</h2><pre>" + html.escape(result.module_table()) + "</pre>")
    if raw.with_flops:
        from .flops import COUNTING_NOTE

        parts.append(f"<p class='note'>{html.escape(COUNTING_NOTE)}</p>")
    return _page(title, "".join(parts))


def write_report(path: str | os.PathLike, result, title: str | None = None) -> str:
    """Write the report of `result` to `path` (atomically). Returns `path`."""
    return atomic_write(path, report_html(result, title).encode())
