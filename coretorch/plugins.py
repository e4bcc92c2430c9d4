"""Backend plugins: pluggy hook specs, discovery through entry points, and backend status.

A backend distribution declares an entry point in group ``coretorch.backends`` whose object
(module or instance) implements the hooks below. `load_backends()` runs on ``import coretorch``:
it registers each plugin in isolation, so a plugin that raises (any exception, SystemExit and
KeyboardInterrupt included) is recorded with its error, rolled back, and the others keep working.
``CORETORCH_BACKENDS=cpu,meta`` limits which plugins load; a plugin named there that fails raises
at import with its own error chained.

Plugins load one at a time in order of entry-point name (then distribution name). A backend
registers kernels only at the dispatch keys it owns: the keys it claims through its `registry`
(``registry.device_type`` or ``registry.dispatch_key``); a key belongs to the first backend that
claims it. Replacing another backend's kernels takes ``registry.library(KEY,
allow_override=True)`` from the plugin *and* the user's consent (``CORETORCH_ALLOW_OVERRIDES=NAME``
or `enable_overrides`); consented overrides are put in place after every plugin has loaded, so
they win over the backend they replace whatever the names, and a warning says so once.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import os
import signal
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

import pluggy

from ._suggest import did_you_mean

if TYPE_CHECKING:
    from .kernel_snapshot import KernelSnapshot

__all__ = [
    "hookspec",
    "hookimpl",
    "BackendInfo",
    "backends",
    "load_backends",
    "BackendLoadError",
    "BackendWarning",
    "enable_overrides",
    "why_not_loaded",
    "GROUP",
    "ALLOW_OVERRIDES_ENV",
    "SLOW_LOAD_SECONDS",
]

GROUP = "coretorch.backends"
ALLOW_OVERRIDES_ENV = "CORETORCH_ALLOW_OVERRIDES"
SLOW_LOAD_SECONDS = 1.0  # a backend that takes longer to load gets a BackendWarning
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
    def coretorch_backend_available(self) -> "tuple[bool, str]":  # type: ignore[empty-body]
        """Whether the hardware can be used now, and why not (``(False, "no CUDA driver")``).
        An unavailable backend stays registered (its device type exists) but reports why.
        An available one may return a note shown beside "loaded" (``(True, "emulated: ...")``)."""


class BackendLoadError(RuntimeError):
    """A backend named in CORETORCH_BACKENDS failed to load."""


class BackendWarning(UserWarning):
    """A backend took long to load, or replaces kernels of another backend."""


@dataclass
class BackendInfo:
    """What `python -m coretorch` shows about one discovered backend."""

    name: str
    entry_point: str
    distribution: str = ""
    version: str = ""
    status: str = "not loaded"  # loaded | failed | unavailable | skipped
    reason: str = ""
    device_types: list[str] = field(default_factory=list)
    dispatch_keys: list[str] = field(default_factory=list)
    error: BaseException | None = None
    traceback: str = ""
    load_time: float = 0.0  # seconds to import the plugin and run its hooks
    # kernels of other backends' keys this one asked to replace (allow_override=True)
    override_requests: list = field(default_factory=list, repr=False)
    overrides_enabled: bool = False  # the user consented and the requests are in place

    @property
    def overrides(self) -> list[str]:
        """The other backends' kernels this one replaces (or asks to, see `overrides_enabled`),
        as ``"cpu.add"``."""
        return [change.label() for change in self.override_requests]

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
    BackendInfo. The dispatch keys it claims here are the only keys it may register kernels at."""

    def __init__(self, info: BackendInfo):
        self._info = info
        self.libraries: list = []
        self.override_keys: set = set()  # keys of others it asked to override kernels at

    def dispatch_key(self, name: str):
        """Claim (allocating it the first time) the backend dispatch key called `name`
        (e.g. ``"CPU"``); a key another backend claimed first raises RuntimeError."""
        from .dispatch import DispatchKey

        owner = _key_owners.get(name)
        if owner is not None and owner != self._info.name:
            raise RuntimeError(
                f"backend '{self._info.name}' cannot claim dispatch key '{name}': it belongs to "
                f"backend '{owner}', and a backend registers kernels only at its own keys. "
                f"Use a key name of your own, or replace '{owner}' kernels with "
                f"registry.library('{name}', allow_override=True) (applied only when the user "
                f"sets {ALLOW_OVERRIDES_ENV}={self._info.name})"
            )
        key = DispatchKey.backend(name)
        _key_owners[name] = self._info.name
        if name not in self._info.dispatch_keys:
            self._info.dispatch_keys.append(name)
        return key

    def device_type(self, name: str, dispatch_key: str, allocator, **kwargs):
        """Register device type `name` served by `dispatch_key` (claimed for this backend);
        kwargs go to `DeviceType`."""
        from .device import DeviceType, register_device_type
        from .tensor.impl import device_key_bits

        key = self.dispatch_key(dispatch_key)
        entry = DeviceType(
            name=name, dispatch_key=key, allocator=allocator, backend=self._info.name, **kwargs
        )
        _tried_device_types.setdefault(name, self._info.name)
        register_device_type(entry)
        device_key_bits[name] = 1 << key.bit
        self._info.device_types.append(name)
        return entry

    def use_cpu_fallback(self, dispatch_key: str) -> None:
        """Run every op this backend has no kernel for through the core's boxed CPU fallback."""
        from .ops.cpu_fallback import cpu_fallback

        self.library(dispatch_key).fallback(cpu_fallback)

    def library(self, dispatch_key: str, *, allow_override: bool = False):
        """A `Library("aten", "IMPL", dispatch_key)` for registering this backend's kernels at a
        key it owns (claimed here if still free).

        With ``allow_override=True`` the key may be another backend's (``"CPU"``) or an alias key
        (``"CompositeImplicitAutograd"``): what is registered there is set aside as an override
        request, shown by ``python -m coretorch``, and put in place only when the user allows it
        (``CORETORCH_ALLOW_OVERRIDES=<this backend>`` or `enable_overrides`).
        """
        from .dispatch import DispatchKey
        from .library import Library

        if allow_override and _key_owners.get(dispatch_key) != self._info.name:
            found = DispatchKey._by_name.get(dispatch_key)
            # a key nobody allocated yet is allocated but left unclaimed for its real owner
            key = found if found is not None else DispatchKey.backend(dispatch_key)
            self.override_keys.add(key)
        else:
            key = self.dispatch_key(dispatch_key)
        lib = Library("aten", "IMPL", key)
        self.libraries.append(lib)
        return lib


