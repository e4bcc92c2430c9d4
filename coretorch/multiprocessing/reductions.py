"""How tensors cross process boundaries: reducers for ``multiprocessing``'s ForkingPickler.

Sending a cpu tensor (through a Queue, a Pipe, or as an argument of a spawned Process) moves its
storage into shared memory (in place) and sends the memory's file descriptor and the tensor's
geometry; the receiver maps the same memory, so nothing is copied and both sides see each
other's writes. A storage received twice in one process is mapped once: the tensors share it.
"""
from __future__ import annotations

import os
import threading
import time
from multiprocessing import current_process, parent_process, reduction, resource_sharer, util
from multiprocessing.context import get_spawning_popen
from multiprocessing.reduction import ForkingPickler

from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .shared_buffer import SharedBuffer
from .tensor_sharing import (share_storage_, share_tensor_memory_, shared_storages,
                             storage_on_shared_buffer, tensor_on_shared_storage)

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage"]




# how long a child process that sent tensors waits at exit for their receivers to take the
# descriptors (a receiver gets a descriptor from the sender's resource sharer, which dies with it)
HANDOFF_TIMEOUT = 10.0


class _Handoffs:
    pending = 0   # descriptors offered to other processes and not yet sent (or dropped)
    lock = threading.Lock()
    wait_installed_pid = 0


def _handoff_done() -> None:
    with _Handoffs.lock:
        _Handoffs.pending -= 1


def _after_fork_in_child() -> None:
    _Handoffs.pending = 0   # the parent's offers are not ours (the sharer drops them)
    _Handoffs.lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class _OfferedFd:
    """A picklable handle to a descriptor (``multiprocessing.reduction.DupFd`` through the
    resource sharer) whose handoff is counted, so that a sender can wait for it at exit."""

    def __init__(self, fd: int) -> None:
        new_fd = os.dup(fd)

        def send(conn, pid):
            reduction.send_handle(conn, new_fd, pid)

        def close():
            os.close(new_fd)
            _handoff_done()

        with _Handoffs.lock:
            _Handoffs.pending += 1
        self._id = resource_sharer._resource_sharer.register(send, close)

    def detach(self) -> int:
        with resource_sharer._resource_sharer.get_connection(self._id) as conn:
            return reduction.recv_handle(conn)


def _feeders_running() -> bool:
    return any(t.name == "QueueFeederThread" and t.is_alive() for t in threading.enumerate())


def _wait_for_handoffs() -> None:
    # queues still flushing may yet offer descriptors, so wait for them as well
    end = time.monotonic() + HANDOFF_TIMEOUT
    while (_Handoffs.pending > 0 or _feeders_running()) and time.monotonic() < end:
        time.sleep(0.005)


def _ensure_handoff_wait() -> None:
    """Make `_wait_for_handoffs` an exit step of this process when it is a child process."""
    if _Handoffs.wait_installed_pid != os.getpid() and (
            parent_process() is not None or getattr(current_process(), "_inheriting", False)):
        _Handoffs.wait_installed_pid = os.getpid()
        # after the queues have been told to flush (exit priority 10) and before the resource
        # sharer's socket is removed (priority 0)
        util.Finalize(None, _wait_for_handoffs, exitpriority=5)


def drop_pending_handoffs() -> None:
    """Close the descriptors this process offered and nobody took, and exit without waiting
    for receivers (a process told to stop calls this)."""
    resource_sharer.stop()
    _Handoffs.wait_installed_pid = -1
    for f in list(util._finalizer_registry.values()):
        if getattr(f, "_callback", None) is _wait_for_handoffs:
            f.cancel()


def _offer_fd(fd: int):
    """A picklable handle through which the receiving process gets its own copy of `fd`."""
    if get_spawning_popen() is not None:   # pickled for a child being started: it inherits fd
        return reduction.DupFd(fd)
    _ensure_handoff_wait()
    return _OfferedFd(fd)


# installed early, since a send during the exit steps would come too late to add one: at import
# in spawned children, after the fork in forked ones, else on the first send
_ensure_handoff_wait()
util.register_after_fork(shared_storages, lambda _: _ensure_handoff_wait())


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


def _rebuild_tensor(cls, df, nbytes: int, shape: tuple, stride: tuple, offset: int,
                    dtype, requires_grad: bool):
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
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If you "
                           "just want to transfer the data, call detach() on the tensor before "
                           "serializing (e.g., putting it on the queue).")
    if t._device.type != "cpu":
        raise RuntimeError(f"sending a tensor to another process: only cpu tensors can be "
                           f"shared between processes, this one is on {t._device} (move it "
                           f"with .cpu() first)")
    buf = share_tensor_memory_(t)
    return (_rebuild_tensor, (type(t), _offer_fd(buf.fd), buf.nbytes, t._shape, t._stride,
                              t._offset, t._dtype, t.requires_grad))


def _rebuild_storage(df, nbytes: int) -> Storage:
    return _storage_from_fd(df, nbytes)


def reduce_storage(storage: Storage):
    """Reduce a cpu storage to its shared memory's descriptor (moving it there first)."""
    buf = share_storage_(storage)
    return (_rebuild_storage, (_offer_fd(buf.fd), buf.nbytes))


def init_reductions() -> None:
    """Register the reducers with ``multiprocessing``'s pickler (done on import)."""
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    ForkingPickler.register(Storage, reduce_storage)
