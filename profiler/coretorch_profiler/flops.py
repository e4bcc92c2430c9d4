"""FLOP totals in readable units, split forward/backward and by kind, per step.

What is counted: every op whose declaration has a FLOP formula, in the forward pass and in
backward (the ops a derivative formula runs are ordinary ops). Matrix products and
convolutions count 2 FLOPs per multiply-add, as PyTorch does (addmm adds one per output
element for its addition); elementwise ops count 1 per output element and reductions 1 per
input element, where PyTorch's profiler counts only add and mul among them. An op run inside
another op that has FLOPs (an addmm's own mm) is counted once, in the outermost.
"""

from __future__ import annotations

from typing import Any

from .raw import EventKind
from .table import format_flops

__all__ = ["flops_totals", "flops_summary", "COUNTING_NOTE", "MATMUL_OPS"]

MATMUL_OPS = frozenset(
    {
        "aten::mm",
        "aten::bmm",
        "aten::addmm",
        "aten::baddbmm",
        "aten::matmul",
        "aten::linear",
        "aten::conv1d",
        "aten::conv2d",
        "aten::convolution",
        "aten::convolution_backward",
    }
)
COUNTING_NOTE = (
    "Counted: every op with a FLOP formula, forward and backward. Matrix products and "
    "convolutions: 2 FLOPs per multiply-add (PyTorch's convention). Elementwise ops: 1 per "
    "output element; reductions: 1 per input element (PyTorch's profiler counts only add and "
    "mul among these). Nested ops count once."
)


def _outermost_flop_events(events):
    for e in events:
        if e.kind is not EventKind.FUNCTION or not e.flops:
            continue
        p = e.cpu_parent
        while p is not None and not (p.kind is EventKind.FUNCTION and p.flops):
            p = p.cpu_parent
        if p is None:
            yield e


def _in_backward(e) -> bool:
    while e is not None:
        if e.kind is EventKind.BACKWARD_FUNCTION:
            return True
        e = e.cpu_parent
    return False


def _step_of(e):
    while e is not None:
        if e.kind is EventKind.STEP:
            return e
        e = e.cpu_parent
    return None


def flops_totals(events) -> dict[str, Any]:
    """{total, forward, backward, matmul, other, per_step: {step name: FLOPs}}."""
    out: dict[str, Any] = {
        "total": 0,
        "forward": 0,
        "backward": 0,
        "matmul": 0,
        "other": 0,
        "per_step": {},
    }
    for e in _outermost_flop_events(events):
        f = e.flops
        out["total"] += f
        out["backward" if _in_backward(e) else "forward"] += f
        out["matmul" if e.name in MATMUL_OPS else "other"] += f
        s = _step_of(e)
        if s is not None:
            out["per_step"][s.name] = out["per_step"].get(s.name, 0) + f
    return out


def flops_summary(events, steps: list[dict[str, Any]]) -> str:
    """The totals as text, with the achieved rate per step and what is counted."""
    t = flops_totals(events)
    lines = [
        f"Total FLOPs: {format_flops(t['total'])} ({t['total']:,}): forward "
        f"{format_flops(t['forward'])}, backward {format_flops(t['backward'])}; matrix "
        f"products and convolutions {format_flops(t['matmul'])}, elementwise and "
        f"reductions {format_flops(t['other'])}"
    ]
    per = t["per_step"]
    if per:
        durations = {f"ProfilerStep#{s['step']}": s["duration_us"] for s in steps}
        vals = list(per.values())
        mean = sum(vals) / len(vals)
        rates = [per[k] / (durations[k] * 1e3) for k in per if durations.get(k)]
        rate = f", {sum(rates) / len(rates):.2f} GFLOP/s achieved" if rates else ""
        lines.append(f"Per step: {format_flops(mean)} on average over {len(vals)} steps{rate}")
    lines.append(COUNTING_NOTE)
    return "\n".join(lines) + "\n"