_backends: dict[str, BackendInfo] = {}
_manager: pluggy.PluginManager | None = None
_key_owners: dict[str, str] = {}  # backend dispatch key name -> backend that claimed it
_tried_device_types: dict[str, str] = {}  # device type -> the backend that registered it first


def backends() -> dict[str, BackendInfo]:
    """Every discovered backend by name, in load order, with its status."""
    return dict(_backends)


def why_not_loaded(name: str) -> str | None:
    """Why backend or device type `name` cannot be used, when a discovered backend explains it
    (``"backend 'toy' failed to load: RuntimeError: ..."``); None when none does."""
    info = _backends.get(name) or _backends.get(_tried_device_types.get(name, ""))
    if info is None:
        return None
    if info.status == "failed":
        return (
            f"backend '{info.name}' failed to load: {info.reason} (`python -m coretorch` "
            f"shows the traceback)"
        )
    if info.status == "skipped":
        return f"backend '{info.name}' is installed but was not loaded: {info.reason}"
    if info.status == "unavailable":
        return f"backend '{info.name}' is unavailable: {info.reason}"
    if info.status != "loaded":
        return f"backend '{info.name}' is {info.status}"
    if name not in info.device_types:
        return (
            f"backend '{info.name}' is loaded but provides no device type '{name}' "
            f"(its device types: {', '.join(info.device_types) or 'none'})"
        )
    return None


def _wanted() -> set[str] | None:
    raw = os.environ.get("CORETORCH_BACKENDS", "").strip()
    if not raw:
        return None
    return {x.strip() for x in raw.split(",") if x.strip()}


def _load_order(eps) -> list[md.EntryPoint]:
    """Entry points by name, then distribution name: the order does not depend on sys.path."""
    return sorted(eps, key=lambda e: (e.name, e.dist.name if e.dist else "", e.value))


