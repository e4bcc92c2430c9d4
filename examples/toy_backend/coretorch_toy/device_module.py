"""``coretorch.toy``: the device module, shaped like ``torch.cuda``."""

from __future__ import annotations

from .memory import allocator

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "synchronize",
    "memory_allocated",
    "max_memory_allocated",
]


def is_available() -> bool:
    """Whether toy tensors can be created (always: the toy device is host memory)."""
    return True


def device_count() -> int:
    """The number of toy devices."""
    return 1


def current_device() -> int:
    """The index of the current toy device."""
    return 0


def synchronize(device=None) -> None:
    """Wait for all work queued on the device: toy kernels run synchronously, so none is left."""


def memory_allocated(device=None) -> int:
    """Bytes currently held by toy tensors."""
    return allocator.stats()["allocated_bytes"]


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` in this process."""
    return allocator.stats()["peak_bytes"]
