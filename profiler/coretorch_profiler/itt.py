"""``coretorch.profiler.itt``: PyTorch's Intel ITT (VTune) annotations. coretorch drives no ITT
collector: `is_available()` is False and the annotations raise a clear error."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_WHY = (
    "Intel ITT (VTune) instrumentation is not available in coretorch; use "
    "coretorch.profiler.profile and record_function for annotated traces"
)


def is_available() -> bool:
    """Whether ITT annotations reach a collector: never in coretorch."""
    return False


def range_push(msg: str) -> int:
    """Raises RuntimeError: coretorch has no ITT collector."""
    raise RuntimeError(f"itt.range_push(): {_WHY}")


def range_pop() -> int:
    """Raises RuntimeError: coretorch has no ITT collector."""
    raise RuntimeError(f"itt.range_pop(): {_WHY}")


def mark(msg: str) -> None:
    """Raises RuntimeError: coretorch has no ITT collector."""
    raise RuntimeError(f"itt.mark(): {_WHY}")


@contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001  (PyTorch's name)
    """Raises RuntimeError: coretorch has no ITT collector."""
    raise RuntimeError(f"itt.range(): {_WHY}")
    yield  # pragma: no cover
