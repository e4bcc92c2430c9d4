"""DLPack interop: `Tensor.__dlpack__`, `Tensor.__dlpack_device__` and `from_dlpack`.

Built on numpy's DLPack support (numpy >= 2): a host tensor is exported through its shared
numpy view, and `from_dlpack` imports any host producer (numpy arrays, PyTorch CPU tensors, ...)
as a numpy array and wraps it with `from_numpy`. Memory is shared both ways, never copied.
"""

from __future__ import annotations

import numpy as np

from .device import get_device_type
from .tensor.impl import TensorImpl

__all__ = ["from_dlpack", "to_dlpack_capsule", "dlpack_device"]

_KDLCPU = 1  # DLDeviceType of host memory


def _host_array(t, op: str) -> np.ndarray:
    if t.requires_grad:
        raise RuntimeError(
            f"{op}(): Can't export tensors that require gradient, use tensor.detach()"
        )
    if t._device.type != "cpu":
        raise NotImplementedError(
            f"{op}(): DLPack export is implemented for cpu tensors only, "
            f"got a tensor on {t._device}; use .cpu() first"
        )
    return get_device_type(t._device).read_numpy(t)


def to_dlpack_capsule(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """What `Tensor.__dlpack__` returns: a DLPack capsule sharing this cpu tensor's memory."""
    arr = _host_array(self, "__dlpack__")
    return arr.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def dlpack_device(self) -> tuple:
    """What `Tensor.__dlpack_device__` returns: (1, 0), host memory."""
    _host_array(self, "__dlpack_device__")
    return (_KDLCPU, 0)


def from_dlpack(ext_tensor):
    """A cpu tensor sharing memory with `ext_tensor` (any object with ``__dlpack__``)."""
    if isinstance(ext_tensor, TensorImpl):
        return ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack(): expected an object with __dlpack__ (a numpy array, a "
            f"PyTorch tensor, ...), got {type(ext_tensor).__name__}"
        )
    dev = ext_tensor.__dlpack_device__() if hasattr(ext_tensor, "__dlpack_device__") else None
    if dev is not None and int(dev[0]) != _KDLCPU:
        raise NotImplementedError(
            f"from_dlpack(): only host (kDLCPU) memory can be imported, "
            f"got DLPack device type {int(dev[0])}"
        )
    from .ops.factories_public import from_numpy

    return from_numpy(np.from_dlpack(ext_tensor))
