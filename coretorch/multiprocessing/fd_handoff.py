"""Handing file descriptors to other processes, and keeping a sender alive until they are taken.

By default a receiver gets its copy of a descriptor from the sender's ``multiprocessing``
resource sharer (a thread serving a socket), so a sender that exits first leaves the receiver
with an error. Python alone has that problem (and PyTorch with it); here a child process that
offered descriptors waits at exit, up to `HANDOFF_TIMEOUT` seconds, until its receivers have
taken them.

Two processes that exchange many messages (a DataLoader worker and the main process) can instead
keep a Unix socket between them: the sender pickles inside `collecting_fds`, sends the
descriptors it collected with `send_fds` next to the message, and the receiver unpickles inside
`receiving_fds` with what `recv_fds` got: one ``sendmsg`` per message, no connection per tensor.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from multiprocessing import current_process, parent_process, reduction, resource_sharer, util
from multiprocessing.context import get_spawning_popen
from typing import Iterator

__all__ = [
    "offer_fd",
    "drop_pending_handoffs",
    "HANDOFF_TIMEOUT",
    "collecting_fds",
    "receiving_fds",
    "send_fds",
    "recv_fds",
]

HANDOFF_TIMEOUT = 10.0  # seconds


class _Handoffs:
    pending = 0  # descriptors offered to other processes and not yet sent (or dropped)
    lock = threading.Lock()
    wait_installed_pid = 0


def _handoff_done() -> None:
    with _Handoffs.lock:
        _Handoffs.pending -= 1


def _after_fork_in_child() -> None:
    _Handoffs.pending = 0  # the parent's offers are not ours (the sharer drops them)
    _Handoffs.lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class _OfferedFd:
    """A picklable handle to a descriptor (``multiprocessing.reduction.DupFd`` through the
    resource sharer) whose handoff is counted, so that a sender can wait for it at exit."""

    def __init__(self, fd: int) -> None:
        new_fd = os.dup(fd)

        def send(conn, pid):
            reduction.send_handle(conn, new_fd, pid)

        owner = os.getpid()

        def close():
            os.close(new_fd)
            if os.getpid() == owner:  # a forked child drops the parent's offers uncounted
                _handoff_done()

        with _Handoffs.lock:
            _Handoffs.pending += 1
        # multiprocessing's private sharer, which typeshed leaves out
        self._id = resource_sharer._resource_sharer.register(send, close)  # type: ignore[attr-defined]

    def detach(self) -> int:
        with resource_sharer._resource_sharer.get_connection(  # type: ignore[attr-defined]
            self._id
        ) as conn:
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
        parent_process() is not None or getattr(current_process(), "_inheriting", False)
    ):
        _Handoffs.wait_installed_pid = os.getpid()
        # after the queues have been told to flush (exit priority 10) and before the resource
        # sharer's socket is removed (priority 0)
        util.Finalize(None, _wait_for_handoffs, exitpriority=5)


def drop_pending_handoffs() -> None:
    """Close the descriptors this process offered and nobody took, and exit without waiting
    for receivers (a process told to stop calls this)."""
    resource_sharer.stop()
    for f in list(util._finalizer_registry.values()):  # type: ignore[attr-defined]  # private
        if getattr(f, "_callback", None) is _wait_for_handoffs:
            f.cancel()


class _Channel(threading.local):
    collected: list[int] | None = None  # pickling inside collecting_fds
    received: list[int] | None = None  # unpickling inside receiving_fds


_channel = _Channel()
_MAX_FDS_PER_MESSAGE = 253  # Linux's SCM_MAX_FD


class _FdSlot:
    """Picklable: the position of a descriptor among those sent next to the message."""

    def __init__(self, index: int) -> None:
        self.index = index

    def detach(self) -> int:
        received = _channel.received
        if received is None or received[self.index] < 0:
            raise RuntimeError(
                "a tensor's shared memory descriptor was expected next to this "
                "message; unpickle it inside receiving_fds()"
            )
        fd, received[self.index] = received[self.index], -1
        return fd


@contextlib.contextmanager
def collecting_fds() -> Iterator[list[int]]:
    """Pickle inside this block: the descriptors of the tensors pickled in this thread are
    collected in the list it gives (they stay owned by their storages: send them before those
    can die) instead of being offered through the resource sharer."""
    fds: list[int] = []
    _channel.collected = fds
    try:
        yield fds
    finally:
        _channel.collected = None


@contextlib.contextmanager
def receiving_fds(fds: list[int]) -> Iterator[None]:
    """Unpickle a message sent from `collecting_fds` inside this block, with the descriptors
    `recv_fds` got for it; those the message did not take are closed afterwards."""
    fds = list(fds)
    _channel.received = fds
    try:
        yield
    finally:
        _channel.received = None
        for fd in fds:
            if fd >= 0:
                os.close(fd)


def send_fds(sock: socket.socket, fds: list[int]) -> None:
    """Send descriptors over a Unix socket (in groups the kernel accepts)."""
    for i in range(0, len(fds), _MAX_FDS_PER_MESSAGE):
        reduction.sendfds(sock, fds[i : i + _MAX_FDS_PER_MESSAGE])


def recv_fds(sock: socket.socket, n: int) -> list[int]:
    """Receive `n` descriptors sent with `send_fds`."""
    fds: list[int] = []
    while len(fds) < n:
        fds.extend(reduction.recvfds(sock, min(_MAX_FDS_PER_MESSAGE, n - len(fds))))
    return fds


def offer_fd(fd: int):
    """A picklable handle through which the receiving process gets its own copy of `fd`."""
    collected = _channel.collected
    if collected is not None:
        collected.append(fd)
        return _FdSlot(len(collected) - 1)
    if get_spawning_popen() is not None:  # pickled for a child being started: it inherits fd
        return reduction.DupFd(fd)
    _ensure_handoff_wait()
    return _OfferedFd(fd)


# installed early, since a send during the exit steps would come too late to add one: at import
# in spawned children, after the fork in forked ones, else on the first send
_ensure_handoff_wait()
util.register_after_fork(_Handoffs, lambda _: _ensure_handoff_wait())
