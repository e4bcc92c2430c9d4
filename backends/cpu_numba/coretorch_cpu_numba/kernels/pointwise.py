"""Elementwise kernels."""
from __future__ import annotations

import numpy as np

from ..numpy_view import as_numpy
from ..registry import kernel


def _np(x):
    return as_numpy(x) if hasattr(x, "_storage") else x


@kernel("_copy_")
def copy_(out, self, src, non_blocking=False):
    np.copyto(as_numpy(out), _np(src), casting="unsafe")


@kernel("fill_")
def fill_(out, self, value):
    as_numpy(out).fill(value.item() if hasattr(value, "_storage") else value)


@kernel("add")
def add(out, self, other, *, alpha=1):
    a, b = _np(self), _np(other)
    if alpha != 1:
        b = b * alpha
    np.add(a, b, out=as_numpy(out), casting="unsafe")
