"""Filling kernels (fill_, arange, linspace):
the backend kit's (`coretorch.backend_kit.factories`) over numpy."""
from __future__ import annotations

from coretorch.backend_kit.factories import factory_kernels

from ..registry import TABLE
from ._common import KIT

# _copy_ is in copy.py: numpy orders overlapping copies itself, so no defensive copy
TABLE.add_all(factory_kernels(KIT), skip=("_copy_",))
