"""Backend plugins: pluggy hook specs, discovery through entry points, and backend status.

A backend distribution declares an entry point in group ``coretorch.backends`` whose object
(module or instance) implements the hooks below. `load_backends()` runs on ``import coretorch``:
it registers each plugin in isolation, so a plugin that raises is recorded with its error and the
others keep working. ``CORETORCH_BACKENDS=cpu,meta`` limits which plugins load; a plugin named
there that fails raises at import with its own error chained.
"""
from __future__ import annotations

import importlib.metadata as md
import os
import traceback
from dataclasses import dataclass, field
from typing import Any

import pluggy

__all__ = ["hookspec", "hookimpl", "BackendInfo", "backends", "load_backends",
           "BackendLoadError", "GROUP"]

GROUP = "coretorch.backends"
PROJECT = "coretorch"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class BackendSpec:
    """The hooks a backend implements. The entry point's name is the backend's name (the one
    CORETORCH_BACKENDS uses); `coretorch_register_backend` is required, the rest optional."""

    @hookspec
    def coretorch_register_backend(self, registry: "BackendRegistry") -> None:
        """Register the device type, allocator and kernels: ``registry.device_type(...)``,
        ``registry.library()`` for kernels. Keep it cheap: compile kernels lazily."""

    @hookspec
    def coretorch_backend_available(self) -> "tuple[bool, str]":
        """Whether the hardware can be used now, and why not (``(False, "no CUDA driver")``).
        An unavailable backend stays registered (its device type exists) but reports why.
        An available one may return a note shown beside "loaded" (``(True, "emulated: ...")``)."""


class BackendLoadError(RuntimeError):
    """A backend named in CORETORCH_BACKENDS failed to load."""


@dataclass
class BackendInfo:
    """What `python -m coretorch` shows about one discovered backend."""

    name: str
    entry_point: str
    distribution: str = ""
    version: str = ""
    status: str = "not loaded"      # loaded | failed | unavailable | skipped
    reason: str = ""
    device_types: list[str] = field(default_factory=list)
    dispatch_keys: list[str] = field(default_factory=list)
    error: BaseException | None = None
    traceback: str = ""

    def ops_implemented(self) -> int:
        """How many operators have a kernel registered directly for this backend's key(s)."""
        from .dispatch import DispatchKey, all_operators
        keys = [DispatchKey.get(k) for k in self.dispatch_keys]
        return sum(1 for op in all_operators().values() if any(op.has_kernel(k) for k in keys))

    def primitives_native(self) -> int:
        """How many of the core's primitive ops this backend implements natively."""
        from .dispatch import DispatchKey
        from .ops import REGISTRY, primitives
        keys = [DispatchKey.get(k) for k in self.dispatch_keys]
        return sum(1 for name in primitives() if any(REGISTRY[name].op.has_kernel(k) for k in keys))

    def has_fallback(self) -> bool:
        """Whether ops without a kernel here run through a boxed fallback (e.g. the CPU one)."""
        from .dispatch import DispatchKey
        from .dispatch.operator import _fallbacks
        return any(DispatchKey.get(k) in _fallbacks for k in self.dispatch_keys)


class BackendRegistry:
    """Handed to `coretorch_register_backend`: what a backend may register, recorded for its
    BackendInfo."""

    def __init__(self, info: BackendInfo):
        self._info = info
        self.libraries: list = []

    def dispatch_key(self, name: str):
        """Allocate (or get) the backend dispatch key called `name` (e.g. ``"CPU"``)."""
        from .dispatch import DispatchKey
        key = DispatchKey.backend(name)
        if name not in self._info.dispatch_keys:
            self._info.dispatch_keys.append(name)
        return key

    def device_type(self, name: str, dispatch_key: str, allocator, **kwargs):
        """Register device type `name` served by `dispatch_key`; kwargs go to `DeviceType`."""
        from .device import DeviceType, register_device_type
        from .tensor.impl import device_key_bits
        key = self.dispatch_key(dispatch_key)
        entry = DeviceType(name=name, dispatch_key=key, allocator=allocator,
                           backend=self._info.name, **kwargs)
        register_device_type(entry)
        device_key_bits[name] = 1 << key.bit
        self._info.device_types.append(name)
        return entry

    def use_cpu_fallback(self, dispatch_key: str) -> None:
        """Run every op this backend has no kernel for through the core's boxed CPU fallback."""
        from .ops.cpu_fallback import cpu_fallback
        self.library(dispatch_key).fallback(cpu_fallback)

    def library(self, dispatch_key: str):
        """A `Library("aten", "IMPL", dispatch_key)` for registering this backend's kernels."""
        from .library import Library
        self.dispatch_key(dispatch_key)
        lib = Library("aten", "IMPL", dispatch_key)
        self.libraries.append(lib)
        return lib


