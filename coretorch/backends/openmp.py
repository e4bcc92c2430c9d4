"""``coretorch.backends.openmp``: coretorch's parallel cpu kernels use numba's threading layer,
not an OpenMP runtime of its own."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: coretorch is not built with OpenMP."""
    return False
