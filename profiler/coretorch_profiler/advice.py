"""Advice: rules that read a profile and name a likely cause of slowness, each hint with the
numbers behind it. A rule that lacks what it needs (FLOPs, input dtypes) stays silent."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from . import machine
from .flops import MATMUL_OPS
from .raw import EventKind
from .table import format_memory, format_time

__all__ = ["Hint", "advise", "RULES"]

TINY_OP_US = 20.0  # an op this short is mostly framework overhead on this hardware
SLOW_KERNEL_FRACTION = 0.1  # a matmul below this share of the measured FLOP rate is slow


@dataclass
class Hint:
    """One piece of advice: which rule, the finding, the numbers behind it, what to try."""

    rule: str
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    suggestion: str = ""

    def __str__(self) -> str:
        nums = ", ".join(f"{k}: {v}" for k, v in self.evidence.items())
        return f"[{self.rule}] {self.title} ({nums}). {self.suggestion}"


def _steps(events) -> list:
    return [e for e in events if e.kind is EventKind.STEP]


def _window_us(events) -> float:
    steps = _steps(events)
    if steps:
        return sum(s.cpu_time_total for s in steps)
    return sum(e.cpu_time_total for e in events if e.cpu_parent is None)


def _top_ops(events) -> list:
    """The ops the user's code called (not the ops inside other ops or backward nodes)."""
    out = []
    for e in events:
        if e.kind is not EventKind.FUNCTION:
            continue
        p = e.cpu_parent
        while p is not None and p.kind not in (EventKind.FUNCTION, EventKind.BACKWARD_FUNCTION):
            p = p.cpu_parent
        if p is None:
            out.append(e)
    return out


def tiny_ops(result, events) -> list[Hint]:
    """Many short ops: per-op framework overhead (dispatch, autograd bookkeeping, Python)
    dominates the step."""
    ops = _top_ops(events) + [e for e in events if e.kind is EventKind.BACKWARD_FUNCTION]
    n_steps = max(len(_steps(events)), 1)
    window = _window_us(events)
    if not ops or not window:
        return []
    times = [e.cpu_time_total for e in ops]
    tiny = [t for t in times if t < TINY_OP_US]
    per_step = len(ops) / n_steps
    if per_step < 50 or len(tiny) < 0.5 * len(times):
        return []
    # the time outside ops, in the step and the user's functions: Python around each call
    between = sum(
        e.self_cpu_time_total for e in events if e.kind in (EventKind.STEP, EventKind.PYTHON)
    )
    if (sum(tiny) + between) / window < 0.2:
        return []  # many small ops, but the time goes elsewhere
    ev = {
        "ops per step": f"{per_step:.0f}",
        "median op": format_time(statistics.median(times)),
        f"time in ops under {TINY_OP_US:.0f} us": f"{100 * sum(tiny) / window:.0f}% of the run",
    }
    if between:
        ev["time between ops"] = f"{100 * between / window:.0f}% of the run"
    kernel = [e.kernel_time_total for e in ops if e.kernel_time_total is not None]
    if kernel:
        total = sum(e.cpu_time_total for e in ops if e.kernel_time_total is not None)
        ev["framework overhead"] = f"{100 * (1 - sum(kernel) / total):.0f}% of op time"
    return [
        Hint(
            "tiny-ops",
            "Many tiny ops: framework overhead dominates",
            ev,
            "Use fewer, larger ops: batch more samples per step, replace loops over "
            "elements by tensor ops, fuse elementwise chains (coretorch.compile, once "
            "available, replays captured steps without the per-op overhead).",
        )
    ]


def threads(result, events) -> list[Hint]:
    """More compute threads than cores: BLAS or numba workers fight over the cores."""
    info = (
        machine.complete(result.raw.machine)
        if result.raw.loaded_from is None
        else result.raw.machine
    )
    cores = info.get("cores")
    if not cores:
        return []
    pools = [
        (p["library"] or p["api"], p["threads"]) for p in info.get("blas") or [] if p.get("threads")
    ]
    if info.get("numba_threads"):
        pools.append(("numba", info["numba_threads"]))
    over = [(name, n) for name, n in pools if n > cores]
    if not over:
        return []
    ev = {"cores available": cores, **{f"{name} threads": n for name, n in over}}
    if "load_average" in info:
        ev["load average"] = info["load_average"]
    return [
        Hint(
            "threads",
            "More compute threads than cores: the thread pools are oversubscribed",
            ev,
            f"Limit the pools to the {cores} core(s) the process may use: "
            f"OMP_NUM_THREADS/OPENBLAS_NUM_THREADS/NUMBA_NUM_THREADS={cores} before "
            f"start, or threadpoolctl.threadpool_limits({cores}) and "
            f"numba.set_num_threads({cores}).",
        )
    ]


