"""What the element-wise optimizers share: a step that visits every parameter with a gradient,
lazily created per-parameter state laid out as PyTorch's, and hyper-parameter checks worded as
PyTorch words them."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..ops import aten
from ..tensor.tensor import Tensor
from .optimizer import Optimizer, check_non_negative, closure_loss, step_with_hooks

__all__ = [
    "PerParameterOptimizer",
    "scalar_dtype",
    "scalar_state",
    "lazy_state",
    "check_betas",
    "check_adam_args",
    "reject_sparse_grad",
    "weight_decayed",
    "update_adam_moments",
]


def scalar_dtype(fused: bool = False) -> _dt.dtype:
    """The dtype of scalar state such as "step": float32 for ``fused=True`` groups, else float64
    under a float64 default dtype, else float32 (PyTorch's ``_get_scalar_dtype``)."""
    if fused:
        return _dt.float32
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def scalar_state(value: float = 0.0, like: Tensor | None = None) -> Tensor:
    """A 0-d scalar-state tensor: on the cpu (as PyTorch keeps it without `capturable`), or
    given the parameter `like` of a ``fused=True`` group, float32 on its device (as PyTorch)."""
    if like is None:
        return aten.full((), value, dtype=scalar_dtype())
    return aten.full((), value, dtype=scalar_dtype(True), device=like.device)


def lazy_state(
    optimizer: Optimizer,
    p: Tensor,
    zeros: tuple[str | None, ...] = (),
    fused: bool = False,
    **scalars: float,
) -> dict[str, Any]:
    """`optimizer.state[p]`, created on first use as ``{"step": 0, **scalars, **zeros_like(p)}``
    in that key order; a None entry in `zeros` is skipped (state that a flag turns off). A
    `fused` group's step lives on the parameter's device (`scalar_state`)."""
    state = optimizer.state[p]
    if len(state) == 0:
        state["step"] = scalar_state(like=p if fused else None)
        for name, value in scalars.items():
            state[name] = scalar_state(value)
        for key in zeros:
            if key is not None:
                state[key] = aten.zeros_like(p)
    return state


def check_betas(betas: tuple[float, float]) -> None:
    """Both betas in [0, 1), with PyTorch's message."""
    for i, beta in enumerate(betas[:2]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_adam_args(lr: float, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """The checks of the Adam family's constructors, in PyTorch's order and words."""
    check_non_negative(lr=lr, eps=eps)
    check_betas(betas)
    check_non_negative(weight_decay=weight_decay)


def weight_decayed(p: Tensor, grad: Tensor, group: dict[str, Any]) -> Tensor:
    """Apply the group's weight decay: decoupled (``p *= 1 - lr * weight_decay``, the gradient
    unchanged) when the group has ``decoupled_weight_decay``, else L2 (``grad + wd * p``)."""
    wd = group["weight_decay"]
    if wd == 0:
        return grad
    if group.get("decoupled_weight_decay"):
        p.mul_(1 - group["lr"] * wd)
        return grad
    return grad.add(p, alpha=wd)


def update_adam_moments(state: dict[str, Any], grad: Tensor, betas: tuple[float, float]) -> None:
    """Adam's moment estimates in place: ``exp_avg = lerp(exp_avg, g, 1 - β1)`` and
    ``exp_avg_sq = β2 exp_avg_sq + (1 - β2) g²``."""
    beta1, beta2 = betas
    state["exp_avg"].lerp_(grad, 1 - beta1)
    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def reject_sparse_grad(optimizer_name: str, grad: Tensor) -> None:
    """PyTorch's dense-only optimizers refuse sparse gradients with this message."""
    if getattr(grad, "is_sparse", False):
        raise RuntimeError(f"{optimizer_name} does not support sparse gradients")


class PerParameterOptimizer(Optimizer):
    """An optimizer whose update touches one parameter at a time: `step` evaluates the closure,
    then calls ``_update(p, grad, group)`` for each parameter with a gradient (the gradient
    already negated when the group maximizes) through ``_step_group``."""

    #: group keys that state dicts saved by older versions may lack, with their value
    _added_group_keys: dict[str, Any] = {}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in self._added_group_keys.items():
                group.setdefault(key, value)

    @step_with_hooks
    def step(self, closure=None):
        """Perform one optimization step; `closure` re-evaluates the loss (returned)."""
        loss = closure_loss(closure)
        name = type(self).__name__
        for group in self.param_groups:
            params, grads = [], []
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    reject_sparse_grad(name, g)
                    params.append(p)
                    grads.append(g)
            if params:
                self._step_group(group, params, grads)
        return loss

    def _step_group(self, group: dict[str, Any], params: list, grads: list) -> None:
        """Update the parameters of `group` that have gradients (`grads`, as stored)."""
        maximize = group["maximize"]
        for p, g in zip(params, grads):
            self._update(p, -g if maximize else g, group)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement _update()")
