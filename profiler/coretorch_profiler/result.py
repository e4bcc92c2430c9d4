"""`ProfileResult`: every view of one profiling window, built from its `RawProfile` (recorded
now, or read back from a trace with `load_trace`)."""

from __future__ import annotations

import os
from typing import Any

from .events import EventList, build_events
from .raw import EventKind, RawProfile

__all__ = ["ProfileResult", "load_trace"]


class ProfileResult:
    """The events, tables, trace, stacks, memory timeline, report and advice of one window."""

    def __init__(self, raw: RawProfile):
        self.raw = raw
        self._events: EventList | None = None
        self._allocs: list[dict[str, Any]] | None = None

    # ---- events and tables ----
    def events(self) -> EventList:
        """Every region of the window, in start order."""
        if self._events is None:
            self._events = build_events(self.raw)
        return self._events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
        group_by: str | None = None,
    ) -> EventList:
        """Events averaged by name (and input shapes / top stack frames), or by module."""
        return self.events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name, group_by
        )

    def module_table(self, max_depth: int | None = None) -> str:
        """The module tree: per module path, forward and backward time, own (self) time,
        calls, FLOPs and the share of the window."""
        from .module_tree import module_table

        return module_table(self.events(), max_depth)

    def steps(self) -> list[dict[str, Any]]:
        """Per ProfilerStep: number, start (µs into the window) and duration (µs)."""
        return [
            {
                "step": int(e.name.split("#", 1)[1]),
                "start_us": e.start_us,
                "duration_us": e.cpu_time_total,
            }
            for e in self.events()
            if e.kind is EventKind.STEP
        ]

    # ---- FLOPs ----
    def total_flops(self) -> int:
        """FLOPs of every op recorded (needs with_flops=True); an op's nested ops count once."""
        if not self.raw.with_flops:
            raise RuntimeError(
                "profile.total_flops(): FLOPs were not recorded; pass with_flops=True to profile()"
            )
        from .flops import flops_totals

        return flops_totals(self.events())["total"]

    def flops_summary(self) -> str:
        """Total, forward/backward and per-step FLOPs in readable units, with what is counted."""
        from .flops import flops_summary

        if not self.raw.with_flops:
            raise RuntimeError(
                "profile.flops_summary(): FLOPs were not recorded; pass "
                "with_flops=True to profile()"
            )
        return flops_summary(self.events(), self.steps())

    # ---- memory ----
    def allocations(self) -> list[dict[str, Any]]:
        """Each allocation of the window with its lifetime, the region that made it and its
        category (parameter, optimizer state, input, activation, gradient, temporary, other)."""
        if self._allocs is None:
            from .memory import allocations

            self._allocs = allocations(self.raw, self.events())
        return self._allocs

    def memory_stats(self) -> dict[str, dict[str, int]]:
        """Per device type: bytes at start/end, peak, allocation and free counts and bytes."""
        from .memory import memory_stats

        return memory_stats(self.raw)

    def memory_summary(self) -> str:
        """A text report of memory per device, the ops that allocated the most, and what was
        live at the peak by category and allocation site."""
        from .memory import memory_summary

        return memory_summary(self.raw, self.events())

    def memory_timeline(self, device: str | None = None) -> dict[str, Any]:
        """The memory of one device type over the window, by category."""
        from .memory import timeline

        self._need_memory("memory_timeline")
        return timeline(self.raw, self.allocations(), device or self._memory_device())

    def export_memory_timeline(self, path: str, device: str | None = None) -> str:
        """Write the memory timeline of `device` (default: the device that allocated the most):
        JSON (``.json``, ``.json.gz``) or an HTML page with the plot (``.html``)."""
        from .export import write_memory_timeline

        return write_memory_timeline(path, self.memory_timeline(device))

    def _need_memory(self, what: str) -> None:
        if not self.raw.profile_memory:
            raise RuntimeError(
                f"profile.{what}(): memory was not recorded; pass profile_memory=True to profile()"
            )

    def _memory_device(self) -> str:
        stats = self.memory_stats()
        if not stats:
            return "cpu"
        # bytes allocated in the window, not the peak: the peak counts what was live before it
        return max(stats, key=lambda d: (stats[d]["allocated_bytes"], d == "cpu"))

    # ---- exports ----
    def export_chrome_trace(self, path: str) -> str:
        """Write a Chrome trace (gzip when `path` ends in .gz), atomically. Returns `path`."""
        from .chrome_trace import write_trace

        return write_trace(path, self)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> str:
        """Write folded stacks (flamegraph.pl, speedscope): one line per stack, frames from the
        user's Python functions through modules down to ops, and its `metric` in µs
        (``self_cpu_time_total`` or ``self_device_time_total``)."""
        from .stacks import write_stacks

        return write_stacks(path, self.events(), metric)

    def export_html(self, path: str, title: str | None = None) -> str:
        """Write one self-contained HTML report (no network needed to view it)."""
        from .report import write_report

        return write_report(path, self, title)

    def advice(self) -> list:
        """Hints on the likely causes of slowness, each with the numbers behind it."""
        from .advice import advise

        return advise(self)


def load_trace(path: str | os.PathLike) -> ProfileResult:
    """A trace written by `export_chrome_trace` (or `coretorch-profile`), read back into the
    event model: tables, stacks, memory timeline, report, advice and diff work on it."""
    from .trace_io import read_trace

    return ProfileResult(read_trace(path))
