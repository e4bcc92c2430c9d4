"""``coretorch.cuda``: the device module, shaped like ``torch.cuda``.

Exists whether or not a GPU is usable: `is_available()` is then False, `device_count()` 0, and
the calls that need a device (streams, events, synchronize, current_device) raise a RuntimeError
with CuPy's reason.
"""
from __future__ import annotations

from . import array_module as am
from .allocator import OutOfMemoryError, allocator
from .streams import Event, Stream, current_stream, default_stream, require, synchronize

__all__ = ["is_available", "is_emulated", "device_count", "current_device", "set_device",
           "get_device_name", "synchronize", "manual_seed", "manual_seed_all", "seed",
           "initial_seed", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "memory_stats", "empty_cache",
           "Stream", "Event", "current_stream", "default_stream", "OutOfMemoryError",
           "unavailable_reason"]


def is_available() -> bool:
    """Whether cuda tensors can be created (CuPy imports and sees a device, or emulation)."""
    return am.availability()[0]


def is_emulated() -> bool:
    """Whether numpy stands in for CuPy (``CORETORCH_CUDA_EMULATE=1``; tests only)."""
    return am.EMULATED


def unavailable_reason() -> str:
    """Why CUDA is not available ('' when it is)."""
    ok, why = am.availability()
    return "" if ok else why


def device_count() -> int:
    """The number of usable CUDA devices (0 when CUDA is not available)."""
    if not is_available():
        return 0
    if am.EMULATED:
        return 1
    return am.xp.cuda.runtime.getDeviceCount()


def current_device() -> int:
    """The index of the current CUDA device."""
    require("current_device()")
    return 0 if am.EMULATED else am.xp.cuda.runtime.getDevice()


def set_device(device) -> None:
    """Make `device` (an index, ``"cuda:1"`` or a device) the current CUDA device."""
    require("set_device()")
    from .streams import _index
    idx = _index(device)
    if not 0 <= idx < device_count():
        raise RuntimeError(f"set_device(): invalid device ordinal {idx} (device_count() is "
                           f"{device_count()})")
    if not am.EMULATED:
        am.xp.cuda.Device(idx).use()


def get_device_name(device=None) -> str:
    """The name of the device (says "emulated" in emulation)."""
    require("get_device_name()")
    if am.EMULATED:
        return f"emulated CUDA device ({am.EMULATION_LABEL})"
    from .streams import _index
    name = am.xp.cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


# ---- random ----------------------------------------------------------------------------------

def _generators() -> list:
    from coretorch.random import generator_for
    names = ["cuda"] + [f"cuda:{i}" for i in range(max(device_count(), 1))]
    return [generator_for(n) for n in names]


def manual_seed(seed: int) -> None:
    """Seed the random streams of the cuda devices (cuda random values differ from cpu's)."""
    for g in _generators():
        g.manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> int:
    """Seed the cuda random streams from OS entropy and return the seed."""
    gens = _generators()
    s = gens[0].seed()
    for g in gens[1:]:
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the current device's random stream."""
    return _generators()[0].initial_seed()


# ---- memory ----------------------------------------------------------------------------------
# coretorch's cuda allocator counts all devices together; `device` is accepted for PyTorch's
# signatures.

def memory_allocated(device=None) -> int:
    """Bytes held by cuda tensors now."""
    return allocator.allocated


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` (since the start or `reset_peak_memory_stats`)."""
    return allocator.peak


def memory_reserved(device=None) -> int:
    """Bytes CuPy's memory pool holds from the driver: in use plus cached for reuse."""
    return allocator.reserved()


def max_memory_reserved(device=None) -> int:
    """CuPy's pool keeps no reserved peak: the current `memory_reserved`."""
    return allocator.reserved()


def reset_peak_memory_stats(device=None) -> None:
    """Restart `max_memory_allocated` from the current allocation."""
    allocator.reset_peak_stats()


def memory_stats(device=None) -> dict:
    """Allocator statistics: allocated, peak, reserved, counts, out-of-memory retries."""
    stats = allocator.stats()
    stats.update(num_oom_retries=allocator.num_oom_retries, num_ooms=allocator.num_ooms)
    return stats


def empty_cache() -> None:
    """Give CuPy's cached, unused blocks back to the driver (tensors in use are unaffected)."""
    if is_available():
        allocator.empty_cache()

