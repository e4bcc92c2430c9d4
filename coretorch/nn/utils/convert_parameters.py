"""parameters_to_vector and vector_to_parameters."""

from __future__ import annotations

from typing import Iterable

from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param: Tensor, old_device):
    if old_device is not None and param.device != old_device:
        raise TypeError(
            f"Found two parameters on different devices, this is currently not "
            f"supported (got {old_device} and {param.device})"
        )
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor."""
    device = None
    vec = []
    for p in parameters:
        device = _check_same_device(p, device)
        vec.append(p.reshape(-1))
    return aten.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the matching slice of the 1-D `vec` (``param.data = ...``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if vec.dim() != 1:
        raise RuntimeError(
            f"vector_to_parameters(): expected a 1-D vector, got shape {list(vec.shape)}"
        )
    device = None
    pointer = 0
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.numel():
        raise RuntimeError(
            f"vector_to_parameters(): the vector has {vec.numel()} elements but "
            f"the parameters have {total}"
        )
    for p in params:
        device = _check_same_device(p, device)
        n = p.numel()
        p.data = vec.detach()[pointer : pointer + n].view_as(p)
        pointer += n
