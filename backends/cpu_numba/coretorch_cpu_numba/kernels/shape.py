"""Shape kernels that copy data (cat, flip, triu/tril):
the backend kit's (`coretorch.backend_kit.shape`) over numpy."""
from __future__ import annotations

from coretorch.backend_kit.shape import shape_kernels

from ..registry import TABLE
from ._common import KIT

TABLE.add_all(shape_kernels(KIT))
