"""Likelihood losses of ``nn.functional``: poisson_nll_loss and gaussian_nll_loss (PyTorch's
formulas, the Stirling term included)."""

from __future__ import annotations

import math

from ...amp.autocast_mode import autocast_function
from ...tensor.tensor import Tensor
from ._reduction import reduce_loss, resolve

__all__ = ["poisson_nll_loss", "gaussian_nll_loss"]


@autocast_function("poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of `target` under Poisson(rate): exp(x) - t x with `log_input`,
    else x - t log(x + eps); `full` adds the Stirling approximation of log(t!) for t > 1."""
    if size_average is not None or reduce is not None:
        reduction = resolve(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: "Tensor | float",
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 (log(max(var, eps)) + (input - target)² / max(var, eps)) (+ 0.5 log 2π with `full`).
    `var` may have one dimension fewer than input, or a size-1 dimension (shared variance)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full(tuple(input.shape), float(var))
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (
            input.dim() == var.dim()
            and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # the clamp changes the value only: PyTorch clamps a clone in place under no_grad
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)
