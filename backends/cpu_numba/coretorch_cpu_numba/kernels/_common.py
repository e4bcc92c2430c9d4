"""Helpers shared by the kernel modules: numpy views of arguments and writing results, and the
backend kit (`coretorch.backend_kit`) bound to numpy and `as_numpy` (`KIT`)."""
from __future__ import annotations

import numpy as np

from ..elementwise import KIT  # noqa: F401  (re-exported for the kernel modules)
from ..numpy_view import as_numpy


def arr(x):
    """The numpy view of a cpu tensor; other values (scalars, None) pass through."""
    return as_numpy(x) if hasattr(x, "_storage") else x


def scalar(x):
    """A Python scalar from a scalar or a 0-d/one-element tensor."""
    return x.item() if hasattr(x, "_storage") else x


def write(out, values) -> None:
    """Copy `values` (broadcast, cast as PyTorch's out= does) into tensor `out`."""
    np.copyto(as_numpy(out), values, casting="unsafe")


def compute_dtype(d: np.dtype) -> np.dtype:
    """The dtype numpy/numba arithmetic runs in: float16 is computed in float32 (as PyTorch's
    CPU kernels accumulate half in float)."""
    return np.dtype(np.float32) if d == np.float16 else d


def writable_target(out, dtype: np.dtype, shape: tuple):
    """(target, needs_copy): a C-contiguous `shape` view of `out` when it has `dtype`, else a
    fresh buffer the caller copies back with `write`."""
    o = as_numpy(out)
    if o.dtype == dtype and o.flags.c_contiguous:
        return o.reshape(shape), False
    return np.empty(shape, dtype), True
