"""Adagrad (PyTorch's update rule, step for step)."""

from __future__ import annotations

from ..ops import aten
from ._multi_tensor import MultiTensorOptimizer, check_fused_args
from ._per_param import scalar_state, weight_decayed
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["Adagrad"]


class Adagrad(MultiTensorOptimizer):
    """Adagrad: clr = lr / (1 + (t - 1) lr_decay); sum += g²; p -= clr * g / (sqrt(sum) + eps).

    `fused` / `foreach` pick the implementation (`coretorch.optim._multi_tensor`): by default
    one ``_fused_adagrad_`` kernel per group where the backend has one."""

    _fused_op = "_fused_adagrad_"

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_non_negative(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        reject_differentiable("Adagrad", differentiable)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        check_fused_args(self, defaults)
        # PyTorch creates Adagrad's state eagerly
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = scalar_state(like=p if group["fused"] else None)
                state["sum"] = aten.full_like(p, group["initial_accumulator_value"])

    def _multi_update(self, group, params, grads, fused) -> None:
        states = [self.state[p] for p in params]
        steps = [s["step"] for s in states]
        self.run_update(
            group,
            fused,
            params,
            grads,
            [s["sum"] for s in states],
            steps,
            counters=steps,
            lr=group["lr"],
            lr_decay=group["lr_decay"],
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
        )

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        step_t = state["step"]
        step_t.add_(1)
        step = step_t.item()
        grad = weight_decayed(p, grad, group)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"].addcmul_(grad, grad, value=1)
        std = state["sum"].sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)
