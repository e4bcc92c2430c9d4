"""``coretorch.cpu``: the cpu device module, shaped like ``torch.cpu`` (the cpu is always there)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..amp.device_aliases import device_amp_module

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]

amp = device_amp_module("cpu", _dt.bfloat16)


def is_available() -> bool:
    """Always True."""
    return True


def device_count() -> int:
    """1: coretorch sees the cpu as one device."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: cpu kernels run synchronously."""
