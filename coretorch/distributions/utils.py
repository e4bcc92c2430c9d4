"""Helpers shared by the distributions (mirror ``torch.distributions.utils``)."""

from __future__ import annotations

import numbers
from functools import update_wrapper
from operator import attrgetter
from typing import Any, Callable

from .. import dtypes as _dt, get_default_dtype, tensor
from ..autograd.grad_mode import enable_grad
from ..nn import functional as F
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "euler_constant",
    "broadcast_shapes",
]

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The broadcast of `shapes` (``torch.broadcast_shapes``)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, ndim - len(shape)):
            if size != 1 and out[i] not in (1, size):
                raise RuntimeError(
                    f"Shape mismatch: objects cannot be broadcast to a single "
                    f"shape. Mismatch is between {tuple(shapes[0])} and "
                    f"{tuple(shape)}."
                )
            if size != 1:
                out[i] = size
    return tuple(out)


def sum_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `t` over the dimensions that broadcasting added to (or expanded from) `shape`."""
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    lead = t.dim() - len(shape)
    if lead:
        t = t.sum(tuple(range(lead)))
    dims = tuple(i for i, size in enumerate(shape) if size == 1 and t.shape[i] != 1)
    return t.sum(dims, keepdim=True) if dims else t


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers to one shape; numbers become tensors with the dtype and
    device of the first tensor (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or "
            "objects implementing __torch_function__."
        )
    options: dict[str, Any] = dict(dtype=get_default_dtype())
    for value in values:
        if isinstance(value, Tensor):
            options = dict(dtype=value.dtype, device=value.device)
            break
    tensors = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def standard_normal(shape, dtype, device) -> Tensor:
    """Standard normal samples of `shape` from coretorch's generator."""
    return aten.randn(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (binary: sigmoid) or unnormalized log-probabilities over the
    last dimension (softmax)."""
    if is_binary:
        return aten.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities into [eps, 1 - eps], eps the dtype's machine epsilon."""
    eps = _dt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities from probabilities (clamped away from 0 and 1)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


def extended_shape(sample_shape, batch_shape, event_shape) -> Size:
    """sample_shape + batch_shape + event_shape, as a Size."""
    return Size(tuple(sample_shape) + tuple(batch_shape) + tuple(event_shape))


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first access (with grad enabled) and then stored on the
    instance, so `probs` and `logits` are derived from each other only when asked for."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]  # a descriptor, not a function

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def forwarded_property(owner: str, name: str = "", doc: str | None = None) -> property:
    """A read-only property giving attribute `name` of the object at dotted path `owner`
    (e.g. ``"base_dist"``), or that object itself when `name` is empty: the one home for
    wrappers that show their inner distribution's (or transform's) attributes."""
    path = f"{owner}.{name}" if name else owner
    return property(attrgetter(path), doc=doc or f"``self.{path}``.")
