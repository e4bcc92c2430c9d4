"""Handing file descriptors to other processes, and keeping a sender alive until they are taken.

A receiver gets its copy of a descriptor from the sender's ``multiprocessing`` resource sharer (a
thread serving a socket), so a sender that exits first leaves the receiver with an error. Python
alone has that problem (and PyTorch with it); here a child process that offered descriptors
waits at exit, up to `HANDOFF_TIMEOUT` seconds, until its receivers have taken them.
"""
from __future__ import annotations

import os
import threading
import time
from multiprocessing import current_process, parent_process, reduction, resource_sharer, util
from multiprocessing.context import get_spawning_popen

__all__ = ["offer_fd", "drop_pending_handoffs", "HANDOFF_TIMEOUT"]

HANDOFF_TIMEOUT = 10.0   # seconds


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

        owner = os.getpid()

        def close():
            os.close(new_fd)
            if os.getpid() == owner:   # a forked child drops the parent's offers uncounted
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
    for f in list(util._finalizer_registry.values()):
        if getattr(f, "_callback", None) is _wait_for_handoffs:
            f.cancel()


def offer_fd(fd: int):
    """A picklable handle through which the receiving process gets its own copy of `fd`."""
    if get_spawning_popen() is not None:   # pickled for a child being started: it inherits fd
        return reduction.DupFd(fd)
    _ensure_handoff_wait()
    return _OfferedFd(fd)


# installed early, since a send during the exit steps would come too late to add one: at import
# in spawned children, after the fork in forked ones, else on the first send
_ensure_handoff_wait()
util.register_after_fork(_Handoffs, lambda _: _ensure_handoff_wait())
