"""copy_, clone and device/dtype conversion.

`_copy_` (same device, any dtypes, broadcasting src into self) is the backend primitive; `copy_`
adds moves between devices through each backend's `read_numpy`/`write_numpy`, so a backend only
has to move data to and from host memory.
"""

from __future__ import annotations

import numpy as np

from ..device import get_device_type
from ..memory_formats import check_memory_format, memory_format_arg, restride
from ..tensor.impl import TensorImpl
from .declare import EXPLICIT, alloc, declare
from .meta_rules import broadcasts_to, resolve_device
from .view_derivatives import copy_backward, identity_backward

_T = TensorImpl


def _meta_copy(self, src, non_blocking):
    if not broadcasts_to(src._shape, self._shape):
        raise RuntimeError(
            f"copy_(): the source of shape {list(src._shape)} can't be broadcast "
            f"to the destination of shape {list(self._shape)}"
        )
    return (self._shape, self._dtype, self._device)


def _meta_copy_same_device(self, src, non_blocking):
    if src._device is not self._device:
        raise RuntimeError(
            f"_copy_(): expected src on {self._device}, got {src._device} (copy_ "
            f"moves data between devices)"
        )
    return _meta_copy(self, src, non_blocking)


def _copy(self, src, non_blocking):
    """Copy `src` (broadcast, cast, from any device) into `self`; returns self."""
    if self._device is src._device:
        return _copy_same_device(self, src, non_blocking)
    _meta_copy(self, src, non_blocking)
    values = get_device_type(src._device).read_numpy(src)
    values = np.broadcast_to(values, self._shape).astype(self._dtype.numpy, copy=False)
    get_device_type(self._device).write_numpy(self, values)
    self._vc[0] += 1
    return self


def _fresh(t):
    t._vc[0] = 0  # a new tensor starts at version 0, whatever filling it took
    return t


def _meta_clone(self, memory_format):
    check_memory_format("clone", len(self._shape), memory_format)
    return (self._shape, self._dtype, self._device)


def _clone(self, memory_format):
    """A copy with its own storage, in `memory_format` (default: the format `self` is in)."""
    out = restride(
        alloc(self._shape, self._dtype, self._device),
        "clone",
        memory_format_arg("clone", memory_format),
        self,
    )
    return _fresh(_copy_same_device(out, self, False))


def _meta_to_copy(self, dtype, device, non_blocking, memory_format):
    check_memory_format("to", len(self._shape), memory_format)
    return (
        self._shape,
        self._dtype if dtype is None else dtype,
        self._device if device is None else resolve_device(device),
    )


def _to_copy(self, dtype, device, non_blocking, memory_format):
    """A copy with another dtype, device and/or memory format."""
    out = restride(
        alloc(*_meta_to_copy(self, dtype, device, non_blocking, memory_format)),
        "to",
        memory_format_arg("to", memory_format),
        self,
    )
    if out._device is self._device:
        return _fresh(_copy_same_device(out, self, False))
    return _fresh(_copy(out, self, False))


_decl = declare(
    "_copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    _meta_copy_same_device,
    method=False,
    family="copy",
    derivative=copy_backward,
    saves=(),
    doc="Copy `src` (broadcast, cast to self's dtype) into `self` on the "
    "same device; the primitive behind copy_.",
)
_copy_same_device = _decl.op.entry
declare(
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    impl=_copy,
    kind=EXPLICIT,
    family="copy",
    derivative=copy_backward,
    saves=(),
)
declare(
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    _meta_clone,
    impl=_clone,
    kind=EXPLICIT,
    family="copy",
    out=False,
    derivative=identity_backward,
    saves=(),
)
declare(
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, "
    "bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    _meta_to_copy,
    impl=_to_copy,
    kind=EXPLICIT,
    family="copy",
    method=False,
    out=False,
    derivative=identity_backward,
    saves=(),
)
