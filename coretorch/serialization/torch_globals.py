"""PyTorch's pickle vocabulary, and what each name means in coretorch.

A ``torch.save`` pickle names PyTorch globals (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``collections.OrderedDict`` ...). Loading maps each to
a coretorch implementation here, so PyTorch checkpoints load without PyTorch installed; saving
writes the same names, so PyTorch reads coretorch's pickled checkpoints.

`find_global` is the one place a pickle's global is resolved: with ``weights_only`` it allows
only this vocabulary and the user's safe globals (PyTorch's rules and messages); without it,
other ``torch.X`` names map to ``coretorch.X`` and the rest import normally.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import importlib
import pickle
from collections import Counter, OrderedDict
from contextvars import ContextVar
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from ..device import device as _device
from ..nn.parameter import Parameter
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from .context import LoadContext
from .errors import corrupt, unsupported
from .safe_globals import user_allowed_globals
from .storages import base_from_array, finish, meta_tensor, view_of
from .stored_types import BY_NAME, STORAGE_CLASSES, StoredType, widened

__all__ = [
    "active",
    "StorageType",
    "TorchDtype",
    "StorageRef",
    "find_global",
    "TORCH_GLOBALS",
    "is_allowed_value",
    "unsupported_global_message",
]

active: ContextVar[LoadContext] = ContextVar("coretorch_load_context")

BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class StorageType:
    """A PyTorch storage class named in a pickle (``torch.FloatStorage``); UntypedStorage holds
    bytes."""

    def __init__(self, name: str, stored: StoredType | None):
        self.name, self.stored = name, stored

    @property
    def untyped(self) -> bool:
        """True for an UntypedStorage (bytes whose dtype is given by the tensor using them)."""
        return self.stored is None

    def __repr__(self) -> str:
        return f"StorageType({self.name})"


class TorchDtype:
    """A PyTorch dtype that coretorch does not have (``torch.bfloat16``), as found in a pickle."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class StorageRef:
    """A storage a pickle refers to; `loader(ref, stored)` gives its 1-D base as `stored`
    elements (read once). ``start``/``length`` select a legacy storage view."""

    __slots__ = ("key", "stype", "numel", "location", "loader", "start", "length")

    def __init__(
        self,
        key: str,
        stype: StorageType,
        numel: int,
        location: str,
        loader: Callable[["StorageRef", StoredType], Tensor],
        start: int = 0,
        length: int | None = None,
    ):
        self.key, self.stype, self.numel, self.location = key, stype, numel, location
        self.loader, self.start, self.length = loader, start, length

    @property
    def nbytes(self) -> int:
        """Size of the referenced storage in bytes."""
        stored = self.stype.stored
        return self.numel * (1 if stored is None else stored.itemsize)

    def base(self, stored: StoredType) -> Tensor:
        """The storage's data as a flat tensor of the `stored` type (a view when the reference
        covers part of it).

        Raises:
            CheckpointError: when the storage is damaged or used with two dtypes.
        """
        b = self.loader(self, stored)
        if self.start or self.length is not None:
            length = b.numel() - self.start if self.length is None else self.length
            b = view_of(
                b, self.start, (length,), (1,), active.get().name, f"storage view of {self.key!r}"
            )
        return b


def _stored_of(d: Any, src: str) -> StoredType:
    if isinstance(d, (_dt.dtype, TorchDtype)) and d.name in BY_NAME:
        return BY_NAME[d.name]
    raise corrupt(src, f"expected a dtype, got {d!r:.60}")


