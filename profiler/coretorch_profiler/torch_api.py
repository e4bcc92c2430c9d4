"""What ``coretorch.profiler`` serves: ``torch.profiler``'s names, implemented by this
package."""

from __future__ import annotations

from coretorch.record_function import record_function

from . import itt
from .handlers import tensorboard_trace_handler
from .profiling import ProfilerActivity, profile, supported_activities
from .result import load_trace
from .schedule import ProfilerAction, schedule

__all__ = [
    "profile",
    "record_function",
    "ProfilerActivity",
    "ProfilerAction",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
    "itt",
    "load_trace",
    "ExecutionTraceObserver",
]


class ExecutionTraceObserver:
    """PyTorch's execution-trace observer: not available in coretorch."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "ExecutionTraceObserver(): execution traces are not available in "
            "coretorch; profile(...).export_chrome_trace() writes a Chrome trace"
        )
