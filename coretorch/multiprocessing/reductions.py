"""How tensors cross process boundaries: reducers for ``multiprocessing``'s ForkingPickler.

Sending a cpu tensor (through a Queue, a Pipe, or as an argument of a spawned Process) moves its
storage into shared memory (in place) and sends the memory's file descriptor and the tensor's
geometry; the receiver maps the same memory, so nothing is copied and both sides see each
other's writes. A storage received twice in one process is mapped once: the tensors share it.
"""

from __future__ import annotations

import os
from multiprocessing.reduction import ForkingPickler

from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .fd_handoff import offer_fd
from .shared_buffer import SharedBuffer
from .tensor_sharing import (
    share_storage_,
    share_tensor_memory_,
    shared_storages,
    storage_on_shared_buffer,
    tensor_on_shared_storage,
)

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage"]


def _fd_key(fd: int) -> tuple:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def _storage_from_fd(df, nbytes: int) -> Storage:
    fd = df.detach()
    try:
        key = _fd_key(fd)
        storage = shared_storages.get(key)
    except BaseException:
        os.close(fd)
        raise
    if storage is not None:
        os.close(fd)
        return storage
    storage = storage_on_shared_buffer(SharedBuffer(fd, nbytes))
    shared_storages.put(key, storage)
    return storage


def _rebuild_tensor(
    cls, df, nbytes: int, shape: tuple, stride: tuple, offset: int, dtype, requires_grad: bool
):
    t = tensor_on_shared_storage(_storage_from_fd(df, nbytes), shape, stride, offset, dtype)
    if cls is not Tensor:
        from ..nn.parameter import Parameter

        if cls is Parameter:
            return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t: Tensor):
    """Reduce a cpu tensor to (its shared memory's descriptor, geometry, dtype, requires_grad)."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  If you "
            "just want to transfer the data, call detach() on the tensor before "
            "serializing (e.g., putting it on the queue)."
        )
    if t._device.type != "cpu":
        raise RuntimeError(
            f"sending a tensor to another process: only cpu tensors can be "
            f"shared between processes, this one is on {t._device} (move it "
            f"with .cpu() first)"
        )
    buf = share_tensor_memory_(t)
    return (
        _rebuild_tensor,
        (
            type(t),
            offer_fd(buf.fd),
            buf.nbytes,
            t._shape,
            t._stride,
            t._offset,
            t._dtype,
            t.requires_grad,
        ),
    )


def _rebuild_storage(df, nbytes: int) -> Storage:
    return _storage_from_fd(df, nbytes)


def reduce_storage(storage: Storage):
    """Reduce a cpu storage to its shared memory's descriptor (moving it there first)."""
    buf = share_storage_(storage)
    return (_rebuild_storage, (offer_fd(buf.fd), buf.nbytes))


def init_reductions() -> None:
    """Register the reducers with ``multiprocessing``'s pickler (done on import)."""
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    ForkingPickler.register(Storage, reduce_storage)
