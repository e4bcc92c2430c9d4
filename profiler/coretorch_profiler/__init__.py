"""coretorch-profiler: a profiler, Chrome traces, tables, module and step attribution, flame
graphs, a memory timeline by category, an HTML report, run-to-run diffs, advice, an anomaly
detector and the ``coretorch-profile`` command, all built on coretorch's RecordFunction
callbacks, allocator memory hooks and global module/optimizer hooks (the core is never patched).

    from coretorch_profiler import profile, record_function, detect_anomaly
    with profile(record_shapes=True, profile_memory=True, with_flops=True,
                 with_modules=True) as prof:
        train_step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")
    prof.export_html("report.html")

``coretorch.profiler`` and ``coretorch.autograd.profiler`` are this package under PyTorch's
names.
"""

from __future__ import annotations

from coretorch.record_function import record_function

from .anomaly import AnomalyError, AnomalyWarning, detect_anomaly
from .averages import FunctionEventAvg
from .diff import ProfileDiff, diff
from .events import EventList, FunctionEvent
from .handlers import tensorboard_trace_handler
from .profiling import ProfilerActivity, current_profile, profile, step, supported_activities
from .result import ProfileResult, load_trace
from .schedule import ProfilerAction, schedule

__version__ = "0.2.0"

__all__ = [
    "profile",
    "schedule",
    "ProfilerAction",
    "ProfilerActivity",
    "record_function",
    "supported_activities",
    "tensorboard_trace_handler",
    "detect_anomaly",
    "AnomalyError",
    "AnomalyWarning",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfileResult",
    "load_trace",
    "diff",
    "ProfileDiff",
    "current_profile",
    "step",
    "__version__",
]
