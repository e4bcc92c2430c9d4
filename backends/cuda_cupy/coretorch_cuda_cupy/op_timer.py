"""Device time per op for the profiler's GPU track: a pair of CUDA events around every op that
touches a cuda tensor.

The profiler finds this class in the cuda device type's ``extras["op_timer"]`` (the core's
device registry; the profiler imports no backend) and calls ``start()``, ``stop()`` and
``events()``. Event times are placed on the host timeline through a base event recorded after a
synchronize at `start`. In emulation the events read the host clock, and every event says
``"emulated": True``.
"""

from __future__ import annotations

import time

from coretorch import record_function as _rf
from coretorch.tensor.impl import TensorImpl

from . import array_module as am
from .streams import Event, current_stream, synchronize

__all__ = ["CudaOpTimer"]

_T = TensorImpl


def _on_cuda(x) -> bool:
    if isinstance(x, _T):
        return x._device.type == "cuda"
    if isinstance(x, (list, tuple)):
        return any(isinstance(e, _T) and e._device.type == "cuda" for e in x)
    return getattr(x, "type", None) == "cuda" or (isinstance(x, str) and x.startswith("cuda"))


def _touches_cuda(rf) -> bool:
    if any(_on_cuda(a) for a in rf.args):
        return True
    return bool(rf.kwargs) and any(_on_cuda(v) for v in rf.kwargs.values())


class CudaOpTimer:
    """Records (op, start event, end event) for every FUNCTION region on cuda tensors."""

    def __init__(self) -> None:
        self._records: list[tuple] = []
        self._handle: int | None = None
        self._base: Event | None = None
        self._base_ns = 0

    def start(self) -> None:
        """Synchronize, take a base GPU event, and time every op with CUDA events from now on."""
        synchronize()
        self._base = Event(enable_timing=True)
        self._base.record()
        self._base.synchronize()
        self._base_ns = time.perf_counter_ns()
        self._handle = _rf.add_global_callback(
            self._on_start, self._on_end, scopes=(_rf.RecordScope.FUNCTION,)
        )

    def _on_start(self, rf):
        if not _touches_cuda(rf):
            return None
        ev = Event(enable_timing=True)
        ev.record()
        return ev

    def _on_end(self, rf, start) -> None:
        if start is None:
            return
        end = Event(enable_timing=True)
        end.record()
        stream = current_stream()
        self._records.append(
            (
                rf.name,
                start,
                end,
                stream.device_index,
                stream.cuda_stream,
                (rf.thread_id, rf.start_ns),
            )
        )

    def stop(self) -> None:
        """Stop timing ops and synchronize so every recorded event is complete."""
        if self._handle is not None:
            _rf.remove_callback(self._handle)
            self._handle = None
        synchronize()

    def events(self) -> list[dict]:
        """Kernel-time events: name, device index, stream, start_ns/end_ns on the host clock,
        and `host`: (thread ident, start_ns) of the launching op's RecordFunction."""
        base, t0 = self._base, self._base_ns
        out: list[dict] = []
        if base is None:  # nothing was recorded
            return out
        for name, start, end, index, stream, host in self._records:
            s = t0 + int(base.elapsed_time(start) * 1e6)
            e = t0 + int(base.elapsed_time(end) * 1e6)
            out.append(
                {
                    "name": name,
                    "device_index": index,
                    "stream": stream,
                    "start_ns": s,
                    "end_ns": max(e, s),
                    "emulated": am.EMULATED,
                    "host": host,
                }
            )
        return out
