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


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0
) -> Callable[[int], ProfilerAction]:
    """Skip `skip_first` steps, then cycle: `wait` idle steps, `warmup` steps, `active` recorded
    steps (the last one saves: `on_trace_ready` runs), `repeat` times (0 = forever).

    Raises:
        ValueError: when a count is not an int, or `active` is below 1 (or another below 0).

    Examples:
        >>> import coretorch
        >>> from coretorch_profiler import profile, schedule
        >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
        >>> [s(step).name for step in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
        >>> ready = []
        >>> with profile(schedule=s, on_trace_ready=ready.append) as prof:
        ...     for _ in range(5):
        ...         y = coretorch.ones(2) * 2
        ...         prof.step()
        >>> len(ready)
        1
        >>> schedule(wait=1, warmup=0, active=0)
        Traceback (most recent call last):
            ...
        ValueError: schedule(): expected active to be an integer >= 1, got 0
    """
    for n, v, lo in (
        ("wait", wait, 0),
        ("warmup", warmup, 0),
        ("active", active, 1),
        ("repeat", repeat, 0),
        ("skip_first", skip_first, 0),
    ):
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