def load_backends() -> dict[str, BackendInfo]:
    """Discover and register every plugin of group `coretorch.backends` (once per process)."""
    global _manager
    if _manager is not None:
        return backends()
    _manager = pluggy.PluginManager(PROJECT)
    _manager.add_hookspecs(BackendSpec)
    wanted = _wanted()
    failures: list[BackendInfo] = []
    with _watch_sigint() as ctrl_c:
        for ep in _load_order(md.entry_points(group=GROUP)):
            info = BackendInfo(name=ep.name, entry_point=ep.value)
            if ep.dist is not None:
                info.distribution, info.version = ep.dist.name, ep.dist.version
            if ep.name in _backends:
                _warn(
                    f"two installed distributions provide a coretorch backend named "
                    f"'{ep.name}': '{_backends[ep.name].distribution}' (used) and "
                    f"'{info.distribution}' (ignored); uninstall one of them"
                )
                continue
            _backends[ep.name] = info
            if wanted is not None and ep.name not in wanted:
                info.status, info.reason = "skipped", "not in CORETORCH_BACKENDS"
                continue
            _load_one(ep, info, ctrl_c)
            if info.load_time > SLOW_LOAD_SECONDS:
                _warn(
                    f"backend '{info.name}' took {info.load_time:.1f} s to load; "
                    f"`import coretorch` waits for every installed backend "
                    f"(CORETORCH_BACKENDS limits which load)"
                )
            if info.status == "failed":
                failures.append(info)
    if wanted is not None:
        missing = wanted - set(_backends)
        if missing:
            hints = "".join(did_you_mean(m, _backends) for m in sorted(missing))
            raise BackendLoadError(
                f"CORETORCH_BACKENDS names {', '.join(sorted(missing))}, which "
                f"no installed plugin provides (installed: "
                f"{', '.join(sorted(_backends)) or 'none'}).{hints}"
            )
        for info in failures:
            raise BackendLoadError(
                f"backend '{info.name}' named in CORETORCH_BACKENDS failed to load: {info.reason}"
            ) from info.error
    _enable_overrides_from_env()
    return backends()


def _warn(message: str) -> None:
    warnings.warn(message, BackendWarning, stacklevel=3)


@contextlib.contextmanager
def _watch_sigint() -> Iterator[Callable[[], bool]]:
    """Tell a Ctrl-C the user pressed from a KeyboardInterrupt that plugin code raised: yields a
    function that says whether SIGINT arrived since entering. Only a Python-level SIGINT handler
    (the default one included) can raise KeyboardInterrupt, so only such a handler is wrapped."""
    hit = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum, frame):
        hit.append(signum)
        if callable(previous):  # installed only then
            previous(signum, frame)

    if callable(previous):
        signal.signal(signal.SIGINT, on_sigint)
    try:
        yield lambda: bool(hit)
    finally:
        if callable(previous) and signal.getsignal(signal.SIGINT) is on_sigint:
            signal.signal(signal.SIGINT, previous)  # unless a plugin installed its own


def _load_one(ep: md.EntryPoint, info: BackendInfo, ctrl_c: Callable[[], bool]) -> None:
    assert _manager is not None, "load_backends makes the plugin manager first"
    snapshot = _registration_snapshot()
    registry = BackendRegistry(info)
    start = time.perf_counter()
    try:
        obj = ep.load()
        plugin = obj() if isinstance(obj, type) else obj
        _manager.register(plugin, name=ep.name)
        # call this plugin's hooks only (the others were registered before it)
        others = [p for p in _manager.get_plugins() if p is not plugin]
        _manager.subset_hook_caller("coretorch_register_backend", remove_plugins=others)(
            registry=registry
        )
        avail = _manager.subset_hook_caller("coretorch_backend_available", remove_plugins=others)()
        _check_ownership(info, registry, snapshot.kernels)
        ok, why = avail[0] if avail else (True, "")
        # a loaded backend may still say something about itself ("emulated: ...")
        info.status, info.reason = ("loaded", why or "") if ok else ("unavailable", why)
    except BaseException as e:  # noqa: B036  a broken plugin must never break `import coretorch`
        info.status, info.reason = "failed", _last_line(e)
        info.error, info.traceback = e, traceback.format_exc()
        _rollback(snapshot, info, registry)
        if _manager.has_plugin(ep.name):
            _manager.unregister(name=ep.name)
        if isinstance(e, KeyboardInterrupt) and ctrl_c():
            raise  # the user pressed Ctrl-C: stop importing, as Python does
    finally:
        info.load_time = time.perf_counter() - start


def _last_line(e: BaseException) -> str:
    """The last line of `e`'s traceback (``"SystemExit: 3"``, ``"KeyboardInterrupt"``)."""
    lines = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()
    return lines[-1] if lines else type(e).__name__


