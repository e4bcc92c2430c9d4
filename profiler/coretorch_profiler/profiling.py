"""`profile`: the profiler context manager (PyTorch's `torch.profiler.profile`)."""
from __future__ import annotations

import enum
from typing import Any, Callable, Iterable

from coretorch.record_function import record_function

from .chrome_trace import write_trace
from .collector import Collector
from .events import EventList, build_events
from .memory import memory_stats, memory_summary
from .schedule import ProfilerAction, default_schedule

__all__ = ["profile", "ProfilerActivity", "step", "current_profile"]

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
_active: list["profile"] = []


class ProfilerActivity(enum.Enum):
    """What to profile. coretorch times every op on the host (CPU) side, on every device."""
    CPU = 0
    CUDA = 1


class profile:
    """Profile the ops, backward nodes and `record_function` regions run inside it.

    ``with profile(record_shapes=True) as prof: ...`` then ``prof.key_averages().table()``,
    ``prof.export_chrome_trace("trace.json")``, ``prof.memory_summary()``. With a `schedule`,
    call ``prof.step()`` at the end of each step; `on_trace_ready(prof)` runs after each
    recorded cycle (and when profiling stops mid-cycle).
    """

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False):
        for a in activities or ():
            if a is not ProfilerActivity.CPU:
                raise NotImplementedError(
                    f"profile(): activity {a} is not supported: coretorch records every op on "
                    f"the host (ProfilerActivity.CPU), on every device, but no device-side "
                    f"kernel timeline")
        self.schedule = schedule or default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops = with_stack, with_flops
        self.step_num = 0
        self._action = ProfilerAction.NONE
        self._collector: Collector | None = None   # recording now
        self._result: Collector | None = None      # the last finished window
        self._events: EventList | None = None
        self._step_rec: record_function | None = None
        self._started = False

    # ---- lifecycle ----
    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start profiling (what entering the `with` block does)."""
        if self._started:
            raise RuntimeError("profile.start(): the profiler is already started")
        self._started = True
        _active.append(self)
        self.step_num = 0
        self._action = self.schedule(0)
        if self._action in _RECORDING:
            self._begin()
        self._open_step()

    def stop(self) -> None:
        """Stop profiling; a window still recording is finished (and `on_trace_ready` runs)."""
        if not self._started:
            return
        self._close_step()
        if self._collector is not None:
            self._finish()
        self._started = False
        if self in _active:
            _active.remove(self)

    def step(self) -> None:
        """Mark the end of a step: the schedule decides what the next step records."""
        if not self._started:
            raise RuntimeError("profile.step(): the profiler is not started")
        prev = self._action
        self.step_num += 1
        cur = self.schedule(self.step_num)
        self._close_step()
        if prev in _RECORDING and (prev is ProfilerAction.RECORD_AND_SAVE or cur not in _RECORDING):
            self._finish()
        if cur in _RECORDING and self._collector is None:
            self._begin()
        self._action = cur
        self._open_step()

    def _begin(self) -> None:
        self._collector = Collector(self.record_shapes, self.profile_memory, self.with_stack,
                                    self.with_flops)
        self._collector.start()

    def _finish(self) -> None:
        col, self._collector = self._collector, None
        col.stop()
        self._result, self._events = col, None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step(self) -> None:
        if self.record_steps and self._collector is not None:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _close_step(self) -> None:
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    # ---- results ----
    def _finished(self, what: str) -> Collector:
        if self._result is None:
            state = ("still recording: call it after the `with` block (or after stop())"
                     if self._collector is not None else "no step was recorded")
            raise RuntimeError(f"profile.{what}(): no results yet, the profiler is {state}")
        return self._result

    def events(self) -> EventList:
        """Every recorded region of the last finished window, in start order."""
        col = self._finished("events")
        if self._events is None:
            self._events = build_events(col)
        return self._events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """Events averaged by op name (and input shapes / top stack frames); `.table()` it."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> str:
        """Write a Chrome trace (gzip when `path` ends in .gz), atomically. Returns `path`."""
        col = self._finished("export_chrome_trace")
        return write_trace(path, self.events(), col)

    def memory_stats(self) -> dict[str, dict[str, int]]:
        """Per device type: bytes at start/end, peak, allocation and free counts and bytes."""
        return memory_stats(self._finished("memory_stats"))

    def memory_summary(self) -> str:
        """A text report of memory per device and the ops that allocated the most."""
        col = self._finished("memory_summary")
        return memory_summary(col, self.events())

    def total_flops(self) -> int:
        """FLOPs of every op recorded (needs with_flops=True)."""
        if not self.with_flops:
            raise RuntimeError("profile.total_flops(): FLOPs were not recorded; pass "
                               "with_flops=True to profile()")
        # an op's FLOPs include those of the ops it called: count the outermost only
        total = 0
        for e in self.events():
            p = e.cpu_parent
            while p is not None and not p.flops:
                p = p.cpu_parent
            if p is None:
                total += e.flops or 0
        return total


def current_profile() -> profile | None:
    """The innermost running profiler, or None."""
    return _active[-1] if _active else None


def step() -> None:
    """Step the innermost running profiler (no-op when none runs): lets a script mark its steps
    when run under ``coretorch-profile --schedule``."""
    if _active:
        _active[-1].step()
