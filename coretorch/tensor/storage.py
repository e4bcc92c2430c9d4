"""`Storage` (a device buffer and its size) and the `Allocator` base class backends extend.

Every allocation and free is counted (allocated, peak, number of live buffers) and reported to the
memory hooks, which is how the profiler sees memory without patching anything.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["Storage", "Allocator", "add_memory_hook", "remove_memory_hook", "MemoryEvent"]


class MemoryEvent:
    """What memory hooks receive: an allocation (nbytes > 0) or a free (nbytes < 0)."""

    __slots__ = ("address", "nbytes", "device", "total_allocated", "total_reserved")

    def __init__(
        self, address: int, nbytes: int, device, total_allocated: int, total_reserved: int
    ):
        self.address, self.nbytes, self.device = address, nbytes, device
        self.total_allocated, self.total_reserved = total_allocated, total_reserved

    def __repr__(self) -> str:
        kind = "alloc" if self.nbytes >= 0 else "free"
        return (
            f"MemoryEvent({kind}, {abs(self.nbytes)} bytes, {self.device}, addr={self.address:#x})"
        )


_hooks: list[Callable[[MemoryEvent], None]] = []
_new = object.__new__


def add_memory_hook(fn: Callable[[MemoryEvent], None]) -> Callable[[MemoryEvent], None]:
    """Call `fn(event)` on every allocation and free on every device."""
    _hooks.append(fn)
    return fn


def remove_memory_hook(fn: Callable[[MemoryEvent], None]) -> None:
    """Stop calling `fn` on memory events (no-op when it is not registered)."""
    if fn in _hooks:
        _hooks.remove(fn)


class Storage:
    """A buffer on a device: `data` is the backend's object (a numpy byte array on cpu, None on
    meta), `nbytes` its size. Freed (and reported) when the last tensor using it goes away."""

    __slots__ = ("data", "nbytes", "device", "allocator", "address", "__weakref__")

    def __init__(
        self, data: Any, nbytes: int, device, allocator: "Allocator | None" = None, address: int = 0
    ):
        self.data, self.nbytes, self.device = data, nbytes, device
        self.allocator, self.address = allocator, address

    def __del__(self):
        a = self.allocator
        if a is not None:
            self.allocator = None
            # Allocator.release inlined for allocators without a raw_free (cpu): every op's
            # output is freed here; measured (benchmarks/instructions.py --layers) ~0.7k
            # instructions less per freed tensor
            if a._plain_free and not _hooks:
                a.allocated -= self.nbytes
                a.num_frees += 1
            else:
                a.release(self)

    def __repr__(self) -> str:
        return f"Storage({self.nbytes} bytes, device='{self.device}')"

    def _replace_buffer(self, data: Any, address: int) -> None:
        """Put `data` (a buffer already holding this storage's bytes, e.g. in shared memory)
        under this storage in place of the current buffer, which goes back to its allocator.
        Tensors keep this storage; views a backend cached on them must be dropped by the caller
        (``coretorch.multiprocessing`` does, when it moves a storage into shared memory)."""
        a = self.allocator
        if a is not None:
            self.allocator = None
            a.release(self)
        self.data, self.address = data, address


class Allocator:
    """Base allocator: a backend overrides `raw_allocate` (and `raw_free` if it must).

    Keeps the statistics PyTorch users know (allocated, peak, reserved, counts) and reports every
    allocation and free to the memory hooks.
    """

    def __init__(self) -> None:
        self.allocated = 0
        self.peak = 0
        self.num_allocs = 0
        self.num_frees = 0
        self._next_address = 0x1000
        # no raw_free to call: a free is only counted (Storage.__del__'s fast path)
        self._plain_free = type(self).raw_free is Allocator.raw_free

    # ---- what a backend implements ----
    def raw_allocate(self, nbytes: int, device) -> tuple[Any, int]:
        """Return (buffer, address) for `nbytes` bytes on `device`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement raw_allocate")

    def raw_free(self, storage: Storage) -> None:
        """Give the buffer back (the default lets the garbage collector do it)."""

    def reserved(self) -> int:
        """Bytes held from the system, including caches (defaults to allocated)."""
        return self.allocated

    # ---- what the core calls ----
    def allocate(self, nbytes: int, device) -> Storage:
        """A new Storage of `nbytes` on `device`, counted in the statistics and reported to the
        memory hooks."""
        data, address = self.raw_allocate(nbytes, device)
        allocated = self.allocated = self.allocated + nbytes
        self.num_allocs += 1
        if allocated > self.peak:
            self.peak = allocated
        # Storage.__init__ inlined: ~0.6k instructions less per allocation (measured as above)
        s = _new(Storage)
        s.data, s.nbytes, s.device, s.allocator, s.address = data, nbytes, device, self, address
        if _hooks:
            ev = MemoryEvent(address, nbytes, device, self.allocated, self.reserved())
            for h in _hooks:
                h(ev)
        return s

    def release(self, storage: Storage) -> None:
        """Free `storage`, counted in the statistics and reported to the memory hooks."""
        self.allocated -= storage.nbytes
        self.num_frees += 1
        self.raw_free(storage)
        if _hooks:
            ev = MemoryEvent(
                storage.address, -storage.nbytes, storage.device, self.allocated, self.reserved()
            )
            for h in _hooks:
                h(ev)

    def fake_address(self, nbytes: int) -> int:
        """A unique address for buffers that have none (meta), 64-byte aligned."""
        a = self._next_address
        self._next_address += (nbytes + 63) // 64 * 64 + 64
        return a

    def stats(self) -> dict[str, int]:
        """The allocated, peak and reserved bytes and the allocation, free and live counts."""
        return {
            "allocated_bytes": self.allocated,
            "peak_bytes": self.peak,
            "reserved_bytes": self.reserved(),
            "num_allocs": self.num_allocs,
            "num_frees": self.num_frees,
            "num_live": self.num_allocs - self.num_frees,
        }

    def reset_peak_stats(self) -> None:
        """Reset the peak to the bytes allocated now."""
        self.peak = self.allocated
