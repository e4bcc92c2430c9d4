"""Indexing kernels: the backend kit's (`coretorch.backend_kit.indexing`) over numpy."""
from __future__ import annotations

from coretorch.backend_kit.indexing import indexing_kernels

from ..registry import TABLE
from ._common import KIT

TABLE.add_all(indexing_kernels(KIT))