def _over(storage: Any, offset: Any, size: Any, stride: Any, stored: StoredType | None) -> Tensor:
    src = active.get().name
    if not isinstance(storage, StorageRef):
        raise corrupt(src, f"a tensor's storage is {type(storage).__name__}, not a stored buffer")
    if storage.stype.untyped:
        if stored is None:
            raise corrupt(src, f"storage {storage.key!r} is untyped and the tensor names no dtype")
    elif stored is not None and stored is not storage.stype.stored:
        raise corrupt(src, f"a {stored.name} tensor over {storage.stype.name} {storage.key!r}")
    stored = stored or storage.stype.stored
    assert stored is not None  # an untyped storage's tensor names its dtype (checked above)
    base = storage.base(stored)
    return view_of(base, offset, size, stride, src, f"a tensor over storage {storage.key!r}")


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _over(storage, storage_offset, size, stride, None)


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    t = _over(storage, storage_offset, size, stride, None)
    return finish(t, requires_grad, False, active.get().name, "a tensor")


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    src = active.get().name
    t = _over(storage, storage_offset, size, stride, _stored_of(dtype, src))
    return finish(t, requires_grad, False, src, "a tensor")


def _rebuild_parameter(data, requires_grad, backward_hooks):
    src = active.get().name
    if not isinstance(data, Tensor):
        raise corrupt(src, f"a Parameter's data is {type(data).__name__}, not a tensor")
    return finish(data.detach(), requires_grad, True, src, "a Parameter")


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    if state:
        shown = sorted(state)[:5] if isinstance(state, dict) else state
        raise unsupported(
            active.get().name,
            "holds a Parameter with Python attributes "
            f"({shown!r:.60}), "
            "which coretorch parameters cannot carry",
        )
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    ctx = active.get()
    src = ctx.name
    d = widened(_stored_of(dtype, src), src, ctx.notes)
    return finish(
        meta_tensor(d, size, stride, src, "a meta tensor"),
        requires_grad,
        False,
        src,
        "a meta tensor",
    )


