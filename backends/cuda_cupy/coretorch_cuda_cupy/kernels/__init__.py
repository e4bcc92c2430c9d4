"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`: the
cuda backend's own kernels first (fused CUDA kernels, device-side random draws), then the
backend kit's over CuPy for every op not overridden."""
from coretorch.backend_kit import all_kernels

from ..registry import TABLE as _TABLE
from . import elementwise  # noqa: F401
from . import random  # noqa: F401  (the draws of the kit's random kernels)
from . import reductions  # noqa: F401

_TABLE.fill_from(all_kernels())
