"""numpy views of cpu tensors (shared memory), and tensors over numpy arrays."""

from __future__ import annotations

import numpy as np

from coretorch.device import device
from coretorch.dtypes import from_numpy_dtype
from coretorch.tensor.impl import new_impl
from coretorch.tensor.storage import Storage
from coretorch.tensor.tensor import Tensor

_CPU = device("cpu")


def as_numpy(t) -> np.ndarray:
    """The strided numpy view of cpu tensor `t` (cached on the tensor; geometry never changes)."""
    a = t._cache
    if a is None:
        dtype = t._dtype
        d = dtype.numpy
        data = t._storage.data
        shape = t._shape
        if (
            len(shape) == 1
            and t._offset == 0
            and t._stride == (1,)
            and len(data) == shape[0] * dtype.itemsize
        ):
            a = data.view(d)  # a whole 1-D buffer (a fresh output): the cheapest view
        else:
            isz = d.itemsize
            # a zero-size view may carry an offset past the end of its (empty) buffer
            off = t._offset * isz if 0 not in shape else 0
            st = t._stride
            # 2-D (a matrix, its transpose) spelled out: a generator costs ~1k instructions
            strides = (st[0] * isz, st[1] * isz) if len(st) == 2 else tuple(s * isz for s in st)
            a = np.ndarray(shape, d, data, off, strides)
        t._cache = a
    return a


def read_numpy(t) -> np.ndarray:
    """The numpy view of cpu tensor `t` (shares its memory)."""
    return as_numpy(t)


def write_numpy(t, values: np.ndarray) -> None:
    """Write `values` (broadcast as numpy does) into cpu tensor `t` in place."""
    as_numpy(t)[...] = values


class _ByteSpan:
    """Exposes the bytes under a (possibly strided) array as one uint8 buffer, keeping it alive."""

    def __init__(self, arr: np.ndarray, span: int):
        self.arr = arr
        self.__array_interface__ = {
            "shape": (span,),
            "typestr": "|u1",
            "version": 3,
            "data": (arr.ctypes.data, not arr.flags.writeable),
        }


def wrap_numpy(arr: np.ndarray) -> Tensor:
    """A cpu tensor sharing `arr`'s memory (``coretorch.from_numpy``)."""
    dtype = from_numpy_dtype(arr.dtype)
    isz = arr.itemsize
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "from_numpy(): At least one stride in the given numpy array is negative, "
            "and tensors with negative strides are not currently supported. (You can "
            "probably work around this by making a copy of your array with "
            "array.copy().)"
        )
    if any(s % isz for s in arr.strides):
        raise ValueError(
            "from_numpy(): given numpy array strides not a multiple of the element "
            "byte size. Copy the numpy array to reallocate the memory."
        )
    if arr.size == 0:
        span = 0
    else:
        span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + isz
    base = np.asarray(_ByteSpan(arr, span)) if span else np.empty(0, np.uint8)
    storage = Storage(base, span, _CPU, None, arr.ctypes.data)
    from coretorch.tensor.impl import device_key_bits

    t = new_impl(
        Tensor,
        storage,
        tuple(arr.shape),
        tuple(s // isz for s in arr.strides),
        0,
        dtype,
        _CPU,
        device_key_bits["cpu"],
    )
    t._cache = arr
    return t
