"""Device memory of the toy backend: the allocator, and copies to and from host memory.

A toy buffer is a numpy uint8 array standing in for device memory. Only this backend looks
inside it (through `device_array`); the core moves data with `read_numpy` / `write_numpy`,
which copy, as they would for memory on a real accelerator.
"""

from __future__ import annotations

import numpy as np

from coretorch.tensor.storage import Allocator

__all__ = ["ToyAllocator", "allocator", "device_array", "read_numpy", "write_numpy"]


class ToyAllocator(Allocator):
    """Hands out numpy byte buffers. The base class keeps the statistics (allocated, peak, ...)
    and reports every allocation and free to the memory hooks (the profiler's memory view)."""

    def raw_allocate(self, nbytes: int, device) -> tuple[np.ndarray, int]:
        buf = np.empty(nbytes, np.uint8)
        return buf, buf.__array_interface__["data"][0]


allocator = ToyAllocator()


def device_array(t) -> np.ndarray:
    """The strided numpy view of toy tensor `t` over its buffer (shares memory: kernels write
    their results through it)."""
    dtype = t._dtype.numpy
    if 0 in t._shape:
        return np.empty(t._shape, dtype)
    size = dtype.itemsize
    return np.ndarray(
        t._shape, dtype, t._storage.data, t._offset * size, tuple(s * size for s in t._stride)
    )


def read_numpy(t) -> np.ndarray:
    """Device -> host: a numpy array holding a copy of `t`'s values."""
    return device_array(t).copy()


def write_numpy(t, values: np.ndarray) -> None:
    """Host -> device: copy `values` (shaped like `t`, of its dtype) into `t`."""
    device_array(t)[...] = values
