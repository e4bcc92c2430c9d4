"""Helpers shared by the kernel modules: numpy views of arguments, writing results, and the
backend kit (`coretorch.backend_kit`) bound to numpy and `as_numpy` (`KIT`)."""

from __future__ import annotations

import numpy as np

from ..elementwise import KIT, write  # noqa: F401  (re-exported for the kernel modules)
from ..numpy_view import as_numpy


def arr(x):
    """The numpy view of a cpu tensor; other values (scalars, None) pass through."""
    return as_numpy(x) if hasattr(x, "_storage") else x


def writable_target(out, dtype: np.dtype, shape: tuple):
    """(target, needs_copy): a C-contiguous `shape` view of `out` when it has `dtype`, else a
    fresh buffer the caller copies back with `write`."""
    o = as_numpy(out)
    if o.dtype == dtype and o.flags.c_contiguous:
        return o.reshape(shape), False
    return np.empty(shape, dtype), True
