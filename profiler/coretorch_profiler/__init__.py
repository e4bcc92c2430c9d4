"""coretorch-profiler: a profiler, a Chrome-trace exporter, memory and FLOP accounting, an
anomaly detector and the ``coretorch-profile`` command, all built on coretorch's RecordFunction
callbacks and allocator memory hooks (the core is never patched).

    from coretorch_profiler import profile, record_function, detect_anomaly
    with profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        train_step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")
"""
from __future__ import annotations

from coretorch.record_function import record_function

from .anomaly import AnomalyError, AnomalyWarning, detect_anomaly
from .events import EventList, FunctionEvent
from .averages import FunctionEventAvg
from .profiling import ProfilerActivity, current_profile, profile, step
from .schedule import ProfilerAction, schedule

__version__ = "0.1.0"

__all__ = ["profile", "schedule", "ProfilerAction", "ProfilerActivity", "record_function",
           "detect_anomaly", "AnomalyError", "AnomalyWarning", "EventList", "FunctionEvent",
           "FunctionEventAvg", "current_profile", "step", "__version__"]