_backends: dict[str, BackendInfo] = {}
_manager: pluggy.PluginManager | None = None


def backends() -> dict[str, BackendInfo]:
    """Every discovered backend by name, with its status."""
    return dict(_backends)


def _wanted() -> set[str] | None:
    raw = os.environ.get("CORETORCH_BACKENDS", "").strip()
    if not raw:
        return None
    return {x.strip() for x in raw.split(",") if x.strip()}


def load_backends() -> dict[str, BackendInfo]:
    """Discover and register every plugin of group `coretorch.backends` (once per process)."""
    global _manager
    if _manager is not None:
        return backends()
    _manager = pluggy.PluginManager(PROJECT)
    _manager.add_hookspecs(BackendSpec)
    wanted = _wanted()
    failures: list[BackendInfo] = []
    for ep in sorted(md.entry_points(group=GROUP), key=lambda e: e.name):
        info = BackendInfo(name=ep.name, entry_point=ep.value)
        if ep.dist is not None:
            info.distribution, info.version = ep.dist.name, ep.dist.version
        _backends[ep.name] = info
        if wanted is not None and ep.name not in wanted:
            info.status, info.reason = "skipped", "not in CORETORCH_BACKENDS"
            continue
        _load_one(ep, info)
        if info.status == "failed":
            failures.append(info)
    if wanted is not None:
        missing = wanted - set(_backends)
        if missing:
            raise BackendLoadError(f"CORETORCH_BACKENDS names {', '.join(sorted(missing))}, which "
                                   f"no installed plugin provides (installed: "
                                   f"{', '.join(sorted(_backends)) or 'none'})")
        for info in failures:
            raise BackendLoadError(f"backend '{info.name}' named in CORETORCH_BACKENDS failed to "
                                   f"load: {info.reason}") from info.error
    return backends()


def _load_one(ep: md.EntryPoint, info: BackendInfo) -> None:
    snapshot = _registration_snapshot()
    registry = BackendRegistry(info)
    try:
        obj = ep.load()
        plugin = obj() if isinstance(obj, type) else obj
        _manager.register(plugin, name=ep.name)
        # call this plugin's hooks only (the others were registered before it)
        others = [p for p in _manager.get_plugins() if p is not plugin]
        _manager.subset_hook_caller("coretorch_register_backend",
                                    remove_plugins=others)(registry=registry)
        avail = _manager.subset_hook_caller("coretorch_backend_available",
                                            remove_plugins=others)()
        ok, why = avail[0] if avail else (True, "")
        # a loaded backend may still say something about itself ("emulated: ...")
        info.status, info.reason = ("loaded", why or "") if ok else ("unavailable", why)
    except Exception as e:  # a broken plugin must never break `import coretorch`
        info.status, info.reason = "failed", f"{type(e).__name__}: {e}"
        info.error, info.traceback = e, traceback.format_exc()
        _rollback(snapshot, info, registry)
        if _manager.has_plugin(ep.name):
            _manager.unregister(name=ep.name)


def _registration_snapshot() -> Any:
    from .device import device_types
    return set(device_types())


def _rollback(snapshot, info: BackendInfo, registry: BackendRegistry) -> None:
    """Undo what a failed plugin registered (kernels, device types): nothing half-loaded is used."""
    for lib in registry.libraries:
        lib._destroy()
    from .device import device_types, unregister_device_type
    from .tensor.impl import device_key_bits
    for name in set(device_types()) - snapshot:
        unregister_device_type(name)
        device_key_bits.pop(name, None)
    info.device_types.clear()
