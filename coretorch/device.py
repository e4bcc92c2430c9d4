"""`coretorch.device`, the default-device context, and the registry of device types.

A backend plugin registers its device type (name, dispatch key, allocator, module) here; the core
itself knows no device type except through this registry.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = [
    "device",
    "DeviceType",
    "register_device_type",
    "device_types",
    "get_device_type",
    "set_default_device",
    "get_default_device",
]

# names PyTorch users write; accepted even when no backend for them is installed
_WELL_KNOWN = ("cpu", "cuda", "meta")


class device:
    """A device: a type (``"cpu"``, ``"cuda"``, ``"meta"``, a plugin's) and an optional index.

    ``device("cuda:1")``, ``device("cuda", 1)``. Instances are interned, so ``==`` is cheap.
    Used as a context manager it sets the default device of factory functions in this thread.

    Raises:
        RuntimeError: for a string that is not ``type`` or ``type:index``.
        ValueError: when the index is given twice.

    Examples:
        >>> import coretorch
        >>> d = coretorch.device("cuda:1")
        >>> d, d.type, d.index
        (device(type='cuda', index=1), 'cuda', 1)
        >>> coretorch.device("cpu") == coretorch.device("cpu")
        True
        >>> with coretorch.device("meta"):
        ...     coretorch.zeros(2).device
        device(type='meta')
        >>> coretorch.device("cuda:x")
        Traceback (most recent call last):
            ...
        RuntimeError: Invalid device string: 'cuda:x'
    """

    __slots__ = ("type", "index", "_str", "__weakref__")
    type: str
    index: int | None
    _str: str
    _interned: dict = {}

    def __new__(cls, type: "str | device", index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): index given twice")
            return type
        key = (type, index)
        try:
            found = cls._interned.get(key)
        except TypeError:  # unhashable: reported as a bad type below
            found = None
        if found is not None:
            return found
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or device, got {type.__class__.__name__}")
        if not type:
            raise RuntimeError("device(): Device string must not be empty")
        name, idx = type, index
        if ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"device(): type (string) must not include an index because "
                    f"index was passed explicitly: {type}"
                )
            name, _, num = type.partition(":")
            if not num.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            idx = int(num)
        if name not in _WELL_KNOWN and name not in _registry:
            raise RuntimeError(_unknown_type_message(name))
        if idx is not None and (not isinstance(idx, int) or idx < 0):
            raise RuntimeError(f"Device index must not be negative, got {idx}")
        self = object.__new__(cls)
        self.type, self.index = name, idx
        self._str = name if idx is None else f"{name}:{idx}"
        cls._interned[key] = self
        return self

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self._str,))

    def __enter__(self) -> "device":
        _default.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _default.stack.pop()


def _holds_no_data(t: Any, *rest: Any) -> Any:
    """The `read_numpy` / `write_numpy` of a device type without them (a shape-only one)."""
    raise RuntimeError(
        f"tensors on '{t.device}' hold no data: only their shapes, dtypes and devices exist"
    )


@dataclass
class DeviceType:
    """What a backend registers for its device type."""

    name: str
    dispatch_key: Any  # a DispatchKey allocated for this backend
    allocator: Any  # object with allocate(nbytes, device) / stats()
    backend: str = ""  # the plugin's distribution name
    module: Any = None  # exposed as coretorch.<name> when given
    is_available: Callable[[], bool] = lambda: True
    device_count: Callable[[], int] = lambda: 1
    # data movement, all a backend needs for copies to/from any other device:
    read_numpy: Callable = _holds_no_data  # (tensor) -> numpy array of its values (cpu: a view)
    write_numpy: Callable = _holds_no_data  # (tensor, numpy array of the same shape) -> None
    has_data: bool = True  # False for shape-only devices (meta)
    wrap_numpy: Callable | None = None  # (numpy array) -> tensor sharing its memory (cpu only)
    extras: dict = field(default_factory=dict)


_registry: dict[str, DeviceType] = {}


def register_device_type(entry: DeviceType) -> None:
    """Register a device type; a backend calls this from its `register_backend` hook."""
    if entry.name in _registry and _registry[entry.name].backend != entry.backend:
        raise RuntimeError(
            f"device type '{entry.name}' is already registered by backend "
            f"'{_registry[entry.name].backend}'"
        )
    _registry[entry.name] = entry


def unregister_device_type(name: str) -> None:
    """Remove the backend registered for device type `name` (no-op when none is)."""
    _registry.pop(name, None)


def device_types() -> dict[str, DeviceType]:
    """Registered device types by name."""
    return dict(_registry)


def get_device_type(dev: "device | str") -> DeviceType:
    """The registered backend entry for the device type of `dev`.

    Raises:
        RuntimeError: when no backend for that device type is loaded (the message says why).
    """
    name = dev.type if isinstance(dev, device) else device(dev).type
    entry = _registry.get(name)
    if entry is None:
        from .plugins import why_not_loaded

        why = why_not_loaded(name)
        if why:
            raise RuntimeError(f"device type '{name}' cannot be used: {why}")
        raise RuntimeError(
            f"no backend for device type '{name}' is loaded "
            f"(loaded: {', '.join(sorted(_registry)) or 'none'}); "
            f"`python -m coretorch` lists backends and why any failed"
        )
    return entry


def _unknown_type_message(name: str) -> str:
    """Why `name` is not a device type: the backend that should provide it failed to load (or was
    not selected), or a likely typo."""
    from ._suggest import did_you_mean
    from .plugins import backends, why_not_loaded

    why = why_not_loaded(name)
    if why:
        return f"device type '{name}' cannot be used: {why}"
    known = sorted(set(_WELL_KNOWN) | set(_registry))
    not_loaded = [n for n, i in backends().items() if i.status not in ("loaded", "unavailable")]
    hint = did_you_mean(name, known + not_loaded)
    msg = f"Expected one of {', '.join(known)} device type at start of device string: {name}"
    return f"{msg}.{hint}" if hint else msg


class _DefaultDevice(threading.local):
    def __init__(self):
        self.stack: list[device] = []
        self.base: device | None = None


_default = _DefaultDevice()


def set_default_device(dev: "device | str | None") -> None:
    """Set the default device of factory functions (``None`` resets to cpu)."""
    _default.base = None if dev is None else device(dev)


def get_default_device() -> device:
    """The device factories use when none is given (``set_default_device`` / ``with device``)."""
    stack = _default.stack
    if stack:
        return stack[-1]
    return _default.base or _CPU


_CPU = device("cpu")
