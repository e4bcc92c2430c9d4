"""Noticing dead DataLoader workers at once: a SIGCHLD handler in the main process checks the
registered worker pids and raises when one has died with an error, instead of the main process
waiting for a batch that will never come (what PyTorch's loader does too)."""

from __future__ import annotations

import atexit
import os
import signal
import threading

__all__ = [
    "set_worker_pids",
    "remove_worker_pids",
    "error_if_any_worker_fails",
    "set_sigchld_handler",
    "python_exiting",
]

_worker_pids: dict[int, tuple[int, ...]] = {}
_handler_set = False
_exiting = False


def _set_exiting() -> None:
    global _exiting
    _exiting = True


# registered after multiprocessing's own exit function, so it runs before it: the daemonic
# workers that function terminates are then expected to die
atexit.register(_set_exiting)


def python_exiting() -> bool:
    """Whether the interpreter is shutting down (loaders then leave their workers to
    ``multiprocessing``, which terminates daemonic processes at exit)."""
    return _exiting


def set_worker_pids(key: int, pids: tuple[int, ...]) -> None:
    """Watch the workers `pids` of the loader iterator `key`."""
    _worker_pids[key] = tuple(pids)


def remove_worker_pids(key: int) -> None:
    """Stop watching the workers of `key` (before they are asked to exit)."""
    _worker_pids.pop(key, None)


def _failure(pid: int) -> str | None:
    try:  # look at the child's state without reaping it
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return None
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED and info.si_status != 0:
        return (
            f"DataLoader worker (pid {pid}) exited unexpectedly with exit code "
            f"{info.si_status}. Details are lost due to multiprocessing. Rerunning with "
            f"num_workers=0 may give better error trace."
        )
    if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        name = signal.strsignal(info.si_status)
        msg = f"DataLoader worker (pid {pid}) is killed by signal: {name}. "
        if info.si_status == signal.SIGBUS:
            msg += (
                "It is possible that dataloader's workers are out of shared memory. Please "
                "try to raise your shared memory limit."
            )
        return msg
    return None


def error_if_any_worker_fails() -> None:
    """Raise RuntimeError if a watched worker has exited with an error or by a signal."""
    if _exiting:
        return
    for key, pids in list(_worker_pids.items()):
        for pid in pids:
            msg = _failure(pid)
            if msg is not None:
                # once: the other workers of this loader are about to be stopped
                _worker_pids.pop(key, None)
                raise RuntimeError(msg)


def set_sigchld_handler() -> None:
    """Install the SIGCHLD handler once (only the main thread can)."""
    global _handler_set
    if _handler_set or not hasattr(signal, "SIGCHLD"):
        return
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGCHLD)
    if not callable(previous):
        previous = None

    def handler(signum, frame) -> None:
        error_if_any_worker_fails()
        if previous is not None:
            previous(signum, frame)

    signal.signal(signal.SIGCHLD, handler)
    _handler_set = True
