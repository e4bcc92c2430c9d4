"""Process-group backends as plugins: entry-point group ``coretorch.distributed_backends``.

An entry point's name is the backend's name (``mpi``, ``nccl``); its object (a module or an
instance) provides:

- ``device_types``: the device types it serves, e.g. ``("cpu",)``;
- ``available() -> (bool, str)``: whether it can be used here, and why not (or a note);
- ``establishes_world``: True if it can find the processes of a job by itself (MPI does);
  a backend that cannot (NCCL) is handed one that can as ``bootstrap``;
- ``create(*, rank, world_size, timeout, bootstrap) -> Backend`` for the world group.

Discovery is lazy (the first `init_process_group` or ``python -m coretorch``) and isolated: a
plugin that fails to load is recorded with its error and the others stay usable.
"""

from __future__ import annotations

import importlib.metadata as md
import traceback
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GROUP", "DistBackendInfo", "distributed_backends"]

GROUP = "coretorch.distributed_backends"


@dataclass
class DistBackendInfo:
    """What `python -m coretorch` shows about one discovered process-group backend."""

    name: str
    entry_point: str
    distribution: str = ""
    version: str = ""
    status: str = "not loaded"  # available | unavailable | failed
    reason: str = ""
    device_types: list[str] = field(default_factory=list)
    plugin: Any = None
    traceback: str = ""


_found: dict[str, DistBackendInfo] | None = None


def distributed_backends() -> dict[str, DistBackendInfo]:
    """Every installed process-group backend by name, with its status (discovered once)."""
    global _found
    if _found is None:
        found = {}
        for ep in sorted(md.entry_points(group=GROUP), key=lambda e: e.name):
            info = DistBackendInfo(name=ep.name, entry_point=ep.value)
            if ep.dist is not None:
                info.distribution, info.version = ep.dist.name, ep.dist.version
            _load(ep, info)
            found[ep.name] = info
        _found = found
    return dict(_found)


def _load(ep: md.EntryPoint, info: DistBackendInfo) -> None:
    try:
        obj = ep.load()
        plugin = obj() if isinstance(obj, type) else obj
        info.device_types = list(plugin.device_types)
        ok, why = plugin.available()
        info.plugin = plugin
        info.status, info.reason = ("available" if ok else "unavailable"), why
    except Exception as e:  # a broken plugin must not break the others
        info.status, info.reason = "failed", f"{type(e).__name__}: {e}"
        info.traceback = traceback.format_exc()
