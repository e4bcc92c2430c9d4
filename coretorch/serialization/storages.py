"""Loaded storages and the tensors over them, shared by every checkpoint format.

Each stored buffer becomes one 1-D tensor on its target device (the "base"); every tensor of the
checkpoint that used that buffer is a bounds-checked ``as_strided`` of the base, detached, so
tensors that shared memory when saved share it (and its version counter) after loading, as in
PyTorch. Meta tensors never get data, and a tensor without stored bytes is never given any.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from ..device import device as _device
from ..nn.parameter import Parameter
from ..ops.factories_public import from_numpy
from ..tensor.tensor import Tensor
from .errors import CheckpointError, corrupt

__all__ = [
    "Placement",
    "UserCodeError",
    "int_list",
    "view_of",
    "meta_tensor",
    "finish",
    "empty_base",
]


def int_list(value: Any, src: str, what: str) -> tuple[int, ...]:
    """`value` as a tuple of non-negative ints, or a corrupt-file error naming `what`."""
    if not isinstance(value, (list, tuple)) or not all(type(v) is int and v >= 0 for v in value):
        raise corrupt(src, f"{what} must be a list of non-negative integers, got {value!r:.80}")
    return tuple(value)


def _check_int(value: Any, src: str, what: str) -> int:
    if type(value) is not int or value < 0:
        raise corrupt(src, f"{what} must be a non-negative integer, got {value!r:.80}")
    return value


class UserCodeError(Exception):
    """An exception raised by the user's map_location callable, carried out of the readers so
    `load` re-raises it unchanged (not as a corrupt-file error)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class Placement:
    """Where loaded storages go, from `map_location` (PyTorch's rules): None keeps the saved
    device, a device or string sends everything there, a dict maps saved device strings, and a
    callable ``fn(storage, location)`` gets each storage as a 1-D cpu tensor and returns the
    tensor to use (or None for the default)."""

    def __init__(self, map_location, src: str):
        m = map_location
        if isinstance(m, bytes):
            m = m.decode()
        if not (m is None or isinstance(m, (str, _device, dict)) or callable(m)):
            raise TypeError(
                f"load(): map_location must be None, a device, a string, a dict or a "
                f"callable, got {type(m).__name__}"
            )
        self.map, self.src = m, src

    def target(self, saved: str) -> str | None:
        """The device string a storage saved on `saved` goes to (None: ask the callable)."""
        m = self.map
        if m is None:
            return saved
        if isinstance(m, dict):
            return str(m.get(saved, saved))
        if isinstance(m, (str, _device)):
            return str(m)
        return None

    def skips_data(self, saved: str) -> bool:
        """Whether storages saved on `saved` land on meta (so their bytes need not be read)."""
        t = self.target(saved)
        return t is not None and _device_of(t, self.src).type == "meta"

    def place(self, base: Tensor, saved: str) -> Tensor:
        """Move a freshly loaded cpu base to where `map_location` says."""
        t = self.target(saved)
        if t is None:
            try:
                out = self.map(base, saved)
            except Exception as e:
                raise UserCodeError(e) from e
            if out is None:
                t = saved
            elif not isinstance(out, Tensor) or out.numel() != base.numel():
                raise UserCodeError(
                    TypeError(
                        f"load(): map_location must return None or a tensor with the storage's "
                        f"{base.numel()} elements, got {out!r:.80}"
                    )
                )
            else:
                return out
        dev = _device_of(t, self.src)
        if dev == base.device:
            return base
        try:
            return base.to(dev)
        except RuntimeError as e:
            raise CheckpointError(
                f"load(): {self.src} has a tensor saved on {saved!r} that "
                f"cannot be placed on {t!r} ({e}); pass "
                f"map_location='cpu' to load it on the cpu"
            ) from None


def _device_of(name: str, src: str) -> _device:
    try:
        return _device(name)
    except (RuntimeError, ValueError, TypeError) as e:
        raise CheckpointError(f"load(): {src}: cannot place tensors on {name!r}: {e}") from None


def empty_base(dtype: _dt.dtype, numel: int, dev: str) -> Tensor:
    """An uninitialized 1-D base; used only for meta bases, or ones filled right after."""
    from .. import empty

    return empty(numel, dtype=dtype, device=dev)


def base_from_array(arr: np.ndarray) -> Tensor:
    """A flat 1-D cpu tensor holding a contiguous copy of `arr`'s elements."""
    return from_numpy(np.ascontiguousarray(arr).reshape(-1))


def view_of(base: Tensor, offset: Any, size: Any, stride: Any, src: str, what: str) -> Tensor:
    """A tensor over `base` (1-D) with this geometry, checked to stay inside it; detached, so it
    shares storage and version counter with `base` without being an autograd view."""
    offset = _check_int(offset, src, f"{what}: storage offset")
    size = int_list(size, src, f"{what}: size")
    stride = int_list(stride, src, f"{what}: stride")
    if len(size) != len(stride):
        raise corrupt(src, f"{what}: size {list(size)} and stride {list(stride)} differ in length")
    n = base.numel()
    if 0 in size:
        end = offset
    else:
        end = offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1
    if end > n:
        raise corrupt(
            src,
            f"{what}: size {list(size)}, stride {list(stride)} and offset {offset} "
            f"reach element {end} of a storage of {n} elements",
        )
    if 0 in size and offset > n:
        offset = n
    # as_strided takes an absolute storage offset; `base` may itself start inside its storage
    return base.as_strided(size, stride, base.storage_offset() + offset).detach()


def meta_tensor(dtype: _dt.dtype, size: Any, stride: Any, src: str, what: str) -> Tensor:
    """A meta tensor of this geometry: shapes only, never data."""
    size = int_list(size, src, f"{what}: size")
    stride = int_list(stride, src, f"{what}: stride") if stride is not None else None
    if stride is None:
        stride, acc = [], 1
        for s in reversed(size):
            stride.insert(0, acc)
            acc *= max(s, 1)
        stride = tuple(stride)
    if len(size) != len(stride):
        raise corrupt(src, f"{what}: size {list(size)} and stride {list(stride)} differ in length")
    extent = 0 if 0 in size else sum((s - 1) * st for s, st in zip(size, stride)) + 1
    return empty_base(dtype, extent, "meta").as_strided(size, stride, 0).detach()


def finish(t: Tensor, requires_grad: Any, parameter: bool, src: str, what: str) -> Tensor:
    """Apply the saved autograd flags: a Parameter, or a leaf that requires grad."""
    if type(requires_grad) is not bool:
        raise corrupt(
            src, f"{what}: requires_grad must be true or false, got {requires_grad!r:.40}"
        )
    if requires_grad and not t.dtype.is_floating_point:
        raise corrupt(src, f"{what}: a {t.dtype.name} tensor cannot require grad")
    if parameter:
        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


class StorageCache:
    """Bases by key: each stored buffer is read, converted and placed once."""

    def __init__(self) -> None:
        self._bases: dict[Any, Tensor] = {}

    def get(self, key: Any, make: Callable[[], Tensor]) -> Tensor:
        """The tensor cached under `key`, created with `make()` the first time it is asked for."""
        t = self._bases.get(key)
        if t is None:
            t = self._bases[key] = make()
        return t
