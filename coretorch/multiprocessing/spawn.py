"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in `nprocs` processes and join them,
stopping the rest and raising in the parent when one fails (mirrors
``torch.multiprocessing.spawn``)."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from typing import Any, Callable

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "spawn",
    "start_processes",
]

log = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1


class ProcessException(Exception):
    """A spawned process failed; `error_index` is its index, `error_pid` its pid."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process was killed by a signal or exited with a non-zero code."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (
            self.msg,
            self.error_index,
            self.error_pid,
            self.exit_code,
            self.signal_name,
        )


def _die_with_parent(sig: int) -> None:
    """Ask Linux to send `sig` to this process when its parent dies (elsewhere: nothing)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    _die_with_parent(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped us
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes started by `start_processes`; `join` waits for them."""

    def __init__(self, processes: list, error_files: list) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        """The process ids of the spawned processes."""
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait (up to `timeout` seconds) for processes to end. Returns True when all have ended
        successfully, False when some still run. When one fails, the others are terminated
        (after `grace_period` seconds, then killed) and its failure is raised."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning(
                    "Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                    p.pid,
                )
                p.kill()
            p.join()
        self._raise_failure(error_index)
        return False  # not reached

    def _raise_failure(self, index: int) -> None:
        failed = self.processes[index]
        if not os.access(self.error_files[index], os.R_OK):
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {index:d} terminated with signal {name}",
                    index,
                    failed.pid,
                    code,
                    name,
                )
            raise ProcessExitedException(
                f"process {index:d} terminated with exit code {code:d}", index, failed.pid, code
            )
        with open(self.error_files[index], "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(self.error_files[index])
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n" + original_trace
        raise ProcessRaisedException(msg, index, failed.pid)


class SpawnContext(ProcessContext):
    """The former name of `ProcessContext`."""

    def __init__(self, processes: list, error_files: list) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Start `nprocs` processes running ``fn(i, *args)`` with `start_method`; with `join`, wait
    for all of them (raising if one fails), else return their `ProcessContext`."""
    mp: Any = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, name = tempfile.mkstemp(prefix="coretorch-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(name)  # the child creates it only when it has an error to report
        p = mp.Process(target=_wrap, args=(fn, i, args, name), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(name)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """`start_processes` with the ``spawn`` start method: ``fn(i, *args)`` runs in `nprocs` new
    interpreters (`fn` must be importable by name)."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t "
            "coretorch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
