"""64-byte aligned host buffers with the core's statistics and memory events."""
from __future__ import annotations

import numpy as np

from coretorch.tensor.storage import Allocator

ALIGN = 64


class CPUAllocator(Allocator):
    """Buffers are numpy uint8 arrays whose first byte is 64-byte aligned."""

    def raw_allocate(self, nbytes: int, device):
        raw = np.empty(nbytes + ALIGN, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGN
        data = raw[start:start + nbytes]
        return data, raw.ctypes.data + start


allocator = CPUAllocator()
