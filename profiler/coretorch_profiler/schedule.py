"""`schedule(...)`: which steps a profiler records (PyTorch's `torch.profiler.schedule`)."""
from __future__ import annotations

import enum
from typing import Callable

__all__ = ["ProfilerAction", "schedule"]


class ProfilerAction(enum.Enum):
    """What the profiler does during a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """Skip `skip_first` steps, then cycle: `wait` idle steps, `warmup` steps, `active` recorded
    steps (the last one saves: `on_trace_ready` runs), `repeat` times (0 = forever)."""
    for n, v, lo in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                     ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
        if not isinstance(v, int) or v < lo:
            raise ValueError(f"schedule(): expected {n} to be an integer >= {lo}, got {v!r}")
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"schedule(): expected a step >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def default_schedule(step: int) -> ProfilerAction:
    """Without a schedule every step is recorded and results are saved when profiling stops."""
    return ProfilerAction.RECORD
