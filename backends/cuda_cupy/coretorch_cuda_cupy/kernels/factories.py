"""Filling kernels (fill_, arange, linspace) and _copy_:
the backend kit's (`coretorch.backend_kit.factories`) over CuPy."""
from __future__ import annotations

from coretorch.backend_kit.factories import factory_kernels

from ..registry import TABLE
from ._common import KIT

TABLE.add_all(factory_kernels(KIT))
