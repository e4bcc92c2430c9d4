"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`: the
cpu backend's own kernels first, then the backend kit's for every op not overridden."""

import importlib
import pkgutil

from coretorch.backend_kit import all_kernels

from ..registry import TABLE as _TABLE

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")  # each module registers its kernels

_TABLE.fill_from(all_kernels())
