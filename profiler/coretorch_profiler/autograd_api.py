"""What ``coretorch.autograd.profiler`` serves: ``torch.autograd.profiler``'s names (the legacy
`profile`, `record_function`, `emit_nvtx`, `emit_itt`, the event classes), implemented by this
package: the legacy `profile` is the same profiler under the old signature."""

from __future__ import annotations

from typing import Any

from coretorch.record_function import record_function

from .averages import FunctionEventAvg
from .events import EventList, FunctionEvent
from .profiling import ProfilerActivity, profile as _profile

__all__ = [
    "profile",
    "record_function",
    "emit_nvtx",
    "emit_itt",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "load_nvprof",
]


class profile(_profile):
    """``torch.autograd.profiler.profile``: ``with profile(record_shapes=True) as prof:``, then
    ``prof.table()``, ``prof.key_averages()``, ``prof.export_chrome_trace(path)``. `use_cuda`
    (or ``use_device="cuda"``) adds device time, as ProfilerActivity.CUDA does; with
    ``enabled=False`` nothing is recorded."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
    ):
        acts = {ProfilerActivity.CPU}
        if use_cuda or (use_device or "").startswith("cuda"):
            acts.add(ProfilerActivity.CUDA)
        super().__init__(
            activities=acts,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
            experimental_config=experimental_config,
            custom_trace_id_callback=custom_trace_id_callback,
        )
        self.enabled = enabled

    def __enter__(self) -> "profile":
        if self.enabled:
            self.start()
        return self

    @property
    def function_events(self) -> EventList:
        """Every recorded event (PyTorch's attribute)."""
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        """Total self CPU time of every event (µs)."""
        return self.events().self_cpu_time_total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The table of the averaged events (``key_averages().table(...)``)."""
        return self.key_averages().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def total_average(self) -> FunctionEventAvg:
        """Every event averaged into one row."""
        return self.events().total_average()


_NO_NVTX = (
    "NVTX ranges need NVIDIA's nvprof/Nsight tools driving a CUDA build, which "
    "coretorch does not have; use coretorch.profiler.profile (ProfilerActivity.CUDA for "
    "device time with the cuda backend)"
)
_NO_ITT = (
    "Intel ITT (VTune) instrumentation is not available in coretorch; use "
    "coretorch.profiler.profile"
)


class _Unavailable:
    """A context manager that exists for scripts that name it, and raises when enabled."""

    _why = ""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise RuntimeError(f"{type(self).__name__}(): {self._why}")
        return self

    def __exit__(self, *exc) -> None:
        return None


class emit_nvtx(_Unavailable):
    """PyTorch's NVTX annotations: raises RuntimeError when enabled (no NVTX here)."""

    _why = _NO_NVTX


class emit_itt(_Unavailable):
    """PyTorch's ITT annotations: raises RuntimeError when enabled (no ITT here)."""

    _why = _NO_ITT


def load_nvprof(path: str):
    """PyTorch's nvprof trace reader: raises RuntimeError (no NVTX here)."""
    raise RuntimeError(f"load_nvprof(): {_NO_NVTX}")
