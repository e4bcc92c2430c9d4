"""Saving and restoring module-level switches for the ``flags(...)`` context managers."""

from __future__ import annotations

import contextlib
from types import ModuleType


@contextlib.contextmanager
def switched(module: ModuleType, **values):
    """Set the module attributes named in `values` (None leaves one as it is), restore on exit."""
    saved = {name: getattr(module, name) for name, v in values.items() if v is not None}
    try:
        for name in saved:
            setattr(module, name, values[name])
        yield
    finally:
        for name, v in saved.items():
            setattr(module, name, v)
