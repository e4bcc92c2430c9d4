"""Factories from Python data: `tensor`, `as_tensor`, `asarray`, `from_numpy`."""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as dt
from ..device import get_device_type
from ..tensor.tensor import Tensor
from .declare import alloc
from .meta_rules import resolve_device

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "as_index_tensor"]

_T = Tensor


def _as_list(data):
    """Any other Python sequence (range, deque, ...) as a list, as PyTorch reads sequences."""
    if isinstance(data, (list, tuple, _T, np.ndarray, str, bytes, dict)):
        return data
    if hasattr(data, "__len__") and hasattr(data, "__getitem__"):
        return [_as_list(x) for x in data]
    return data


def _to_array(data, op: str) -> np.ndarray:
    """numpy array of Python data (nested sequences, scalars, 0-d tensors, numpy arrays)."""
    if isinstance(data, _T):
        return np.asarray(get_device_type(data._device).read_numpy(data))
    data = _as_list(data)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, _T) for x in _flat_first(data)):
            data = _tensors_to_lists(data)
        try:
            return np.array(data)
        except ValueError as e:
            raise ValueError(
                f"{op}(): expected a sequence of equal-length sequences (a "
                f"rectangular nested list); {e}"
            ) from None
    if isinstance(data, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.asarray(data)
    raise TypeError(
        f"{op}(): could not infer dtype of {type(data).__name__}; expected a number, "
        f"a (nested) sequence of numbers, a numpy array or a tensor"
    )


def _flat_first(data):
    while isinstance(data, (list, tuple)) and data:
        yield data[0]
        data = data[0]


def _tensors_to_lists(data):
    if isinstance(data, _T):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def _infer_dtype(data, arr: np.ndarray):
    if isinstance(data, (np.ndarray, np.generic)):
        return dt.from_numpy_dtype(arr.dtype)
    if isinstance(data, _T):
        return data._dtype
    leaf = next(iter(_flat_first(data)), None) if isinstance(data, (list, tuple)) else None
    if isinstance(leaf, np.generic) and arr.dtype.kind in "biufc":
        return dt.from_numpy_dtype(arr.dtype)  # numpy scalars keep their dtype, as in torch
    kind = arr.dtype.kind
    if kind == "b":
        return dt.bool
    if kind in "iu":
        return dt.int64
    if kind == "f":
        return dt.get_default_dtype()
    if kind == "c":
        return dt.get_default_complex_dtype()
    if kind == "O" or kind == "U" or kind == "S":
        raise TypeError(
            f"tensor(): could not convert data of numpy kind {arr.dtype} to a tensor; "
            f"coretorch supports bool, integer, float and complex data"
        )
    return dt.from_numpy_dtype(arr.dtype)


def _leaves(data):
    if isinstance(data, (list, tuple)):
        for x in data:
            yield from _leaves(x)
    else:
        yield data


def _python_ints(data) -> tuple:
    """(whether nested Python `data` holds an int outside int64's range, whether it holds a
    float): numpy turns such ints into uint64, objects or float64 silently."""
    big = has_float = False
    for x in _leaves(data):
        if x.__class__ is int:
            big = big or not dt.INT64_MIN <= x <= dt.INT64_MAX
        elif isinstance(x, float):
            has_float = True
    return big, has_float


def _check_python_ints(data, arr: np.ndarray, dtype) -> np.ndarray:
    """PyTorch's overflow check for Python ints, before the dtype is inferred (`dtype` None) or
    with the one asked for: an integer dtype must hold every value (uint8 also takes negatives
    down to -255, which wrap); data with an int beyond int64 and no float is int64 data that
    overflows. Returns `arr`, as float64 where numpy made objects of big ints."""
    if isinstance(data, (np.ndarray, np.generic, _T)) or arr.size == 0 or dtype is dt.bool:
        return arr
    kind = arr.dtype.kind
    if kind in "uO" or (kind == "f" and float(np.abs(arr).max()) > dt.INT64_MAX):
        big, has_float = _python_ints(data)
        if big and (not has_float if dtype is None else not dtype.is_floating_point):
            value = max((x for x in _leaves(data) if x.__class__ is int), key=abs)
            raise dt.overflow_error(dtype or dt.int64, value, "tensor")
        if big and kind == "O":
            return arr.astype(np.float64)
    if dtype is None:
        return arr
    if kind in "iu" and dtype.category == dt.int64.category and dtype is not dt.int64:
        info = np.iinfo(dtype.numpy)
        lo, hi = int(arr.min()), int(arr.max())
        if hi > info.max or lo < (info.min if dtype.is_signed else -int(info.max)):
            raise dt.overflow_error(dtype, hi if hi > info.max else lo, "tensor")
    return arr


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False):
    """A new tensor holding a copy of `data` (dtype inferred as in PyTorch).

    Args:
        data: a number, a (nested, rectangular) sequence of numbers, a numpy array or a tensor
            (copying a tensor warns: use ``t.clone().detach()``).
        dtype: the result's dtype; by default int64 for integers, bool for bools and the
            default dtype (float32) for floats.
        device: where the result lives (the default device when None).
        requires_grad: whether autograd records operations on the result.

    Raises:
        ValueError: when nested sequences are ragged.
        TypeError: when an element is not a number, sequence, array or tensor.

    Examples:
        >>> import coretorch
        >>> x = coretorch.tensor([[1., 2., 3.], [4., 5., 6.]])
        >>> x
        tensor([[1., 2., 3.],
                [4., 5., 6.]])
        >>> x.dtype, x.shape
        (coretorch.float32, coretorch.Size([2, 3]))
        >>> coretorch.tensor([1, 2, 3]).dtype
        coretorch.int64
        >>> coretorch.zeros(2, 2)
        tensor([[0., 0.],
                [0., 0.]])
        >>> coretorch.ones(3, dtype=coretorch.int32)
        tensor([1, 1, 1], dtype=coretorch.int32)
        >>> coretorch.full((2,), 7.5)
        tensor([7.5000, 7.5000])
        >>> coretorch.arange(6).view(2, 3)
        tensor([[0, 1, 2],
                [3, 4, 5]])
        >>> coretorch.arange(6.).reshape(3, -1).sum(dim=0)
        tensor([6., 9.])
        >>> x.mean(), x.mean(dim=1, keepdim=True)
        (tensor(3.5000), tensor([[2.],
                [5.]]))
        >>> coretorch.tensor([[1, 2], [3]])
        Traceback (most recent call last):
            ...
        ValueError: tensor(): expected a sequence of equal-length sequences ...
    """
    if isinstance(data, _T):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.clone().detach() rather than coretorch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    arr = _to_array(data, "tensor")
    arr = _check_python_ints(data, arr, dtype)
    dtype = dtype or _infer_dtype(data, arr)
    dev = resolve_device(device)
    out = alloc(tuple(arr.shape), dtype, dev)
    get_device_type(dev).write_numpy(out, arr.astype(dtype.numpy, copy=False))
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, without copying when it already is one with that dtype and device."""
    if isinstance(data, _T):
        return data.to(device=device, dtype=dtype)
    if (
        isinstance(data, np.ndarray)
        and (device is None or resolve_device(device).type == "cpu")
        and (dtype is None or dt.from_numpy_dtype(data.dtype) is dtype)
    ):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray):
    """A cpu tensor sharing memory with `ndarray` (writes through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(ndarray).__name__})")
    entry = get_device_type("cpu")
    if entry.wrap_numpy is None:
        raise RuntimeError("from_numpy(): the loaded cpu backend cannot share numpy memory")
    return entry.wrap_numpy(ndarray)


def as_index_tensor(i, device):
    """An index (tensor, list, numpy array, bool) as an integer or bool tensor on `device`."""
    if isinstance(i, _T):
        if i._dtype.is_floating_point:
            raise IndexError(
                f"tensors used as indices must be long, int, byte or bool tensors, "
                f"got {i._dtype.name}"
            )
        return i
    if isinstance(i, bool):
        return tensor(i, device=device)
    arr = _to_array(i, "index")
    if arr.dtype.kind == "f":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tensor(arr, dtype=dt.bool if arr.dtype.kind == "b" else dt.int64, device=device)
