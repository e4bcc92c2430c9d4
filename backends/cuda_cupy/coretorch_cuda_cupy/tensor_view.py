"""Device-array views of cuda tensors (shared memory) and the host copies the core moves data
through (`read_numpy` / `write_numpy`)."""

from __future__ import annotations

import numpy as np

from . import array_module as am

__all__ = ["as_xp", "read_numpy", "write_numpy", "all_finite"]


def as_xp(t):
    """The strided `xp` view of cuda tensor `t` (cached on the tensor; geometry never changes)."""
    a = t._cache
    if a is None:
        d = t._dtype.numpy
        isz = d.itemsize
        a = am.view(
            t._storage.data, t._shape, d, t._offset * isz, tuple(s * isz for s in t._stride)
        )
        t._cache = a
    return a


def read_numpy(t) -> np.ndarray:
    """A host copy of the values of cuda tensor `t` (cupy.asnumpy)."""
    return am.to_host(as_xp(t))


def write_numpy(t, values: np.ndarray) -> None:
    """Copy host array `values` (t's shape and dtype) into cuda tensor `t`."""
    a = as_xp(t)
    if a.size == 0:
        return
    src = am.from_host(np.ascontiguousarray(values, dtype=a.dtype))
    am.xp.copyto(a, src.reshape(a.shape))


def all_finite(t) -> bool:
    """Whether floating cuda tensor `t` holds no NaN and no ±Inf, decided on the device (the
    anomaly detector's check: one bool crosses to the host, not the tensor)."""
    return bool(am.xp.isfinite(as_xp(t)).all())
