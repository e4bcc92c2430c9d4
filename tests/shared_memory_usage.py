"""Helpers for the multiprocessing and DataLoader tests: what shared memory and which processes a
test left behind (read from /proc, independently of coretorch)."""

from __future__ import annotations

import os

__all__ = ["memfd_usage", "mapped_by_memfd", "shm_names", "alive", "wait_dead"]


def memfd_usage() -> tuple[int, int]:
    """(open descriptors of memory files, mappings of memory files) of this process."""
    fds = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            fds += os.readlink(f"/proc/self/fd/{name}").startswith("/memfd:")
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        maps = sum("/memfd:" in line for line in f)
    return fds, maps


def mapped_by_memfd(address: int) -> bool:
    """Whether `address` lies in a mapping of a memory file (shared memory) in this process."""
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= address < hi:
                return "/memfd:" in line
    return False


def shm_names() -> set[str]:
    """Entries of /dev/shm that Python's or coretorch's shared memory could leave behind."""
    prefixes = ("coretorch", "psm_", "wnsm_", "sem.mp-", "mp-", "torch_")
    return {n for n in os.listdir("/dev/shm") if n.startswith(prefixes)}


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_dead(pids, timeout: float) -> list[int]:
    """Wait up to `timeout` seconds for `pids` to end; return those still alive."""
    import time

    end = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left
