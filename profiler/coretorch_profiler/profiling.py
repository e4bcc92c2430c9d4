"""`profile`: the profiler context manager (PyTorch's `torch.profiler.profile`)."""

from __future__ import annotations

import enum
import json
import threading
import time
import uuid
from typing import Any, Callable, Iterable

from .collector import Collector
from .events import EventList
from .result import ProfileResult
from .schedule import ProfilerAction, default_schedule

__all__ = ["profile", "ProfilerActivity", "supported_activities", "step", "current_profile"]

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
_active: list["profile"] = []


class ProfilerActivity(enum.Enum):
    """What to profile: CPU (every op, on every device, timed on the host) and CUDA (device
    time of each op on a cuda tensor, when the cuda backend is loaded)."""

    CPU = 0
    CUDA = 1


def _cuda_loaded() -> bool:
    """Whether the cuda backend is loaded and can time ops on the device."""
    from coretorch.device import device_types

    entry = device_types().get("cuda")
    return entry is not None and entry.extras.get("op_timer") is not None


def supported_activities() -> set[ProfilerActivity]:
    """The activities this installation can profile."""
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if _cuda_loaded() else set())


class StepCounter:
    """Steps counted from several sources (each optimizer, `profile.step()`): the step advances
    when any source goes past it, so a loop calling both ``optimizer.step()`` and
    ``prof.step()`` (or stepping two optimizers) advances once per iteration. A source seen
    late starts one behind the furthest, so it does not advance the step by itself at once
    (PyTorch's KinetoStepTracker, per source)."""

    def __init__(self) -> None:
        self.counts: dict[Any, int] = {}
        self.step = 0

    def increment(self, source: Any) -> bool:
        """Count one step of `source`; whether the step advanced."""
        c = self.counts.get(source)
        if c is None:
            c = max(max(self.counts.values(), default=1) - 1, 0)
        c += 1
        self.counts[source] = c
        if c > self.step:
            self.step = c
            return True
        return False


