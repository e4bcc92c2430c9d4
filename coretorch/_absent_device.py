"""The API of a device module (``coretorch.cuda``, ``coretorch.xpu``, ``coretorch.mps``) for a
device type no loaded backend provides. It answers as PyTorch does on a build without that
device: `is_available()` is False, `device_count()` and the memory counters 0, seeding and
emptying caches do nothing; every call that needs the device raises a RuntimeError saying why.
"""

from __future__ import annotations

import collections
import types
from typing import Callable

_FALSE = (
    "is_available",
    "is_bf16_supported",
    "is_tf32_supported",
    "is_initialized",
    "is_current_stream_capturing",
)
_ZERO = (
    "device_count",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_cached",
    "max_memory_cached",
)
_NOOP = (
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "empty_cache",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "reset_accumulated_memory_stats",
    "set_rng_state_all",
)
_RAISE = (
    "current_device",
    "set_device",
    "get_device_name",
    "get_device_capability",
    "get_device_properties",
    "synchronize",
    "init",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "current_stream",
    "default_stream",
    "set_stream",
    "stream",
    "mem_get_info",
    "ipc_collect",
    "memory_summary",
    "utilization",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "can_device_access_peer",
    "Stream",
    "Event",
    "StreamContext",
    "device",
    "device_of",
    "graph",
    "make_graphed_callables",
)


def unavailable(qualname: str, why: str) -> Callable:
    """A function named after `qualname` that raises ``RuntimeError(f"{qualname}(): {why}")``."""

    def fn(*args, **kwargs):
        raise RuntimeError(f"{qualname}(): {why}")

    fn.__name__ = fn.__qualname__ = qualname.rsplit(".", 1)[-1]
    fn.__doc__ = f"Not available: {why}."
    return fn


def _constant(name: str, value_factory: Callable) -> Callable:
    def fn(*args, **kwargs):
        return value_factory()

    fn.__name__ = fn.__qualname__ = name
    return fn


def absent_device_namespace(
    device_type: str, why: str, *, raising: tuple = (), extra_raising: tuple = ()
) -> dict:
    """Names of ``coretorch.<device_type>`` when no backend serves it: see the module doc.
    `raising` moves names from the quiet groups to the raising one (torch.mps raises where
    torch.cuda stays quiet); `extra_raising` adds device-specific names that raise."""
    prefix = f"coretorch.{device_type}."
    ns: dict = {}
    for names, factory in ((_FALSE, lambda: False), (_ZERO, lambda: 0), (_NOOP, lambda: None)):
        for n in names:
            ns[n] = _constant(n, factory)
    ns["memory_stats"] = _constant("memory_stats", collections.OrderedDict)
    ns["memory_stats_as_nested_dict"] = _constant("memory_stats_as_nested_dict", dict)
    ns["get_arch_list"] = _constant("get_arch_list", list)
    ns["get_rng_state_all"] = _constant("get_rng_state_all", list)
    ns["get_gencode_flags"] = _constant("get_gencode_flags", str)
    graph = f"{device_type.upper()}Graph"  # CUDAGraph, XPUGraph
    for n in _RAISE + tuple(raising) + tuple(extra_raising) + (graph,):
        ns[n] = unavailable(prefix + n, why)
    return ns


def absent_device_module(device_type: str, why: str, **kwargs) -> types.ModuleType:
    """A module object holding `absent_device_namespace` and the legacy tensor types of the
    device (``coretorch.cuda.FloatTensor``: constructing one raises why), for ``coretorch.cuda``
    without a cuda backend."""
    from .tensor.legacy import legacy_types

    m = types.ModuleType(
        f"coretorch.{device_type}", f"``coretorch.{device_type}``: not available ({why})."
    )
    m.__dict__.update(absent_device_namespace(device_type, why, **kwargs))
    m.__dict__.update(legacy_types(device_type))
    return m
