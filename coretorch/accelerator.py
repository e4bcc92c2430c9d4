"""``coretorch.accelerator``: the device-neutral accelerator API (``torch.accelerator``).

The accelerator is the first available device type among those the loaded backends registered
that is an accelerator (``cuda``, ``xpu``, ``mps``, ``mtia``, ``hpu``, or a third-party device type
whose registration says ``extras={"accelerator": True}``). With the coretorch-cuda-cupy backend on
a machine with a usable GPU that is ``cuda``; otherwise there is none: `is_available()` is False,
`current_accelerator()` None, `device_count()` 0, the memory counters 0, and the calls that need a
device raise a RuntimeError. Every call is answered by the accelerator's device module
(``coretorch.cuda``).
"""

from __future__ import annotations

import collections
import warnings
from typing import Any

from .device import device as _device, device_types

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "get_device_capability",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
    "Graph",
]

_ACCELERATOR_TYPES = ("cuda", "xpu", "mps", "mtia", "hpu")
_NONE = (
    "no accelerator is available (no loaded backend provides an available accelerator "
    "device; `python -m coretorch` lists the backends and their status)"
)


def _found():
    """(device type name, device module) of the available accelerator, or None."""
    types = device_types()
    extra = sorted(n for n, e in types.items() if e.extras.get("accelerator"))
    for name in (*_ACCELERATOR_TYPES, *extra):
        entry = types.get(name)
        if entry is not None and entry.module is not None and entry.is_available():
            return name, entry.module
    return None


def _module(what: str):
    found = _found()
    if found is None:
        raise RuntimeError(f"coretorch.accelerator.{what}(): {_NONE}")
    return found[1]


def _call(what: str, name: str, *args):
    fn = getattr(_module(what), name, None)
    if fn is None:
        raise RuntimeError(
            f"coretorch.accelerator.{what}(): the {_found()[0]} backend's device "
            f"module has no {name}()"
        )
    return fn(*args)


def _index(what: str, device, optional: bool) -> int:
    """PyTorch's `_get_device_index`: an int, or a device of the accelerator's type."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    found = _found()
    if found is None:
        raise RuntimeError(f"coretorch.accelerator.{what}(): {_NONE}")
    idx = None
    if device is not None:
        d = _device(device)
        if d.type != found[0]:
            raise ValueError(
                f"coretorch.accelerator.{what}(): {d.type} doesn't match the current "
                f"accelerator {found[0]}."
            )
        idx = d.index
    if idx is None:
        if not optional:
            raise ValueError(
                f"coretorch.accelerator.{what}(): expected a device with a specified "
                f"index or an integer, but got: {device}"
            )
        return current_device_index()
    return idx


def current_accelerator(check_available: bool = False) -> "_device | None":
    """The accelerator's device (index None), or None when there is none. Only available
    accelerators count here, so `check_available` changes nothing."""
    found = _found()
    return None if found is None else _device(found[0])


def is_available() -> bool:
    """Whether an accelerator is available."""
    return _found() is not None


def device_count() -> int:
    """How many devices the accelerator has (0 without one)."""
    found = _found()
    return 0 if found is None else found[1].device_count()


def current_device_index() -> int:
    """The index of the accelerator's current device."""
    return _call("current_device_index", "current_device")


def current_device_idx() -> int:
    """Deprecated name of `current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    """Make `device` (an index or an accelerator device with an index) the current device."""
    idx = _index("set_device_index", device, optional=False)
    if idx >= 0:
        _call("set_device_index", "set_device", idx)


def set_device_idx(device, /) -> None:
    """Deprecated name of `set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """``with device_index(i):`` makes device `i` current for the body (None: no change)."""

    def __init__(self, device: "int | None", /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def synchronize(device=None, /) -> None:
    """Wait for the work queued on `device` (default: the current one) to finish."""
    _call("synchronize", "synchronize", _index("synchronize", device, optional=True))


def current_stream(device=None, /):
    """The current stream of `device` (default: the current one)."""
    return _call(
        "current_stream", "current_stream", _index("current_stream", device, optional=True)
    )


def set_stream(stream) -> None:
    """Make `stream` current."""
    _call("set_stream", "set_stream", stream)


def get_device_capability(device=None, /) -> dict[str, Any]:
    """``{"supported_dtypes": {...}}``: the dtypes tensors on the accelerator can have."""
    _index("get_device_capability", device, optional=True)
    from . import dtypes as dt

    return {"supported_dtypes": {d for d in vars(dt).values() if isinstance(d, dt.dtype)}}


# ---- memory: zero and empty without an accelerator, as in PyTorch --------------------------


def _memory(name: str, default, device=None):
    found = _found()
    if found is None:
        return default
    fn = getattr(found[1], name, None)
    if fn is None:
        raise RuntimeError(
            f"coretorch.accelerator.{name}(): the {found[0]} backend's device "
            f"module has no {name}()"
        )
    return fn(device)


def memory_allocated(device_index=None, /) -> int:
    """Bytes held by tensors on the accelerator now."""
    return _memory("memory_allocated", 0, device_index)


def max_memory_allocated(device_index=None, /) -> int:
    """The peak of `memory_allocated` since the start or `reset_peak_memory_stats`."""
    return _memory("max_memory_allocated", 0, device_index)


def memory_reserved(device_index=None, /) -> int:
    """Bytes the accelerator's allocator holds (in use plus cached)."""
    return _memory("memory_reserved", 0, device_index)


def max_memory_reserved(device_index=None, /) -> int:
    """The peak of `memory_reserved` as the device module reports it."""
    return _memory("max_memory_reserved", 0, device_index)


def memory_stats(device_index=None, /) -> "collections.OrderedDict[str, Any]":
    """The allocator's statistics, sorted by name (empty without an accelerator)."""
    stats = _memory("memory_stats", {}, device_index)
    return collections.OrderedDict(sorted(stats.items()))


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Restart the peak counters from the current values."""
    _memory("reset_peak_memory_stats", None, device_index)


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    """Restart the peak counters (coretorch's allocators keep no other accumulated counts)."""
    _memory("reset_peak_memory_stats", None, device_index)


def empty_cache() -> None:
    """Give cached, unused device memory back (does nothing without an accelerator)."""
    found = _found()
    if found is not None:
        found[1].empty_cache()


def empty_host_cache() -> None:
    """coretorch keeps no pinned host-memory cache: nothing to release."""


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """(free bytes, total bytes) of the device."""
    return _call(
        "get_memory_info", "mem_get_info", _index("get_memory_info", device_index, optional=True)
    )


def Graph(*args, **kwargs):  # noqa: N802  (PyTorch's class name)
    """Accelerator graphs (captured kernel launches) do not exist in coretorch."""
    raise RuntimeError(
        "coretorch.accelerator.Graph(): coretorch cannot capture accelerator "
        "graphs (CUDA graphs); run the program eagerly"
    )
