"""Moving cpu tensors into shared memory: ``Tensor.share_memory_``, ``Tensor.is_shared`` and
tensors created directly in shared memory.

`share_memory_` works in place, as in PyTorch: the tensor keeps its storage object and only the
buffer under it changes, so every view of the storage sees the shared memory from then on.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref

from ..device import device as _device
from ..tensor.impl import TensorImpl, contiguous_strides, device_key_bits, new_impl, shape_numel
from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .shared_buffer import SharedBuffer, new_shared_buffer, shared_buffer_of

__all__ = [
    "shared_storages",
    "share_tensor_memory_",
    "share_storage_",
    "is_shared",
    "empty_shared",
    "tensor_on_shared_storage",
    "storage_on_shared_buffer",
]

_CPU = _device("cpu")


class _Locks:
    lock = threading.RLock()


def _new_lock_after_fork() -> None:
    _Locks.lock = threading.RLock()  # a fork can happen while another thread holds it


os.register_at_fork(after_in_child=_new_lock_after_fork)


class _StorageRegistry:
    """Shared memory identity -> the live Storage mapping it in this process (held weakly), so
    that memory received twice, or sent and received back, is one storage."""

    def __init__(self) -> None:
        self._refs: dict[tuple, weakref.ref] = {}
        self._limit = 128

    def get(self, key: tuple) -> Storage | None:
        with _Locks.lock:
            ref = self._refs.get(key)
            return None if ref is None else ref()

    def put(self, key: tuple, storage: Storage) -> None:
        with _Locks.lock:
            self._refs[key] = weakref.ref(storage)
            if len(self._refs) > self._limit:
                self._refs = {k: r for k, r in self._refs.items() if r() is not None}
                self._limit = max(128, 2 * len(self._refs))


shared_storages = _StorageRegistry()


class _OneHolder:
    __slots__ = ("_storage",)
    _storage: object


def _refs_with_one_holder() -> int:
    # how many references a storage shows below when one tensor alone holds it (measured here,
    # through the same steps, so the count fits the running interpreter)
    holder = _OneHolder()
    holder._storage = object()
    storage = holder._storage
    return sys.getrefcount(storage)


_ONE_HOLDER_REFS = _refs_with_one_holder()


def _check_cpu(what: str, t: TensorImpl) -> None:
    if t._device.type != "cpu":
        raise RuntimeError(
            f"{what}: only cpu tensors can be moved to shared memory; this "
            f"tensor is on {t._device} (move it with .cpu() first)"
        )


def _drop_cached_views(storage: Storage) -> None:
    """Forget the numpy views a backend cached on the tensors of `storage`: they point at the
    buffer the storage had before."""
    for r in gc.get_referrers(storage):
        if isinstance(r, TensorImpl) and r._storage is storage:
            r._cache = None


def _move_to_shared(storage: Storage) -> SharedBuffer:
    buf = new_shared_buffer(storage.nbytes)
    arr = buf.array()
    if storage.nbytes:
        arr[:] = storage.data[: storage.nbytes]
    storage._replace_buffer(arr, buf.address)
    shared_storages.put(buf.key, storage)
    return buf


def share_tensor_memory_(t: TensorImpl) -> SharedBuffer:
    """Move the storage of cpu tensor `t` into shared memory (in place; nothing happens when it
    is there already) and return its buffer."""
    _check_cpu("share_memory_()", t)
    with _Locks.lock:
        storage = t._storage
        buf = shared_buffer_of(storage.data)
        if buf is None:
            buf = _move_to_shared(storage)
            t._cache = None
            if sys.getrefcount(storage) > _ONE_HOLDER_REFS:  # other tensors use it too
                _drop_cached_views(storage)
        return buf


def share_storage_(storage: Storage) -> SharedBuffer:
    """Move a cpu storage into shared memory in place and return its buffer."""
    if storage.device.type != "cpu":
        raise RuntimeError(
            f"share_memory_(): only cpu storages can be moved to shared memory; "
            f"this storage is on {storage.device}"
        )
    with _Locks.lock:
        buf = shared_buffer_of(storage.data)
        if buf is None:
            buf = _move_to_shared(storage)
            _drop_cached_views(storage)
        return buf


def is_shared(t: TensorImpl) -> bool:
    """Whether the storage of `t` is in shared memory."""
    return t._device.type == "cpu" and shared_buffer_of(t._storage.data) is not None


def storage_on_shared_buffer(buf: SharedBuffer) -> Storage:
    """A cpu storage whose memory is `buf`."""
    return Storage(buf.array(), buf.nbytes, _CPU, None, buf.address)


def tensor_on_shared_storage(
    storage: Storage, shape: tuple, stride: tuple, offset: int, dtype
) -> Tensor:
    """A cpu tensor with the given geometry over `storage`."""
    return new_impl(
        Tensor, storage, tuple(shape), tuple(stride), offset, dtype, _CPU, device_key_bits["cpu"]
    )


def empty_shared(shape: tuple, dtype) -> Tensor:
    """A new contiguous cpu tensor in shared memory (zero-filled)."""
    shape = tuple(shape)
    buf = new_shared_buffer(shape_numel(shape) * dtype.itemsize)
    storage = storage_on_shared_buffer(buf)
    shared_storages.put(buf.key, storage)
    return tensor_on_shared_storage(storage, shape, contiguous_strides(shape), 0, dtype)
