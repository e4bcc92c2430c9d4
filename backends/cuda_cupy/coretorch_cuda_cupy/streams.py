"""`Stream` and `Event` (PyTorch's ``torch.cuda.Stream`` / ``torch.cuda.Event``) over CuPy's.

Kernels run on the current stream: CuPy launches on the stream made current by ``with stream:``.
In emulation numpy runs every kernel synchronously on the host, so a stream has nothing queued
and an event records the host clock (elapsed times are host times; `repr` of streams and events
and `coretorch.cuda.is_emulated()` say so).
"""

from __future__ import annotations

import threading
import time

from . import array_module as am

__all__ = ["Stream", "Event", "current_stream", "default_stream", "synchronize", "require"]


def require(what: str) -> None:
    """Raise the availability error for API `what` when CUDA cannot be used."""
    ok, why = am.availability()
    if not ok:
        raise RuntimeError(f"coretorch.cuda.{what}: CUDA is not available ({why})")


def _index(device) -> int:
    if device is None:
        return 0 if am.EMULATED else am.xp.cuda.runtime.getDevice()
    if isinstance(device, int):
        return device
    from coretorch.device import device as _device

    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"expected a cuda device, got {d}")
    return d.index or 0


class _Local(threading.local):
    def __init__(self):
        self.stack: list["Stream"] = []


_local = _Local()
_defaults: dict[int, "Stream"] = {}


class Stream:
    """A CUDA stream (``coretorch.cuda.Stream()``); ``with stream:`` makes it current."""

    def __init__(self, device=None, priority: int = 0, *, _null: bool = False):
        require("Stream()")
        self.device_index = _index(device)
        self.priority = priority
        self._cupy = None
        if not am.EMULATED:
            with am.device_guard(self.device_index):
                self._cupy = (
                    am.xp.cuda.Stream.null
                    if _null
                    else am.xp.cuda.Stream(non_blocking=False, priority=priority)
                )

    @property
    def cuda_stream(self) -> int:
        """The raw cudaStream_t handle (0 for the default stream and in emulation)."""
        return 0 if self._cupy is None else int(self._cupy.ptr)

    def synchronize(self) -> None:
        """Wait until all work queued on this stream has finished."""
        if self._cupy is not None:
            self._cupy.synchronize()

    def query(self) -> bool:
        """Whether all work queued on this stream has finished."""
        return True if self._cupy is None else bool(self._cupy.done)

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record `event` (a new one if None) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait for `event`."""
        if self._cupy is not None and event._cupy is not None:
            self._cupy.wait_event(event._cupy)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work on this stream wait for everything queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def __enter__(self) -> "Stream":
        _local.stack.append(self)
        if self._cupy is not None:
            self._cupy.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._cupy is not None:
            self._cupy.__exit__(*exc)
        _local.stack.pop()

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (
            self is other or (self._cupy is not None and self._cupy == other._cupy)
        )

    def __hash__(self) -> int:
        return hash((self.device_index, self.cuda_stream, id(self) if self._cupy is None else 0))

    def __repr__(self) -> str:
        label = " (emulated)" if am.EMULATED else ""
        return (
            f"<coretorch.cuda.Stream device=cuda:{self.device_index} "
            f"cuda_stream={self.cuda_stream:#x}{label}>"
        )


def default_stream(device=None) -> Stream:
    """The default (null) stream of `device`."""
    require("default_stream()")
    idx = _index(device)
    s = _defaults.get(idx)
    if s is None:
        s = _defaults[idx] = Stream(idx, _null=True)
    return s


def current_stream(device=None) -> Stream:
    """The stream kernels are queued on now (the innermost ``with stream:``, else the default)."""
    require("current_stream()")
    idx = _index(device)
    for s in reversed(_local.stack):
        if s.device_index == idx:
            return s
    return default_stream(idx)


def synchronize(device=None) -> None:
    """Wait for all work queued on every stream of `device` (the current device if None)."""
    require("synchronize()")
    if not am.EMULATED:
        with am.device_guard(_index(device)):
            am.xp.cuda.runtime.deviceSynchronize()


class Event:
    """A CUDA event: ``e.record()``, ``e.synchronize()``, ``start.elapsed_time(end)`` (ms)."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        require("Event()")
        if interprocess:
            raise NotImplementedError(
                "coretorch.cuda.Event(interprocess=True): inter-process events are not supported"
            )
        self.enable_timing, self.blocking = enable_timing, blocking
        self._cupy = None
        self._host_ns: int | None = None
        self._recorded = False
        if not am.EMULATED:
            self._cupy = am.xp.cuda.Event(block=blocking, disable_timing=not enable_timing)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on `stream` (the current stream if None)."""
        stream = current_stream() if stream is None else stream
        if self._cupy is not None:
            self._cupy.record(stream._cupy)
        else:
            self._host_ns = time.perf_counter_ns()
        self._recorded = True

    def query(self) -> bool:
        """Whether the work before the event has finished."""
        return True if self._cupy is None else bool(self._cupy.done)

    def synchronize(self) -> None:
        """Wait until the work before the event has finished."""
        if self._cupy is not None:
            self._cupy.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on `stream` (the current one if None) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and `end_event` (both recorded, both timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Event.elapsed_time(): both events must be created with argument "
                "'enable_timing=True'"
            )
        if not (self._recorded and end_event._recorded):
            raise RuntimeError(
                "Event.elapsed_time(): both events must be recorded before calculating elapsed time"
            )
        if self._cupy is not None:
            end_event.synchronize()
            return float(am.xp.cuda.get_elapsed_time(self._cupy, end_event._cupy))
        start_ns, end_ns = self._host_ns, end_event._host_ns
        assert start_ns is not None and end_ns is not None  # both recorded (checked above)
        return (end_ns - start_ns) / 1e6

    def __repr__(self) -> str:
        label = " (emulated: host clock)" if am.EMULATED else ""
        return f"<coretorch.cuda.Event enable_timing={self.enable_timing}{label}>"
