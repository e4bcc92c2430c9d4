"""``coretorch.autograd.profiler``: PyTorch's ``torch.autograd.profiler`` names (the legacy
`profile`, `record_function`, `emit_nvtx`, `emit_itt`, `EventList`, ...), served by the
coretorch-profiler distribution on first use (the core does not depend on it)."""

from __future__ import annotations

from ..profiler._lazy import lazy_module

__getattr__, __dir__ = lazy_module("coretorch.autograd.profiler", "coretorch_profiler.autograd_api")
