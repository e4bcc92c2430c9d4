"""default_collate / default_convert: turn a list of samples into a batch (PyTorch's rules)."""

from __future__ import annotations

import collections.abc
import re

import numpy as np

from ... import dtypes as _dt
from ...multiprocessing.tensor_sharing import empty_shared
from ...ops import aten
from ...ops.factories_public import as_tensor, tensor
from ...tensor.tensor import Tensor
from .worker_info import get_worker_info

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data):
    """Convert numpy arrays (and arrays inside mappings/sequences) to tensors; leave the rest."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, np.generic):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            # its own type
            return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            # its own type
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stacks_into_shared_memory(elem: Tensor, batch) -> bool:
    shape, dtype = elem.shape, elem.dtype
    return elem.device.type == "cpu" and all(
        isinstance(b, Tensor)
        and b.shape == shape
        and b.dtype is dtype
        and b.device == elem.device
        and not b.requires_grad
        for b in batch
    )


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked along a new dim 0, numpy arrays
    and numbers become tensors (floats as float64, ints as int64), strings stay a list, and
    dicts / tuples / lists are collated field by field.

    Examples:
        >>> import coretorch
        >>> from coretorch.utils.data import default_collate
        >>> default_collate([(coretorch.tensor([1., 2.]), 0), (coretorch.tensor([3., 4.]), 1)])
        [tensor([[1., 2.],
                [3., 4.]]), tensor([0, 1])]
        >>> default_collate([{"x": 1.5, "name": "a"}, {"x": 2.5, "name": "b"}])
        {'x': tensor([1.5000, 2.5000], dtype=coretorch.float64), 'name': ['a', 'b']}
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        if get_worker_info() is not None and _stacks_into_shared_memory(elem, batch):
            # in a worker the batch goes straight to shared memory: the main process maps it
            out = empty_shared((len(batch),) + tuple(elem.shape), elem.dtype)
            return aten.cat([b.unsqueeze(0) for b in batch], 0, out=out)
        return aten.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(list(batch), dtype=_dt.bool)
    if isinstance(elem, float):
        return tensor(list(batch), dtype=_dt.float64)
    if isinstance(elem, int):
        return tensor(list(batch), dtype=_dt.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            # its own type
            return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})  # type: ignore[call-arg]
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            # its own type
            return type(elem)([default_collate(samples) for samples in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))
