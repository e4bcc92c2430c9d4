"""``coretorch.profiler.itt``: PyTorch's Intel ITT annotations, served by coretorch-profiler
(`is_available()` is False; the annotations raise a clear error)."""

from __future__ import annotations

from ._lazy import lazy_module

__getattr__, __dir__ = lazy_module("coretorch.profiler.itt", "coretorch_profiler.itt")
