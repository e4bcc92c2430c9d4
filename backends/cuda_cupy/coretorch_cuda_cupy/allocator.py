"""The cuda allocator: buffers from CuPy's memory pool, with the core's statistics and events.

CuPy's pool does the caching (freed blocks stay reserved for reuse); this class adds what the
core's `Allocator` base provides on every device (allocated / peak counts, memory events to the
profiler) and PyTorch's out-of-memory behaviour: on OOM free the pool's cached blocks once,
retry, and only then raise `OutOfMemoryError` with the sizes involved.
"""

from __future__ import annotations

from typing import Any

from coretorch.tensor.storage import Allocator

from . import array_module as am

__all__ = ["CudaAllocator", "OutOfMemoryError", "CupyPool", "allocator", "format_bytes"]


class OutOfMemoryError(RuntimeError):
    """A cuda allocation failed even after the memory pool's cache was freed
    (PyTorch's ``torch.cuda.OutOfMemoryError``, also a RuntimeError)."""


def format_bytes(n: int) -> str:
    """`n` bytes as a short human-readable size ('1.50 MiB')."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} bytes"


class CupyPool:
    """The memory pool the allocator draws from: CuPy's default pool (host buffers in emulation,
    where nothing is cached: reserved equals allocated)."""

    def malloc(self, nbytes: int) -> tuple[Any, int]:
        """(buffer, address) of a fresh `nbytes` buffer."""
        buf = am.empty_bytes(nbytes)
        return buf, am.address(buf)

    def free_all_blocks(self) -> None:
        """Give the pool's cached (unused) blocks back to the driver."""
        if not am.EMULATED:
            am.xp.get_default_memory_pool().free_all_blocks()

    def total_bytes(self) -> int | None:
        """Bytes the pool holds from the driver (in use + cached); None when not tracked."""
        if am.EMULATED:
            return None
        return am.xp.get_default_memory_pool().total_bytes()


class CudaAllocator(Allocator):
    """Allocates cuda buffers from `pool` (a `CupyPool` unless a test passes another)."""

    def __init__(self, pool: Any = None) -> None:
        super().__init__()
        self.pool = pool if pool is not None else CupyPool()
        self.num_oom_retries = 0
        self.num_ooms = 0

    def raw_allocate(self, nbytes: int, device):
        ok, why = am.availability()
        if not ok:
            raise RuntimeError(
                f"cannot create a tensor on {device}: CUDA is not available "
                f"({why}). coretorch.cuda.is_available() tells whether it is; "
                f"use device='cpu' instead"
            )
        with am.device_guard(device.index):
            try:
                return self.pool.malloc(nbytes)
            except am.OOM_ERRORS:
                pass
            # the pool may hold freed blocks of other sizes: release them and try once more
            self.num_oom_retries += 1
            self.pool.free_all_blocks()
            try:
                return self.pool.malloc(nbytes)
            except am.OOM_ERRORS as e:
                self.num_ooms += 1
                reserved = self.reserved()
                raise OutOfMemoryError(
                    f"CUDA out of memory. Tried to allocate {format_bytes(nbytes)} on {device}; "
                    f"coretorch tensors hold {format_bytes(self.allocated)} and the memory pool "
                    f"reserves {format_bytes(reserved)} even after freeing its cached blocks. "
                    f"Free tensors (del) or use smaller batches. ({type(e).__name__}: {e})"
                ) from e

    def reserved(self) -> int:
        total = self.pool.total_bytes()
        return self.allocated if total is None else max(int(total), self.allocated)

    def empty_cache(self) -> None:
        """Release the pool's cached blocks (memory in use is unaffected)."""
        self.pool.free_all_blocks()


allocator = CudaAllocator()
