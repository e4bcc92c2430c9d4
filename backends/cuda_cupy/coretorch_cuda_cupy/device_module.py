"""``coretorch.cuda``: the device module, shaped like ``torch.cuda``.

Exists whether or not a GPU is usable: `is_available()` is then False, `device_count()` 0, and
the calls that need a device (streams, events, synchronize, current_device) raise a RuntimeError
with CuPy's reason.
"""

from __future__ import annotations

import warnings

from coretorch._absent_device import unavailable
from coretorch.tensor.legacy import legacy_types

from . import array_module as am
from .allocator import OutOfMemoryError, allocator
from .device_context import device, device_of, stream
from .device_info import (
    CudaDeviceProperties,
    get_device_capability,
    get_device_properties,
    is_bf16_supported,
    is_tf32_supported,
    mem_get_info,
)
from .streams import Event, Stream, current_stream, default_stream, require, synchronize

__all__ = [
    "is_available",
    "is_emulated",
    "is_initialized",
    "init",
    "device_count",
    "current_device",
    "set_device",
    "get_device_name",
    "get_device_capability",
    "get_device_properties",
    "is_bf16_supported",
    "is_tf32_supported",
    "mem_get_info",
    "device",
    "device_of",
    "stream",
    "synchronize",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_cached",
    "max_memory_cached",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_accumulated_memory_stats",
    "memory_stats",
    "memory_summary",
    "empty_cache",
    "ipc_collect",
    "Stream",
    "Event",
    "current_stream",
    "default_stream",
    "OutOfMemoryError",
    "CudaDeviceProperties",
    "unavailable_reason",
    "CUDAGraph",
    "graph",
    "make_graphed_callables",
    *legacy_types("cuda"),
]


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


def is_initialized() -> bool:
    """Whether CUDA can be used now (CuPy initializes lazily; coretorch needs no init step)."""
    return is_available()


def init() -> None:
    """Check that CUDA can be used (raises why not); nothing else needs initializing."""
    require("init()")


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
        raise RuntimeError(
            f"set_device(): invalid device ordinal {idx} (device_count() is {device_count()})"
        )
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


def seed_all() -> int:
    """Seed every cuda random stream from OS entropy (one seed for all) and return it."""
    return seed()


def _generator(device):
    from coretorch.random import generator_for

    return generator_for(f"cuda:{device}" if isinstance(device, int) else device)


def get_rng_state(device="cuda") -> dict:
    """The state of `device`'s random stream (a dict, as ``coretorch.get_rng_state``)."""
    return _generator(device).get_state()


def set_rng_state(new_state: dict, device="cuda") -> None:
    """Restore a state from `get_rng_state` on `device`'s random stream."""
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    """The states of every cuda device's random stream."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore the states from `get_rng_state_all`."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


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


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated: `reset_peak_memory_stats` (which it calls)."""
    warnings.warn(
        "coretorch.cuda.reset_max_memory_allocated now calls reset_peak_memory_stats, "
        "which resets all peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """Restart the peak counters (the allocator keeps no other accumulated counts)."""
    reset_peak_memory_stats(device)


def memory_cached(device=None) -> int:
    """Deprecated name of `memory_reserved`."""
    warnings.warn(
        "coretorch.cuda.memory_cached has been renamed to coretorch.cuda.memory_reserved",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of `max_memory_reserved`."""
    warnings.warn(
        "coretorch.cuda.max_memory_cached has been renamed to coretorch.cuda.max_memory_reserved",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A readable table of `memory_stats`."""
    rows = [(k, v) for k, v in sorted(memory_stats(device).items())]
    width = max(len(k) for k, _ in rows)
    lines = ["coretorch.cuda memory summary", "-" * (width + 16)]
    lines += [
        f"{k:<{width}}  {v:>12,}" if isinstance(v, int) else f"{k:<{width}}  {v!s:>12}"
        for k, v in rows
    ]
    return "\n".join(lines)


def ipc_collect() -> None:
    """coretorch does not share cuda memory between processes: nothing to collect."""
    require("ipc_collect()")


_NO_GRAPHS = (
    "coretorch cannot capture CUDA graphs (captured kernel launches replayed as one); "
    "run the program eagerly"
)
CUDAGraph = unavailable("coretorch.cuda.CUDAGraph", _NO_GRAPHS)
graph = unavailable("coretorch.cuda.graph", _NO_GRAPHS)
make_graphed_callables = unavailable("coretorch.cuda.make_graphed_callables", _NO_GRAPHS)

globals().update(legacy_types("cuda"))  # FloatTensor, LongTensor, ... on cuda
