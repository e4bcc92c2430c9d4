"""Matrix products (mm, bmm; numpy's BLAS, straight into `out`):
the backend kit's (`coretorch.backend_kit.linalg`) over numpy."""
from __future__ import annotations

from coretorch.backend_kit.linalg import linalg_kernels

from ..registry import TABLE
from ._common import KIT

TABLE.add_all(linalg_kernels(KIT))
