"""Reduction kernels: the backend kit's (`coretorch.backend_kit.reductions`) over CuPy."""
from __future__ import annotations

from coretorch.backend_kit.reductions import reduction_kernels

from ..registry import TABLE
from ._common import KIT

TABLE.add_all(reduction_kernels(KIT))
