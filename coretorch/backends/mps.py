"""``coretorch.backends.mps``: no coretorch backend runs on Apple's Metal (MPS)."""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_available() -> bool:
    """False: no loaded coretorch backend provides device ``mps``."""
    from ..device import device_types

    entry = device_types().get("mps")
    return bool(entry is not None and entry.is_available())


def is_built() -> bool:
    """Whether a backend serving device ``mps`` is loaded (none ships with coretorch)."""
    from ..device import device_types

    return "mps" in device_types()


def is_macos_or_newer(major: int, minor: int) -> bool:
    """False unless an mps backend is available (PyTorch answers the same without MPS)."""
    return is_available()


def is_macos13_or_newer(minor: int = 0) -> bool:
    """True when running on macOS 13.`minor` or newer."""
    return is_macos_or_newer(13, minor)
