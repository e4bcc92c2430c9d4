"""OpInfo entries, one module per group of ops (mirroring coretorch/ops): every module of this
package with an ``OPS`` list contributes (a new file needs no line here)."""

from __future__ import annotations

import importlib
import pkgutil

ALL_OPINFOS = [
    info
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
    for info in getattr(importlib.import_module(f"{__name__}.{m.name}"), "OPS", [])
]
