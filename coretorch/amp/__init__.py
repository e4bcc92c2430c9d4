"""``coretorch.amp``: automatic mixed precision, as ``torch.amp``.

`autocast` runs matmul/conv/linear in bfloat16 or float16 and keeps losses (and, on cuda,
softmax, norms and reductions) in float32, per PyTorch's per-device op lists; it is the
`Autocast` dispatch key (see `autocast_mode`). `GradScaler` scales the loss and skips optimizer
steps whose gradients overflowed.
"""

from __future__ import annotations

from . import device_aliases  # noqa: F401  (coretorch.cpu.amp, coretorch.cuda.amp)
from .autocast_mode import autocast, register_autocast_kernels
from .grad_scaler import GradScaler
from .state import (
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

__all__ = [
    "autocast",
    "GradScaler",
    "is_autocast_available",
    "is_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "is_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
]

register_autocast_kernels()
