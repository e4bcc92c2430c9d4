"""``coretorch.backends.cudnn``: coretorch's cuda backend computes convolutions itself (im2col and
cuBLAS) and never calls cuDNN, so `is_available()` is False. `enabled`, `benchmark`,
`deterministic`, `allow_tf32` and `benchmark_limit` are accepted and kept (reading back what was
set, as in PyTorch); they change nothing here."""

from __future__ import annotations

import sys

from ._flags import switched

__all__ = ["is_available", "is_acceptable", "version", "flags", "set_flags"]

enabled: bool = True
benchmark: bool = False
benchmark_limit: int = 10
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """False: no coretorch backend calls cuDNN."""
    return False


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take `tensor`: never here."""
    return False


def version() -> None:
    """The cuDNN version (None: coretorch does not use cuDNN)."""
    return None


def set_flags(
    _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None
) -> tuple:
    """Set the switches given (None keeps one); returns the previous values."""
    m = sys.modules[__name__]
    orig = (m.enabled, m.benchmark, m.benchmark_limit, m.deterministic, m.allow_tf32)
    for name, v in zip(
        ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32"),
        (_enabled, _benchmark, _benchmark_limit, _deterministic, _allow_tf32),
    ):
        if v is not None:
            setattr(m, name, v)
    return orig


def flags(
    enabled: bool = False,
    benchmark: bool = False,
    benchmark_limit: int = 10,
    deterministic: bool = False,
    allow_tf32: bool = True,
):
    """Context manager setting the switches for its body (PyTorch's signature and defaults)."""
    return switched(
        sys.modules[__name__],
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
