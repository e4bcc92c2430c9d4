"""``coretorch.profiler``: PyTorch's ``torch.profiler`` names (`profile`, `record_function`,
`ProfilerActivity`, `schedule`, `tensorboard_trace_handler`, `itt`, ...).

They are served by the coretorch-profiler distribution, imported on first use: the core does
not depend on it, and a missing profiler is reported when a name is used.
"""

from __future__ import annotations

from ._lazy import lazy_module

__getattr__, __dir__ = lazy_module("coretorch.profiler", "coretorch_profiler.torch_api")