def _check_ownership(info: BackendInfo, registry: BackendRegistry, snapshot) -> None:
    """Refuse kernels registered at keys the backend does not own; set aside (revert until the
    user allows them) those it registered through ``library(key, allow_override=True)``."""
    from .dispatch import DispatchKey

    own = {DispatchKey.get(k) for k in info.dispatch_keys if _key_owners.get(k) == info.name}
    foreign: list = []
    for change in snapshot.changes():
        if change.key in own:
            continue
        asked = change.key in registry.override_keys
        (info.override_requests if asked else foreign).append(change)
    if foreign:
        shown = ", ".join(c.label() for c in foreign[:8]) + (", ..." if len(foreign) > 8 else "")
        raise RuntimeError(
            f"backend '{info.name}' registered {len(foreign)} kernel(s) at dispatch keys it does "
            f"not own: {shown}. A backend registers kernels only at the keys of its own device "
            f"types (registry.device_type / registry.dispatch_key); to replace another backend's "
            f"kernels use registry.library(KEY, allow_override=True)"
        )
    for change in info.override_requests:
        change.revert()


@dataclass
class _Snapshot:
    kernels: "KernelSnapshot"
    device_types: set[str]


def _registration_snapshot() -> _Snapshot:
    """What is registered now (kernels, fallbacks, ops, device types), for `_rollback`."""
    from .device import device_types
    from .kernel_snapshot import KernelSnapshot

    return _Snapshot(KernelSnapshot(), set(device_types()))


def _rollback(
    snapshot: _Snapshot, info: BackendInfo, registry: BackendRegistry | None = None
) -> None:
    """Undo everything registered since `snapshot` (kernels, ops, fallbacks, device types) and
    `info`'s key claims, whatever `registry` was used: nothing half-loaded is used."""
    snapshot.kernels.restore()
    from .device import device_types, unregister_device_type
    from .tensor.impl import device_key_bits

    for name in set(device_types()) - snapshot.device_types:
        unregister_device_type(name)
        device_key_bits.pop(name, None)
    for key, owner in list(_key_owners.items()):
        if owner == info.name:
            del _key_owners[key]
    info.device_types.clear()
    info.override_requests.clear()


# ---- overrides -------------------------------------------------------------------------------


def _enable_overrides_from_env() -> None:
    raw = os.environ.get(ALLOW_OVERRIDES_ENV, "")
    names = [x.strip() for x in raw.split(",") if x.strip()]
    for name in names:
        if name == "*":
            for info in _backends.values():
                if info.status == "loaded" and info.override_requests:
                    _apply_overrides(info, ALLOW_OVERRIDES_ENV)
        elif name not in _backends:
            _warn(
                f"{ALLOW_OVERRIDES_ENV} names '{name}', which is not an installed backend."
                f"{did_you_mean(name, _backends)}"
            )
        elif _backends[name].status == "loaded":
            _apply_overrides(_backends[name], ALLOW_OVERRIDES_ENV)
        else:
            _warn(f"{ALLOW_OVERRIDES_ENV} names '{name}': {why_not_loaded(name)}")


def enable_overrides(name: str) -> list[str]:
    """Let loaded backend `name` replace the other backends' kernels it asked to replace
    (``registry.library(KEY, allow_override=True)``), from now on. Warns once, the first time.

    Returns what it replaces, as ``["cpu.add", ...]``. ``CORETORCH_ALLOW_OVERRIDES=name`` (or
    ``*`` for every backend) does the same at ``import coretorch``.
    """
    info = _backends.get(name)
    if info is None:
        raise ValueError(
            f"enable_overrides(): no backend named '{name}' is installed "
            f"(installed: {', '.join(_backends) or 'none'})."
            f"{did_you_mean(name, _backends)}"
        )
    if info.status != "loaded":
        raise RuntimeError(f"enable_overrides(): {why_not_loaded(name)}")
    _apply_overrides(info, "coretorch.plugins.enable_overrides()")
    return info.overrides


def _apply_overrides(info: BackendInfo, consent: str) -> None:
    if info.overrides_enabled:
        return
    info.overrides_enabled = True
    if not info.override_requests:
        return
    for change in info.override_requests:
        change.apply()
    _warn(
        f"backend '{info.name}' replaces kernels of other backends: "
        f"{', '.join(info.overrides)} (allowed by {consent})"
    )
