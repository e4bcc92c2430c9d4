"""Per-thread scratch buffers reused across kernel calls: a multi-megabyte temporary allocated
afresh page-faults on every call (about as long as the work it holds)."""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["scratch"]

_local = threading.local()


def scratch(slot: str, shape: tuple, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of `shape` from this thread's buffer named `slot`;
    valid until the next request for the same slot and dtype on this thread."""
    need = 1
    for n in shape:
        need *= int(n)
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    key = (slot, np.dtype(dtype))
    b = bufs.get(key)
    if b is None or b.size < need:
        b = bufs[key] = np.empty(max(need, 1), dtype)
    return b[:need].reshape(shape)