def _on_device(t: Tensor, device_name: Any, requires_grad: Any) -> Tensor:
    ctx = active.get()
    t = ctx.placement.place(t, str(device_name))
    return finish(t.detach(), requires_grad, False, ctx.name, "a device tensor")


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, Tensor):
        raise corrupt(active.get().name, "a device tensor's data is not a tensor")
    return _on_device(data, device, requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    if not isinstance(data, np.ndarray):
        raise corrupt(active.get().name, "a device tensor's data is not a numpy array")
    return _on_device(base_from_array(data.copy()).reshape(data.shape), device, requires_grad)


_REBUILDERS = (
    _rebuild_tensor,
    _rebuild_tensor_v2,
    _rebuild_tensor_v3,
    _rebuild_parameter,
    _rebuild_parameter_with_state,
    _rebuild_meta_tensor_no_storage,
    _rebuild_device_tensor_from_cpu_tensor,
    _rebuild_device_tensor_from_numpy,
)


def _rebuild_from_type_v2(func, new_type, args, state):
    src = active.get().name
    if func not in _REBUILDERS or not isinstance(args, tuple):
        raise corrupt(src, f"_rebuild_from_type_v2 of {func!r:.60}")
    t = func(*args)
    if new_type is Parameter and not isinstance(t, Parameter):
        t = Parameter(t, t.requires_grad)
    elif new_type not in (Tensor, Parameter):
        raise unsupported(
            src, f"holds a tensor subclass ({new_type!r:.60}), which coretorch cannot rebuild"
        )
    if state and (not isinstance(state, tuple) or any(state)):
        raise unsupported(
            src, "holds a tensor with Python attributes, which coretorch tensors cannot carry"
        )
    return t


def _refuse(what: str) -> Callable[..., Any]:
    def refuse(*args, **kwargs):
        raise unsupported(active.get().name, f"holds {what}, which coretorch does not have")

    refuse.__name__ = refuse.__qualname__ = f"refuse_{what.replace(' ', '_')}"
    return refuse


def _torch_device(*args):
    try:
        return _device(*args)
    except (RuntimeError, ValueError, TypeError) as e:
        raise unsupported(active.get().name, f"holds torch.device{args!r:.40} ({e})") from None


def _get_layout(name):
    if name != "torch.strided":
        raise unsupported(
            active.get().name, f"holds layout {name!r:.40}; coretorch tensors are strided"
        )
    return "torch.strided"


def _dtype_named(name: str) -> Any:
    d = getattr(_dt, name, None)
    return d if isinstance(d, _dt.dtype) and d.name == name else TorchDtype(name)


def _vocabulary() -> dict[str, Any]:
    table: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "builtins.set": set,
        "builtins.bytearray": bytearray,
        "builtins.complex": complex,
        "_codecs.encode": codecs.encode,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _torch_device,
        "torch.serialization._get_layout": _get_layout,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for f in _REBUILDERS:
        table[f"torch._utils.{f.__name__}"] = f
    for name, what in (
        ("_rebuild_qtensor", "quantized tensors"),
        ("_rebuild_sparse_tensor", "sparse tensors"),
        ("_rebuild_nested_tensor", "nested tensors"),
        ("_rebuild_wrapper_subclass", "tensor subclasses"),
    ):
        table[f"torch._utils.{name}"] = _refuse(what)
    for name in BY_NAME:
        table[f"torch.{name}"] = _dtype_named(name)
    for name, st in STORAGE_CLASSES.items():
        table[f"torch.{name}"] = table[f"torch.cuda.{name}"] = StorageType(name, st)
    table["torch.storage.UntypedStorage"] = StorageType("UntypedStorage", None)
    return table


TORCH_GLOBALS = _vocabulary()
_ALLOWED_IDS = {id(v) for v in TORCH_GLOBALS.values()}


def is_allowed_value(obj: Any) -> bool:
    """Whether a weights-only pickle may call or build `obj` (vocabulary or user-allowed)."""
    return id(obj) in _ALLOWED_IDS or any(obj is v for v in user_allowed_globals().values())


def unsupported_global_message(full: str) -> str:
    """PyTorch's message for a pickle global outside the allowlist, naming how to allow it."""
    shown = full
    if full.startswith("builtins."):
        shown = full[len("builtins.") :]
    return (
        f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
        f"use `coretorch.serialization.add_safe_globals([{shown}])` or the "
        f"`coretorch.serialization.safe_globals([{shown}])` context manager to allowlist "
        f"this global if you trust this class/function."
    )


def _fix_name(module: str, name: str) -> tuple[str, str]:
    # protocol-2 pickles carry Python 2 names (__builtin__.set)
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _coretorch_path(module: str) -> str | None:
    if module == "torch" or module.startswith("torch."):
        return "coretorch" + module[len("torch") :]
    return None


def _import_coretorch(module: str, name: str, src: str) -> Any:
    ct_module = "coretorch" + module[len("torch") :]  # a torch module (the caller checks)
    try:
        obj: Any = importlib.import_module(ct_module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):
        raise unsupported(
            src,
            f"needs {module}.{name}, which coretorch does not have (looked for "
            f"{ct_module}.{name}); save a state_dict with PyTorch and load "
            f"that instead",
        ) from None


NOT_TORCH = object()


def find_global(module: Any, name: Any, src: str, weights_only: bool) -> Any:
    """The object a pickle's GLOBAL names. Weights-only: the vocabulary or the user's safe
    globals, else ``pickle.UnpicklingError`` with PyTorch's message. Otherwise: the vocabulary,
    ``torch.X`` as ``coretorch.X``, or NOT_TORCH (import it normally)."""
    if not isinstance(module, str) or not isinstance(name, str):
        raise corrupt(src, "a pickle global whose module or name is not a string")
    module, name = _fix_name(module, name)
    full = f"{module}.{name}"
    if full in TORCH_GLOBALS:
        return TORCH_GLOBALS[full]
    if weights_only:
        if module in BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
            )
        user = user_allowed_globals()
        ct_module = _coretorch_path(module)
        for candidate in (full, f"{ct_module}.{name}" if ct_module else None):
            if candidate in user:
                return user[candidate]
        raise pickle.UnpicklingError(unsupported_global_message(full))
    if _coretorch_path(module) is not None:
        return _import_coretorch(module, name, src)
    return NOT_TORCH