def slow_kernels(result, events) -> list[Hint]:
    """Matrix products and convolutions running far below the machine's measured FLOP rate."""
    if not result.raw.with_flops:
        return []
    info = (
        machine.complete(result.raw.machine)
        if result.raw.loaded_from is None
        else result.raw.machine
    )
    peak = info.get("peak_gflops")
    window = _window_us(events)
    if not peak or not window:
        return []
    groups: dict[str, list[float]] = {}
    for e in events:
        if e.kind is EventKind.FUNCTION and e.name in MATMUL_OPS and e.flops:
            g = groups.setdefault(e.name, [0.0, 0.0, 0])
            g[0] += e.flops
            g[1] += e.cpu_time_total
            g[2] += 1
    out = []
    for name, (flops, us, n) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        rate = flops / (us * 1e3) if us else 0.0
        if us / window >= 0.1 and rate < SLOW_KERNEL_FRACTION * peak:
            out.append(
                Hint(
                    "slow-kernel",
                    f"{name} runs far below this machine's FLOP rate",
                    {
                        "achieved": f"{rate:.2f} GFLOP/s",
                        "machine (float32 matmul)": f"{peak:.1f} GFLOP/s",
                        "calls": n,
                        "share of the run": f"{100 * us / window:.0f}%",
                    },
                    "Check the shapes (thin or tiny matrices cannot use the hardware well; batch "
                    "them), the layout (transposed or strided "
                    "inputs are copied first) and the dtype "
                    "(float64 halves the rate).",
                )
            )
    return out


def dataloader_wait(result, events) -> list[Hint]:
    """Steps waiting for the DataLoader."""
    steps = _steps(events)
    loads = [e for e in events if e.name.startswith("enumerate(DataLoader)#")]
    window = _window_us(events)
    if not loads or not window:
        return []
    wait = sum(e.cpu_time_total for e in loads)
    share = wait / window
    if share < 0.2:
        return []
    per = len(steps) or len(loads)
    return [
        Hint(
            "dataloader",
            "The steps wait for data",
            {"data loading": f"{100 * share:.0f}% of the run", "per step": format_time(wait / per)},
            "Make __getitem__ cheaper (preprocess once, cache), load whole batches with "
            "__getitems__, or use DataLoader workers (num_workers > 0) where available.",
        )
    ]


def float64(result, events) -> list[Hint]:
    """float64 ops where float32 would likely do (needs record_shapes for the dtypes)."""
    ops = [e for e in _top_ops(events) if e._dtypes]
    if not ops:
        return []
    f64 = [e for e in ops if "float64" in e._dtypes]
    total = sum(e.cpu_time_total for e in ops)
    t64 = sum(e.cpu_time_total for e in f64)
    if not total or t64 / total < 0.1:
        return []
    names = sorted(
        {e.name for e in f64}, key=lambda n: -sum(e.cpu_time_total for e in f64 if e.name == n)
    )[:5]
    return [
        Hint(
            "float64",
            "float64 ops take a large share of the time",
            {
                "float64 ops": len(f64),
                "their share of op time": f"{100 * t64 / total:.0f}%",
                "slowest": ", ".join(names),
            },
            "Train in float32 unless the model needs the precision (model.float(), "
            "dtype=coretorch.float32 for inputs): half the memory traffic, twice the BLAS rate.",
        )
    ]


def host_device_copies(result, events) -> list[Hint]:
    """Copies between the host and a device inside the training loop."""
    steps = _steps(events)
    copies = [e for e in events if e.extra and "copy" in e.extra]
    if not copies:
        return []
    n = max(len(steps), 1)
    to_host = [e for e in copies if e.extra["copy"].endswith("-> cpu")]
    to_dev = [e for e in copies if not e.extra["copy"].endswith("-> cpu")]
    if not to_host and len(to_dev) / n <= 2:
        return []  # the batch and its targets: expected
    ev = {
        "host to device per step": f"{len(to_dev) / n:.1f}",
        "device to host per step": f"{len(to_host) / n:.1f}",
        "bytes per step": format_memory(int(sum(e.extra["bytes"] for e in copies) / n)),
        "copy time per step": format_time(sum(e.cpu_time_total for e in copies) / n),
    }
    return [
        Hint(
            "copies",
            "Host-device copies in the loop",
            ev,
            "Keep tensors on the device between steps (create constants there once), "
            "and read results back (.cpu(), .item(), float()) every N steps rather than "
            "every step: each device-to-host copy waits for the device.",
        )
    ]


RULES: list[Callable] = [
    tiny_ops,
    threads,
    slow_kernels,
    dataloader_wait,
    float64,
    host_device_copies,
]


def advise(result) -> list[Hint]:
    """The hints of every rule for one profile (a `ProfileResult`)."""
    events = result.events()
    out: list[Hint] = []
    for rule in RULES:
        out.extend(rule(result, events))
    return out
