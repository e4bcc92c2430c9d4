"""Gradient clipping: clip_grad_norm_ and clip_grad_value_."""

from __future__ import annotations

import math
import warnings
from typing import Iterable

from ...autograd.grad_mode import no_grad
from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
    "clip_grad_norm",
]


def _grads(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(t: Tensor, p: float) -> Tensor:
    if math.isinf(p):
        return t.abs().amax() if p > 0 else t.abs().amin()
    return t.norm(p)


def get_total_norm(
    tensors: Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """The `norm_type` norm of all `tensors` together (as if concatenated)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return aten.zeros(())
    with no_grad():
        norms = [_norm(t, norm_type) for t in tensors]
        if len(norms) == 1:
            total = norms[0]
        else:
            dev = norms[0].device
            total = _norm(aten.stack([n.to(dev) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` "
            f"is non-finite, so it cannot be clipped. To disable this error and "
            f"scale the gradients by the non-finite norm anyway, set "
            f"`error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Rescale gradients in place so that their total `norm_type` norm is at most `max_norm`;
    returns the total norm before clipping (a 0-d tensor).

    Args:
        parameters: a tensor or an iterable of tensors whose ``.grad`` is clipped (those
            without a gradient are skipped).
        max_norm: the largest total norm allowed.
        norm_type: the p of the p-norm (``inf`` for the largest absolute value).
        error_if_nonfinite: raise instead of clipping when the total norm is inf or NaN.

    Raises:
        RuntimeError: when `error_if_nonfinite` and the total norm is not finite.

    Examples:
        >>> import coretorch
        >>> from coretorch.nn.utils import clip_grad_norm_
        >>> w = coretorch.tensor([1., 2.], requires_grad=True)
        >>> w.grad = coretorch.tensor([3., 4.])
        >>> clip_grad_norm_([w], max_norm=1.0)
        tensor(5.)
        >>> w.grad
        tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Deprecated spelling of `clip_grad_norm_` (as in PyTorch, it warns)."""
    warnings.warn(
        "coretorch.nn.utils.clip_grad_norm is now deprecated in favor of "
        "coretorch.nn.utils.clip_grad_norm_.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
