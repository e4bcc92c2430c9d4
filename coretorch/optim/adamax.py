"""Adamax (PyTorch's single-tensor update rule, step for step)."""

from __future__ import annotations

from ..ops import aten
from ._per_param import PerParameterOptimizer, check_adam_args, lazy_state, weight_decayed
from .optimizer import reject_differentiable

__all__ = ["Adamax"]


class Adamax(PerParameterOptimizer):
    """Adamax, Adam's infinity-norm variant (Kingma & Ba, section 7): m = lerp(m, g, 1 - β1);
    u = max(β2 u, |g| + eps); p -= lr / (1 - β1^t) * m / u."""

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        reject_differentiable("Adamax", differentiable)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        beta1, beta2 = group["betas"]
        state = lazy_state(self, p, ("exp_avg", "exp_inf"))
        step_t = state["step"]
        step_t.add_(1)
        grad = weight_decayed(p, grad, group)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        aten.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"]), out=exp_inf)
        clr = group["lr"] / (1 - beta1 ** step_t.item())
        p.addcdiv_(exp_avg, exp_inf, value=-clr)
