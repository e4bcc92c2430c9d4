"""Timing shared by the benchmarks that compare coretorch with PyTorch."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def alternating_medians(
    fa: Callable, fb: Callable, repeat: int, warmup: int = 3
) -> tuple[float, float]:
    """Median wall times of `fa` and `fb` run in turns (a loaded machine slows both alike)."""
    for _ in range(warmup):
        fa()
        fb()
    ta, tb = [], []
    for _ in range(repeat):
        for fn, times in ((fa, ta), (fb, tb)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(ta), statistics.median(tb)