class profile:
    """Profile the ops, backward nodes, modules and regions run inside it.

    ``with profile(record_shapes=True) as prof: ...`` then ``prof.key_averages().table()``,
    ``prof.export_chrome_trace("trace.json")``, ``prof.memory_summary()``,
    ``prof.export_html("report.html")``. Steps (``ProfilerStep#N``) end at every optimizer
    step and at each ``prof.step()`` (a loop doing both advances once); a `schedule` decides
    which steps are recorded, and `on_trace_ready(prof)` runs after each recorded cycle (and
    when profiling stops mid-cycle). `with_modules` records each ``nn.Module`` forward and
    backward as a region named by its path. `experimental_config` is accepted and ignored.

    Examples:
        >>> import coretorch
        >>> from coretorch_profiler import profile, record_function
        >>> with profile(record_shapes=True) as prof:
        ...     with record_function("my_block"):
        ...         y = coretorch.ones(3) + 1
        >>> names = [e.name for e in prof.events()]
        >>> names[0], "aten::add" in names  # the region, then the ops run inside it
        ('my_block', True)
        >>> [a.key for a in prof.key_averages()][0]
        'my_block'
        >>> print(prof.key_averages().table(row_limit=2))  # times vary from run to run
        Name ... # of Calls
        ...
        my_block ... 1
        ...
    """

    def __init__(
        self,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[["profile"], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
    ):
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(
                    f"profile(): expected activities to be ProfilerActivity values, got {a!r}"
                )
            if a is ProfilerActivity.CUDA and not _cuda_loaded():
                raise NotImplementedError(
                    "profile(): activity ProfilerActivity.CUDA needs the cuda backend "
                    "(coretorch-cuda-cupy) loaded and available; `python -m coretorch` says "
                    "why it is not. ProfilerActivity.CPU records every op on every device"
                )
        if execution_trace_observer is not None:
            raise NotImplementedError(
                "profile(): execution_trace_observer is not supported "
                "by coretorch; export_chrome_trace() writes the trace"
            )
        self.activities = acts
        self.schedule = schedule or default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self._metadata: dict[str, Any] = {}
        self._action = ProfilerAction.NONE
        self._collector: Collector | None = None  # recording now
        self._result: ProfileResult | None = None  # the last finished window
        self._counter = StepCounter()
        self._opt_hook: Any = None  # the optimizer-step hook's handle while started
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
        from coretorch.optim.optimizer import register_optimizer_step_post_hook

        self._started = True
        _active.append(self)
        self.step_num = 0
        self._counter = StepCounter()
        self._opt_hook = register_optimizer_step_post_hook(self._optimizer_stepped)
        self._action = self.schedule(0)
        if self._action in _RECORDING:
            self._begin()

    def stop(self) -> None:
        """Stop profiling; a window still recording is finished (and `on_trace_ready` runs)."""
        if not self._started:
            return
        if self._opt_hook is not None:
            self._opt_hook.remove()
            self._opt_hook = None
        if self._collector is not None:
            self._finish()
        self._started = False
        if self in _active:
            _active.remove(self)

    def step(self) -> None:
        """Mark the end of a step: the schedule decides what the next step records. A loop
        that also steps an optimizer advances once per iteration."""
        if not self._started:
            raise RuntimeError("profile.step(): the profiler is not started")
        if self._counter.increment("profile.step"):
            self._advance()

    def _optimizer_stepped(self, optimizer, args, kwargs) -> None:
        if self._collector is not None:
            self._collector.saw_optimizer(optimizer)
        if self._counter.increment(("optimizer", id(optimizer))):
            self._advance()

    def _advance(self) -> None:
        prev = self._action
        self.step_num = self._counter.step
        cur = self.schedule(self.step_num)
        if prev in _RECORDING and (prev is ProfilerAction.RECORD_AND_SAVE or cur not in _RECORDING):
            self._finish()
        if cur in _RECORDING:
            if self._collector is None:
                self._begin()
            else:
                self._mark_step()
        self._action = cur

    def _begin(self) -> None:
        col = self._collector = Collector(
            self.record_shapes,
            self.profile_memory,
            self.with_stack,
            self.with_flops,
            self.with_modules,
            device_timers=ProfilerActivity.CUDA in self.activities,
        )
        col.metadata.update(self._metadata)
        col.metadata["trace_id"] = (
            self.custom_trace_id_callback()
            if self.custom_trace_id_callback
            else uuid.uuid4().hex.upper()
        )
        col.start()
        self._mark_step()

    def _mark_step(self) -> None:
        assert self._collector is not None  # recording
        self._collector.step_marks.append(
            (time.perf_counter_ns(), threading.get_ident(), self.step_num)
        )

    def _finish(self) -> None:
        col, self._collector = self._collector, None
        assert col is not None  # recording
        col.stop()
        if len(col.step_marks) == 1 and not self.record_steps:
            col.step_marks.clear()  # no step ended in the window: no ProfilerStep region
        col.metadata.update(self._metadata)
        self._result = ProfileResult(col)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ---- metadata ----
    def add_metadata(self, key: str, value: str) -> None:
        """Add a key/value pair to the trace's top level (PyTorch's `add_metadata`)."""
        self._metadata[str(key)] = value
        for raw in (self._collector, self._result.raw if self._result else None):
            if raw is not None:
                raw.metadata[str(key)] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """Like `add_metadata` with `value` a JSON string (stored parsed)."""
        self.add_metadata(key, json.loads(value))

    # ---- results ----
    def _finished(self, what: str) -> ProfileResult:
        if self._result is None:
            state = (
                "still recording: call it after the `with` block (or after stop())"
                if self._collector is not None
                else "no step was recorded"
            )
            raise RuntimeError(f"profile.{what}(): no results yet, the profiler is {state}")
        return self._result

    @property
    def result(self) -> ProfileResult:
        """The last finished window (every view of it)."""
        return self._finished("result")

    def events(self) -> EventList:
        """Every recorded region of the last finished window, in start order."""
        return self._finished("events").events()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
        group_by: str | None = None,
    ) -> EventList:
        """Events averaged by op name (and input shapes / top stack frames), or by module
        (``group_by="module"``); `.table()` it."""
        return self._finished("key_averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name, group_by
        )

    def export_chrome_trace(self, path: str) -> str:
        """Write a Chrome trace (gzip when `path` ends in .gz), atomically. Returns `path`."""
        return self._finished("export_chrome_trace").export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> str:
        """Write folded stacks for flamegraph.pl and speedscope. Returns `path`."""
        return self._finished("export_stacks").export_stacks(path, metric)

    def export_memory_timeline(self, path: str, device: str | None = None) -> str:
        """Write the memory timeline by category (JSON, or HTML with a plot). Returns `path`."""
        return self._finished("export_memory_timeline").export_memory_timeline(path, device)

    def export_html(self, path: str, title: str | None = None) -> str:
        """Write the self-contained HTML report. Returns `path`."""
        return self._finished("export_html").export_html(path, title)

    def memory_stats(self) -> dict[str, dict[str, int]]:
        """Per device type: bytes at start/end, peak, allocation and free counts and bytes."""
        return self._finished("memory_stats").memory_stats()

    def memory_summary(self) -> str:
        """A text report of memory per device, the top allocating ops, what is live at the
        peak."""
        return self._finished("memory_summary").memory_summary()

    def module_table(self, max_depth: int | None = None) -> str:
        """The module tree with forward/backward/self time (needs with_modules=True)."""
        return self._finished("module_table").module_table(max_depth)

    def total_flops(self) -> int:
        """FLOPs of every op recorded (needs with_flops=True)."""
        if not self.with_flops:
            raise RuntimeError(
                "profile.total_flops(): FLOPs were not recorded; pass with_flops=True to profile()"
            )
        return self._finished("total_flops").total_flops()

    def flops_summary(self) -> str:
        """FLOPs in readable units: total, forward/backward, per step, and what is counted."""
        return self._finished("flops_summary").flops_summary()

    def advice(self) -> list:
        """Hints on likely causes of slowness, each with its evidence."""
        return self._finished("advice").advice()


def note_anomaly(message: str, info: dict[str, Any]) -> None:
    """Record an anomaly finding in the windows recording now (the report lists them)."""
    for p in _active:
        if p._collector is not None:
            p._collector.anomalies.append({"message": message, **info})


def current_profile() -> profile | None:
    """The innermost running profiler, or None."""
    return _active[-1] if _active else None


def step() -> None:
    """Step the innermost running profiler (no-op when none runs): lets a script mark its steps
    when run under ``coretorch-profile`` without an optimizer."""
    if _active:
        _active[-1].step()
