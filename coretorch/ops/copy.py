"""copy_, clone and device/dtype conversion.

`_copy_` (same device, any dtypes, broadcasting src into self) is the backend primitive; `copy_`
adds moves between devices through each backend's `read_numpy`/`write_numpy`, so a backend only
has to move data to and from host memory.
"""
from __future__ import annotations

import numpy as np

from ..device import device as _device, get_device_type
from ..tensor.impl import TensorImpl
from .declare import EXPLICIT, alloc, declare
from .meta_rules import broadcast_shapes
from .view_derivatives import copy_backward, identity_backward

_T = TensorImpl


def _meta_copy_(self, src, non_blocking=False):
    if not isinstance(src, _T):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if broadcast_shapes("copy_", self._shape, src._shape) != self._shape:
        raise RuntimeError(f"copy_(): the source of shape {list(src._shape)} can't be broadcast "
                           f"to the destination of shape {list(self._shape)}")
    return (self._shape, self._dtype, self._device)


def _copy_(self, src, non_blocking=False):
    """Copy `src` (broadcast, cast, from any device) into `self`; returns self."""
    if not isinstance(src, _T):
        return self.fill_(src)
    if self._device is src._device:
        return _copy_same_device(self, src)
    _meta_copy_(self, src)
    values = get_device_type(src._device).read_numpy(src)
    values = np.broadcast_to(values, self._shape).astype(self._dtype.numpy, copy=False)
    get_device_type(self._device).write_numpy(self, values)
    self._vc[0] += 1
    return self


def _fresh(t):
    t._vc[0] = 0  # a new tensor starts at version 0, whatever filling it took
    return t


def _clone(self, *, memory_format=None):
    """A copy with its own (contiguous) storage."""
    out = alloc(self._shape, self._dtype, self._device)
    return _fresh(_copy_same_device(out, self))


def _to_copy(self, *, dtype=None, device=None, non_blocking=False, memory_format=None):
    """A copy with another dtype and/or on another device."""
    dev = self._device if device is None else _device(device)
    out = alloc(self._shape, dtype or self._dtype, dev)
    if dev is self._device:
        return _fresh(_copy_same_device(out, self))
    return _fresh(_copy_(out, self))


_decl = declare("_copy_", _meta_copy_, inplace_only=True, method=False, family="copy",
                derivative=copy_backward)
_copy_same_device = _decl.op
declare("copy_", kind=EXPLICIT, impl=_copy_, inplace_only=True, family="copy",
        derivative=copy_backward)
declare("clone", kind=EXPLICIT, impl=_clone, family="copy", out=False,
        derivative=identity_backward)
declare("_to_copy", kind=EXPLICIT, impl=_to_copy, family="copy", method=False, out=False,
        derivative=identity_backward)
